"""What the cache holds, part by part, and its upkeep (``harness cache info|list|clear|gc``).

Parts: the history index (``<cache>/history``: one folder per repository), section results (the
content-keyed namespaces of ``harness/infra/cache.py``), column trees (``<work area>/trees``) and
environments (``<cache>/envs``, the tests section's; ``harness engine``'s store where it lies in
the cache). Nothing here follows a link: the cache and work area are checked before any verb runs
(``workarea.check_areas``), and only regular files and real folders are removed.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.infra import history_index as hi
from harness.infra import workarea
from harness.infra.digest import opened

NAMESPACES = ("sections", "probes", "collections", "mutations", "interpreters")
GC_AGE_DAYS = 30  # a content-keyed entry written longer ago goes at gc (recomputed when needed)
TMP_AGE_S = 3600  # a temporary file older than this is a killed run's


@dataclass
class Part:
    """One part of the cache: where, how much, and what bounds it."""

    name: str
    paths: list[str]
    files: int = 0
    bytes: int = 0
    bound: str = ""


@dataclass
class Kept:
    """One repository's history index."""

    key: str
    repository: str  # the git folder it describes ("?" where no file says)
    exists: bool
    files: int
    bytes: int
    answers: int
    last_used: str  # UTC, the newest file's time


@dataclass
class Removed:
    """What ``clear`` or ``gc`` removed, by part."""

    parts: dict[str, list[int]] = field(default_factory=dict)  # part → [files, bytes]

    def add(self, part: str, files: int, size: int) -> None:
        got = self.parts.setdefault(part, [0, 0])
        got[0] += files
        got[1] += size


def _usage(path: Path) -> tuple[int, int]:
    """Regular files under ``path`` and their bytes (links not followed)."""
    files = size = 0
    stack = [path]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for e in entries:
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                stack.append(Path(e.path))
            elif stat.S_ISREG(st.st_mode):
                files += 1
                size += st.st_size
    return files, size


def _engine_root(cache: Path) -> Path | None:
    """``harness engine``'s store where it lies inside the cache (else it is its own)."""
    env = os.environ.get("HARNESS_ENGINE_DIR")
    root = Path(env).expanduser() if env else workarea.user_cache_home() / "harness" / "engines"
    try:
        return root if root.resolve().is_relative_to(cache.resolve()) else None
    except OSError:
        return None


def parts(cache: Path, work: Path) -> list[Part]:
    """Every part with its size and bound."""
    history = Part(
        "history index",
        [str(cache / "history")],
        bound=(
            f"per repository: {hi.MAX_COMMITS} commits, {hi.MAX_DIFF_BYTES >> 20} MiB of diffs in "
            f"{hi.MAX_PACKS} packs, {hi.MAX_RESULTS} whole answers, {hi.MAX_MEMO} memo entries "
            "per kind; the least recently used go first"
        ),
    )
    sections = Part(
        "section results",
        [str(cache / n) for n in NAMESPACES],
        bound=f"one small file per content key; gc removes those written over {GC_AGE_DAYS} days ago",
    )
    trees = Part(
        "column trees",
        [str(work / "trees")],
        bound="a tree idle for 3 days is removed when a run starts",
    )
    envs = [cache / "envs"]
    engines = _engine_root(cache)
    if engines is not None:
        envs.append(engines)
    environments = Part(
        "environments",
        [str(p) for p in envs],
        bound=(
            "one per key (what they install); gc removes the tests section's unused for "
            f"{GC_AGE_DAYS} days and half-built ones; engines only with clear"
        ),
    )
    out = [history, sections, trees, environments]
    for part in out:
        for p in part.paths:
            files, size = _usage(Path(p))
            part.files += files
            part.bytes += size
    return out


GC_REMOVES = (
    "history indexes of repositories that are gone or that another harness version wrote; "
    "kept files that do not match their digest; temporary files of killed runs (over an hour "
    f"old); section results written over {GC_AGE_DAYS} days ago; the tests section's "
    f"environments unused for {GC_AGE_DAYS} days, and half-built ones (a killed build). Column "
    "trees go when a run starts (idle 3 days), engine environments only with clear."
)


def stamp_of(folder: Path) -> list[Any] | None:
    """The stamp (format, harness code, git version, git folder) of a repository's index: from
    the first of its files that matches its digest."""
    names = ["index.json", "diffs.json", *sorted(p.name for p in folder.glob("memo-*.json"))]
    for name in names:
        try:
            raw = (folder / name).read_bytes()
        except OSError:
            continue
        if not opened(raw):
            continue
        try:
            data = json.loads(raw)
        except ValueError:
            continue
        st = data.get("stamp") if isinstance(data, dict) else None
        if isinstance(st, list) and len(st) == 4 and all(isinstance(x, str) for x in st):
            return st
    return None


