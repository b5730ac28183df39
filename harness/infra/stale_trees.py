"""Trees that killed or idle runs left under the harness-owned root (``<work area>/trees``): found
and removed before a run starts. Kept apart from harness/columns/trees.py so that the start-up check
(harness/infra/workarea.py ``check_areas``) does not import the tree machinery."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from harness.infra.removal import remove_tree

STALE_SECONDS = 3 * 24 * 3600
EMPTY_LOCK_SECONDS = 10.0
_OWNED = re.compile(r"^[0-9a-f]{24}(\.tmp-\d+-\d+|-p\d+-\d+|\.lock|\.json)?$")


def alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (one owned by another user counts as running)."""
    if pid <= 0:  # no process: os.kill would signal a process group (0) or every process (-1)
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _pid_in(name: str) -> int | None:
    """pid encoded in ``<key>.tmp-<pid>-<n>`` / ``<key>-p<pid>-<n>`` names."""
    for marker in (".tmp-", "-p"):
        if marker in name:
            try:
                return int(name.rsplit(marker, 1)[1].split("-")[0])
            except ValueError:
                return None
    return None


def read_pid(lock: Path) -> int | None:
    try:
        return int(lock.read_text().strip() or "0")
    except (OSError, ValueError):
        return None


def owner_gone(lock: Path, now: float | None = None) -> bool:
    """Whether the run that holds ``lock`` is gone: its pid is unreadable or dead, or the lock was
    left empty (a run killed between creating it and writing its pid) for over EMPTY_LOCK_SECONDS
    (a live run writes its pid right after creating it)."""
    pid = read_pid(lock)
    if pid == 0:
        try:
            age = (now if now is not None else time.time()) - lock.stat().st_mtime
        except OSError:
            return True
        return age > EMPTY_LOCK_SECONDS
    return pid is None or not alive(pid)


def clean_stale(root: Path, *, now: float | None = None) -> list[str]:
    """Remove what killed runs left behind, and trees unused for STALE_SECONDS; returns removed names."""
    removed: list[str] = []
    if not root.is_dir() or root.is_symlink():
        return removed  # never delete through a link (check_areas refuses it before this)
    now = now if now is not None else time.time()
    for entry in sorted(root.iterdir()):
        name = entry.name
        if not _OWNED.match(name) or entry.is_symlink():
            continue  # never touch what the harness did not create, nor follow a link
        if name.endswith(".lock"):
            if owner_gone(entry, now):
                key = name[: -len(".lock")]
                remove_tree(root / key)
                (root / f"{key}.json").unlink(missing_ok=True)
                entry.unlink(missing_ok=True)
                removed.append(key)
        elif entry.is_dir() and (".tmp-" in name or "-p" in name):
            pid = _pid_in(name)
            if pid is None or not alive(pid):
                remove_tree(entry)
                removed.append(name)
        elif (
            entry.is_dir()
            and not (root / f"{name}.lock").exists()
            and not (root / f"{name}.json").exists()
        ):
            remove_tree(entry)  # orphan: its record went missing
            removed.append(name)
        elif name.endswith(".json") and not (root / (name[:-5] + ".lock")).exists():
            if now - entry.stat().st_mtime > STALE_SECONDS:
                remove_tree(root / name[:-5])
                entry.unlink(missing_ok=True)
                removed.append(name[:-5])
    return removed
