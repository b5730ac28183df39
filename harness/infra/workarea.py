"""The per-user private work area and the run folder that holds every temporary folder of a run.

The work area is ``HARNESS_WORK_DIR`` (default ``$TMPDIR/harness-<uid>``); the cache is
``HARNESS_CACHE_DIR`` (default ``$XDG_CACHE_HOME/harness``). Both are created 0700 and refused (a
``UsageError``: exit 2) when they exist but are a symlink, not a directory, not owned by the user, or
group/world-writable — as ssh and pip do: a folder another local user planted is never trusted.

Each run gets ``<work>/runs/<pid>-<n>/`` and holds an ``flock`` on ``<work>/runs/<pid>-<n>.lock``; the
kernel drops the lock when the process dies, however it dies, so the next run (any verb) removes the
folders of runs whose lock is free.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import fcntl
import itertools
import os
import stat
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from harness.errors import UsageError
from harness.infra.atomic import create_unique
from harness.infra.removal import remove_tree

_state: dict[str, object] = {}
_lock = threading.Lock()
_counter = itertools.count()


def work_area() -> Path:
    """Where trees, run folders and bytecode caches live (not checked; see ``ensure_private``)."""
    env = os.environ.get("HARNESS_WORK_DIR")
    if env:
        return Path(env)
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    return Path(temp_root()) / f"harness-{uid}"


def temp_root() -> str:
    """``tempfile.gettempdir()``: the first of ``$TMPDIR``, ``$TEMP``, ``$TMP``, ``/tmp``,
    ``/var/tmp``, ``/usr/tmp`` and the current folder where a file can be created, found once per
    process. ``tempfile`` (with the ``shutil``, ``random`` and compression modules it brings,
    ~3 ms) is asked where it is loaded, since it may have been told another answer
    (``tempfile.tempdir``); it is told the one found here, so that a process has one answer."""
    found = _state.get("temp_root")
    if "tempfile" in sys.modules:
        import tempfile  # (waits where another thread is still importing it)

        if isinstance(found, str) and tempfile.tempdir is None:
            tempfile.tempdir = found
        return str(tempfile.gettempdir())
    if isinstance(found, str):
        return found
    names = [os.environ.get(n) for n in ("TMPDIR", "TEMP", "TMP")]
    candidates = [n for n in names if n] + ["/tmp", "/var/tmp", "/usr/tmp"]
    try:
        candidates.append(os.getcwd())
    except OSError:
        candidates.append(os.curdir)
    for folder in candidates:
        folder = folder if folder == os.curdir else os.path.abspath(folder)
        if _writable(folder):
            _state["temp_root"] = folder
            return folder
    raise FileNotFoundError(errno.ENOENT, f"No usable temporary directory found in {candidates}")


def _writable(folder: str) -> bool:
    """``tempfile``'s probe: a new file created, written and removed in ``folder`` (any error:
    not this folder)."""
    try:
        fd, probe = create_unique(folder, ".harness-")
        try:
            try:
                os.write(fd, b"blat")
            finally:
                os.close(fd)
        finally:
            os.unlink(probe)
    except OSError:
        return False
    return True


def user_cache_home() -> Path:
    """``$XDG_CACHE_HOME`` where it is an absolute path (the spec ignores a relative one), else
    ``~/.cache``; absolute either way (runs and environments are used from other folders)."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return Path(xdg) if os.path.isabs(xdg) else (Path.home() / ".cache").absolute()


def cache_area() -> Path:
    """Where the content-keyed probe cache lives (absolute: an interpreter built there is run
    from trees and from ``/``)."""
    env = os.environ.get("HARNESS_CACHE_DIR")
    if env:
        return Path(env).expanduser().absolute()
    return user_cache_home() / "harness"