def listing(cache: Path) -> list[Kept]:
    """The repositories the history index holds, most recently used first."""
    out = []
    root = cache / "history"
    for folder in sorted(root.iterdir()) if root.is_dir() else []:
        if folder.is_symlink() or not folder.is_dir():
            continue
        st = stamp_of(folder)
        files, size = _usage(folder)
        newest = max((p.stat().st_mtime for p in folder.rglob("*") if p.is_file()), default=0)
        repo = st[3] if st else "?"
        out.append(
            Kept(
                folder.name,
                repo,
                bool(st) and os.path.isdir(repo),
                files,
                size,
                len(list((folder / "results").glob("*.json"))),
                time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(newest)) if newest else "",
            )
        )
    return sorted(out, key=lambda k: k.last_used, reverse=True)


def _remove(path: Path) -> tuple[int, int]:
    """Remove a real folder or a regular file; what it held."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return 0, 0
    if stat.S_ISDIR(st.st_mode):
        held = _usage(path)
        shutil.rmtree(path, ignore_errors=True)
        return held
    if stat.S_ISREG(st.st_mode):
        path.unlink(missing_ok=True)
        return 1, st.st_size
    return 0, 0  # (a link or other thing: not this code's to remove)


def clear(cache: Path, repo_key: str | None = None) -> Removed:
    """Remove every part kept in the cache folder (history index, section results,
    environments under ``envs``), or one repository's history index."""
    removed = Removed()
    if repo_key is not None:
        removed.add("history index", *_remove(cache / "history" / repo_key))
        return removed
    removed.add("history index", *_remove(cache / "history"))
    for n in NAMESPACES:
        removed.add("section results", *_remove(cache / n))
    removed.add("environments", *_remove(cache / "envs"))
    return removed


def gc(cache: Path) -> Removed:
    """Remove what ``GC_REMOVES`` names; what the next run would keep stays."""
    from harness.infra.cache import code_digest

    removed = Removed()
    now = time.time()
    root = cache / "history"
    for folder in sorted(root.iterdir()) if root.is_dir() else []:
        if folder.is_symlink() or not folder.is_dir():
            if folder.name.startswith(".tmp-") and _old(folder, now, TMP_AGE_S):
                removed.add("history index", *_remove(folder))
            continue
        st = stamp_of(folder)
        if st is not None and (
            not os.path.isdir(st[3]) or st[0] != hi.FORMAT or st[1] != code_digest()
        ):
            removed.add("history index", *_remove(folder))
            continue
        for path in [*folder.iterdir(), *(folder / "results").glob("*")]:
            if _stale_file(path, now):
                removed.add("history index", *_remove(path))
    for n in NAMESPACES:
        for path in (cache / n).glob("*/*"):
            if _stale_file(path, now) or (
                path.suffix == ".json" and _old(path, now, GC_AGE_DAYS * 86400)
            ):
                removed.add("section results", *_remove(path))
    _gc_envs(cache / "envs", now, removed)
    return removed


def _gc_envs(root: Path, now: float, removed: Removed) -> None:
    """Test environments whose marker (touched at each use) is over GC_AGE_DAYS old, and
    folders a killed build left without one (over an hour old); the build lock of each goes too."""
    from harness.envs.build import MARKER

    for env in sorted(root.iterdir()) if root.is_dir() else []:
        if env.is_symlink() or not env.is_dir():
            continue
        marker = env / MARKER
        if (marker.is_file() and _old(marker, now, GC_AGE_DAYS * 86400)) or (
            not marker.is_file() and _old(env, now, TMP_AGE_S)
        ):
            removed.add("environments", *_remove(env))
            (root / f"{env.name}.lock").unlink(missing_ok=True)


def _old(path: Path, now: float, age: float) -> bool:
    try:
        return now - path.lstat().st_mtime > age
    except OSError:
        return False


def _stale_file(path: Path, now: float) -> bool:
    """A killed run's temporary file, or a kept JSON file that does not match its digest."""
    if path.name.startswith(".tmp-"):
        return _old(path, now, TMP_AGE_S)
    if path.suffix != ".json" or path.is_symlink() or not path.is_file():
        return False
    try:
        with open(path, "rb") as fh:
            return not opened(fh.read(hi.MAX_FILE_BYTES + 1))
    except OSError:
        return False


def as_json(value: Any) -> Any:
    """A dataclass (or a list of them) as plain JSON values."""
    if isinstance(value, list):
        return [as_json(v) for v in value]
    return asdict(value)
