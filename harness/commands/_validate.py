"""Checks every verb's arguments get before any work starts (a ``UsageError``: one line, exit 2).

Generic by attribute name, so a new verb that reuses an option name is covered: ``output`` (a file),
``output_dir`` and the old spellings of compare's ``--output`` / demo's ``--dir`` (folders), ``python``,
``timeout``, ``jobs``, ``max_children``, ``vocab``, ``marker`` (a ``pytest -m`` expression), and
repository-relative paths (``file``, ``under``, ``workflow``, ``source_path``, the PATH of
``--replace``/``--liveness``). Refs are checked by the commands themselves (``GitRepo.resolve``).
"""

from __future__ import annotations

import argparse
import math
import os
import stat
from pathlib import Path, PurePosixPath

from harness.errors import UsageError
from harness.infra.atomic import create_unique

FOLDER_OUTPUT = frozenset({"compare", "demo"})


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _writable_dir(path: Path, what: str) -> None:
    """``path`` is an existing folder the harness can create a file in (tried, then removed)."""
    if not path.is_dir():
        raise UsageError(
            f"{what}: {path} is not a directory"
            if path.exists()
            else f"{what}: directory {path} does not exist"
        )
    try:
        fd, probe = create_unique(path, ".harness-probe-")
    except OSError as exc:
        raise UsageError(f"{what}: cannot write in {path} ({exc.strerror})") from None
    os.close(fd)
    os.unlink(probe)