def ensure_private(path: Path, what: str = "work area") -> Path:
    """Create ``path`` 0700 (parents as usual), or check that the existing one is ours and private."""
    path = Path(path)
    try:
        os.makedirs(path.parent, exist_ok=True)
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise UsageError(f"{what} {path}: cannot create it ({exc.strerror})") from None
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise UsageError(f"{what} {path}: {exc.strerror}") from None
    if stat.S_ISLNK(st.st_mode):
        raise UsageError(f"{what} {path} is a symbolic link; refusing to use it (remove it)")
    if not stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{what} {path} is not a directory; refusing to use it (remove it)")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise UsageError(
            f"{what} {path} is owned by uid {st.st_uid}, not you; refusing to use it "
            f"(remove it or set HARNESS_WORK_DIR / HARNESS_CACHE_DIR)"
        )
    if st.st_mode & 0o022:
        raise UsageError(
            f"{what} {path} is group- or world-writable (mode {stat.S_IMODE(st.st_mode):o}); "
            f"refusing to use it (chmod 700 it)"
        )
    return path


def _refuse_inside(area: Path, entry: Path, st: os.stat_result, what: str) -> None:
    """Refuse ``entry`` (inside ``area``) when it is a link or another user's. (A folder others could
    write is harmless here: the area itself is 0700, so nobody else reaches it.)"""
    where = f"{what} {area}: {entry}"
    if stat.S_ISLNK(st.st_mode):
        raise UsageError(
            f"{where} is a symbolic link; refusing to use the {what} "
            "(nothing inside it may be a link; remove it)"
        )
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise UsageError(
            f"{where} is owned by uid {st.st_uid}, not you; refusing to use the {what} (remove it)"
        )


def check_inside(area: Path, what: str, depth: int) -> None:
    """Refuse a work area or cache whose folders (``depth`` levels down) include a symbolic link or
    an entry another user owns: the harness deletes, reuses and executes what it finds there, and
    must never do so through a link or in another user's folder."""
    level = [area]
    for _ in range(depth):
        below: list[Path] = []
        for folder in level:
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in sorted(entries, key=lambda e: e.name):
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                _refuse_inside(area, Path(entry.path), st, what)
                if stat.S_ISDIR(st.st_mode):
                    below.append(Path(entry.path))
        level = below


def _inner(name: str) -> Path:
    """``<work area>/<name>``, refused when it exists and is a link, another user's or not a folder."""
    area = ensure_private(work_area(), "work area")
    path = area / name
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return path
    except OSError as exc:
        raise UsageError(f"work area {area}: {path}: {exc.strerror}") from None
    _refuse_inside(area, path, st, "work area")
    if not stat.S_ISDIR(st.st_mode):
        raise UsageError(
            f"work area {area}: {path} is not a directory; refusing to use it (remove it)"
        )
    return path


def check_outside(owns: Callable[[Path], bool]) -> None:
    """Refuse a work area or cache inside the repository under review (``owns``: whether a path
    lies in its work tree or git folders): trees, run folders and cache entries would be written
    into the repository, and the repository's content could plant them."""
    for what, env, path in (
        ("work area", "HARNESS_WORK_DIR", work_area()),
        ("cache directory", "HARNESS_CACHE_DIR", cache_area()),
    ):
        if owns(path):
            raise UsageError(
                f"{what} {path} lies inside the repository under review; refusing to use it "
                f"(set {env} to a folder outside it)"
            )


def check_areas() -> None:
    """Refuse a planted or shared work area or cache before any work starts (the areas themselves and
    the folders in them); then remove what killed runs left."""
    area = ensure_private(work_area(), "work area")
    check_inside(area, "work area", 2)
    usable_cache()
    clean_runs(_inner("runs"))
    trees = _inner("trees")
    if trees.is_dir():
        from harness.infra.stale_trees import clean_stale

        clean_stale(trees)