def _lexists(path: Path, what: str) -> bool:
    """Whether ``path`` exists (a link counts); a name too long, a loop or no permission on the way
    is a usage error (``Path.exists`` raises for those)."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        raise UsageError(f"{what}: {exc.strerror}") from None
    return True


NAME_MAX, PATH_MAX = 255, 4096  # Linux's limits on one name and a whole path, in bytes


def _check_lengths(path: Path, what: str) -> None:
    """Refuse a path the system cannot create: a name over NAME_MAX bytes or a path over PATH_MAX
    (found up front: a missing parent would hide it from ``lstat`` until the report is written)."""
    whole = os.fsencode(os.path.abspath(path))
    if len(whole) >= PATH_MAX:
        raise UsageError(f"{what}: the path is over {PATH_MAX - 1} bytes")
    if any(len(part) > NAME_MAX for part in whole.split(b"/")):
        raise UsageError(f"{what}: a name in the path is over {NAME_MAX} bytes")


def _nearest_existing(path: Path, what: str) -> Path:
    while not _lexists(path, what) and path != path.parent:
        path = path.parent
    return path


def _short(value: str, n: int = 120) -> str:
    """A path as an error line shows it: at most ``n`` characters (a 5000-character one is cut)."""
    return (
        value if len(value) <= n else f"{value[: n // 2]}…{value[-n // 2 :]} ({len(value)} chars)"
    )


def _outside_work_area(path: Path, what: str) -> None:
    """Reports never go into the harness's own work area: its run folders are removed by the next
    run, its trees reused."""
    from harness.infra.workarea import work_area

    area = work_area().absolute().resolve()
    where = path.absolute().resolve()
    if where == area or area in where.parents:
        raise UsageError(
            f"{what}: inside the harness's work area {area} (its folders are removed and "
            "reused); choose a place outside it"
        )


def check_output_file(value: str, what: str = "--output") -> None:
    """A report file: absent or a regular file, in a folder we can write (``out/`` names a folder)."""
    path = Path(value)
    _outside_work_area(path, f"{what} {_short(value)}")
    if value.endswith(("/", os.sep)):
        raise UsageError(f"{what} {value}: names a folder (a report file is expected)")
    _check_lengths(path, f"{what} {_short(value)}")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise UsageError(f"{what} {value}: {exc.strerror}") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{what} {value}: is a directory (a report file is expected)")
    if st is not None and not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
        raise UsageError(f"{what} {value}: is not a regular file")
    _writable_dir(path.absolute().parent, f"{what} {value}")


REPORT_FILES = (
    "report.md",
    "report.json",
    "report.html",
    "report.junit.xml",
    "report.sarif",
    "comment.md",
)


def check_output_dir(value: str, what: str = "--output", files: tuple[str, ...] = ()) -> None:
    """A report folder: an existing folder we can write in (where each of ``files`` that exists is a
    regular file, not a folder or a link), or one we can create."""
    path = Path(value)
    _outside_work_area(path, f"{what} {_short(value)}")
    _check_lengths(path, f"{what} {_short(value)}")
    if _lexists(path, f"{what} {_short(value)}"):
        if not path.is_dir():
            raise UsageError(f"{what} {value}: exists and is not a directory")
        _writable_dir(path, f"{what} {value}")
        for name in files:
            f = path / name
            if os.path.lexists(f) and (f.is_symlink() or not f.is_file()):
                raise UsageError(f"{what} {value}: {name} there is not a regular file")
        return
    base = _nearest_existing(path.absolute().parent, f"{what} {_short(value)}")
    _writable_dir(base, f"{what} {value}")


_REPORT_SUFFIXES = (".json", ".md", ".html", ".htm", ".xml", ".sarif", ".txt")


def _refuse_report_file(value: str) -> None:
    """The old ``--output`` of a folder verb names a folder; a name like ``report.json`` that is not
    an existing folder was meant as one file (it would silently become a folder of six)."""
    if value.lower().endswith(_REPORT_SUFFIXES) and not Path(value).is_dir():
        raise UsageError(
            f"--output {value}: this verb writes a folder of reports (report.md, report.json, ...); "
            "name the folder with --output-dir DIR, or print one format with --format"
        )


def check_python(value: str, what: str = "--python") -> None:
    """An interpreter that exists and can be executed."""
    import shutil

    found = (
        shutil.which(value) if os.sep not in value else (value if os.path.isfile(value) else None)
    )
    if not found:
        raise UsageError(f"{what} {value}: no such interpreter")
    if not os.access(found, os.X_OK):
        raise UsageError(f"{what} {value}: not executable")


def check_positive(value: float, what: str) -> None:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise UsageError(f"{what} must be a positive number, got {value!r}")


def check_repo_path(value: str, what: str) -> None:
    """A path inside the repository: relative, no ``..``, no NUL."""
    if not value or "\0" in value:
        raise UsageError(f"{what} {value!r}: not a path")
    posix = PurePosixPath(value.replace(os.sep, "/"))
    if posix.is_absolute() or ".." in posix.parts:
        raise UsageError(
            f"{what} {value}: must be a path inside the repository (relative, no '..')"
        )


_REPO_PATHS = ("under", "workflow", "source_path")


def validate(verb: str, args: argparse.Namespace) -> None:
    """Refuse bad arguments of ``verb`` before any work (nothing is written)."""
    output = getattr(args, "output", None)
    if output:
        if verb in FOLDER_OUTPUT:
            check_output_dir(output, files=REPORT_FILES if verb == "compare" else ())
        else:
            check_output_file(output)
    for name, flag in (
        ("output_dir", "--output-dir"),
        ("output_old", "--output"),
        ("dir_old", "--dir"),
    ):
        folder = getattr(args, name, None)
        if folder:
            if name == "output_old":
                _refuse_report_file(folder)
            check_output_dir(folder, flag, files=REPORT_FILES if verb == "compare" else ())
    python = getattr(args, "python", None)
    if python:
        check_python(python)
        if os.sep in python:  # a path: runs start in other folders (trees, ``/``)
            args.python = os.path.abspath(python)
    for name in ("timeout", "jobs", "max_children", "vocab"):
        value = getattr(args, name, None)
        if value is not None:
            check_positive(value, _flag(name))
    marker = getattr(args, "marker", None)
    if marker:
        from harness.checks.lanes.lane_expr import expression_error

        why = expression_error(marker)
        if why:
            raise UsageError(f"-m {marker!r}: invalid marker expression: {why}")
    for name in _REPO_PATHS:
        value = getattr(args, name, None)
        for v in [value] if isinstance(value, str) else value or []:
            check_repo_path(v, _flag(name))
    file_arg = getattr(args, "file", None)
    for v in [file_arg] if isinstance(file_arg, str) else file_arg or []:
        check_repo_path(v, "FILE" if verb == "pin" else "--file")
    for name in ("replace", "liveness"):
        for triple in getattr(args, name, None) or []:
            check_repo_path(triple[0], _flag(name))