def usable_cache() -> Path:
    """The cache folder, checked private (a link, another user's, too open, or holding a link two
    levels down is refused). A refused cache is never read or written: the run keeps what it
    computes in a cache of its own inside its run folder (removed at its end), said once on
    stderr — the answer is the same, only the next run is not faster."""
    refused = _state.get("cache_refused")  # (the refused folder, this run's own)
    if isinstance(refused, tuple) and refused[0] == cache_area() and refused[1].is_dir():
        return Path(refused[1])
    try:
        cache = ensure_private(cache_area(), "cache directory")
        check_inside(cache, "cache directory", 2)
        return cache
    except UsageError as exc:
        private = run_dir() / "cache"
        private.mkdir(mode=0o700, exist_ok=True)
        _state["cache_refused"] = (cache_area(), private)
        sys.stderr.write(f"harness: {exc}: this run reads and keeps no cache\n")
        return private


def trees_root() -> Path:
    return _inner("trees")


def worker_root() -> Path:
    """Where an executor's tasks keep their temporary trees on the machine they run on: the work
    area's ``worker/`` there, private and checked like the rest of it."""
    return ensure_private(_inner("worker"), "work area")


def parsers_root() -> Path:
    """Where parser tables built once are kept (``checks/lanes/bashlex_tables.py``)."""
    return _inner("parsers")


def _free(lock: Path) -> bool:
    """True when no live process holds ``lock`` (its run died or finished)."""
    try:
        fd = os.open(lock, os.O_RDWR | os.O_NOFOLLOW)
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def clean_runs(runs: Path) -> list[str]:
    """Remove the run folders whose owner no longer holds its lock; returns their names."""
    removed: list[str] = []
    if not runs.is_dir():
        return removed
    mine = _state.get("dir")
    if runs.is_symlink():
        return removed  # never delete through a link (check_areas refuses it before this)
    for entry in sorted(runs.iterdir()):
        if entry.suffix == ".lock" or entry == mine or entry.is_symlink():
            continue
        lock = runs / f"{entry.name}.lock"
        if _free(lock):
            remove_tree(entry)
            lock.unlink(missing_ok=True)
            removed.append(entry.name)
    for lock in sorted(runs.glob("*.lock")):
        if not (runs / lock.stem).exists() and _free(lock):
            lock.unlink(missing_ok=True)
    return removed


def run_dir() -> Path:
    """This process's run folder (created on first use, with what dead runs left removed first)."""
    with _lock:
        runs = _inner("runs")
        existing = _state.get("dir")
        if isinstance(existing, Path) and existing.is_dir() and existing.parent == runs:
            return existing
        if existing is not None:  # the work area changed (in-process callers): finish the old run
            _finish()
        runs.mkdir(mode=0o700, exist_ok=True)
        clean_runs(runs)
        name = f"{os.getpid()}-{next(_counter)}"
        lock_path = runs / f"{name}.lock"
        fh: IO[str] = open(os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600), "w")
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        fh.write(str(os.getpid()))
        fh.flush()
        path = runs / name
        path.mkdir(mode=0o700)
        _state.update({"dir": path, "lock": fh, "lock_path": lock_path})
        if not _state.get("atexit"):
            atexit.register(end_run)
            _state["atexit"] = True
        return path


def end_run() -> None:
    """Remove this process's run folder and release its lock (a no-op when none was made)."""
    with _lock:
        _finish()


def _finish() -> None:
    path, fh, lock_path = (
        _state.pop("dir", None),
        _state.pop("lock", None),
        _state.pop("lock_path", None),
    )
    if isinstance(path, Path):
        remove_tree(path)
    if isinstance(lock_path, Path):
        lock_path.unlink(missing_ok=True)
    if fh is not None:
        fh.close()  # type: ignore[attr-defined]


def mkdtemp(prefix: str) -> Path:
    """A fresh temporary folder inside this run's folder."""
    import tempfile

    return Path(tempfile.mkdtemp(prefix=prefix, dir=str(run_dir())))


@contextlib.contextmanager
def temp_dir(prefix: str) -> Iterator[str]:
    """Like ``tempfile.TemporaryDirectory`` but inside the run folder."""
    path = mkdtemp(prefix)
    try:
        yield str(path)
    finally:
        remove_tree(path)
