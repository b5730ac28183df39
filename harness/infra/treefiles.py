"""Files the harness edits inside an exported tree of the reviewed repository, never through a link.

Exported trees keep the repository's symbolic links as links (``git archive``). Before the harness
reads a file to change it, or writes one, every folder on the way must be a real folder inside the
tree and the file itself a regular file (or absent, when creating); the final open uses
``O_NOFOLLOW``. Otherwise ``TreePathError`` says why, and the caller turns it into the outcome of the
cell or section (the reviewed repository's content is data, not a usage error).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath

from harness.errors import UsageError


class TreePathError(UsageError):
    """A path in the tree the harness refuses to edit (a link, not a regular file, outside the tree)."""


def checked(tree: Path, rel: str, *, must_exist: bool = True) -> Path:
    """``tree/rel`` once every folder on the way is a real folder and the file is regular (or absent)."""
    parts = PurePosixPath(rel).parts
    if not parts or PurePosixPath(rel).is_absolute() or ".." in parts:
        raise TreePathError(f"{rel}: lies outside the tree")
    here = Path(tree)
    for i, part in enumerate(parts):
        here = here / part
        last = i == len(parts) - 1
        try:
            st = os.lstat(here)
        except FileNotFoundError:
            if must_exist or not last:
                raise TreePathError(f"{rel}: no such file in the tree") from None
            return here
        if stat.S_ISLNK(st.st_mode):
            what = rel if last else "/".join(parts[: i + 1])
            raise TreePathError(
                f"{rel}: {what} is a symbolic link in the reviewed tree; "
                "the harness does not edit through it"
            )
        if not last and not stat.S_ISDIR(st.st_mode):
            raise TreePathError(f"{rel}: {'/'.join(parts[: i + 1])} is not a folder")
        if last and not stat.S_ISREG(st.st_mode):
            raise TreePathError(f"{rel}: not a regular file")
    return here


def read(tree: Path, rel: str, limit: int | None = None) -> bytes:
    """Bytes of a regular file in the tree (no link followed); with ``limit``, at most ``limit + 1``
    of them, so a caller sees that a file is over its limit without reading it whole."""
    path = checked(tree, rel)
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as fh:
        return fh.read() if limit is None else fh.read(limit + 1)


def read_if_present(tree: Path, rel: str) -> bytes | None:
    """Like ``read``, but None when the file is absent."""
    path = checked(tree, rel, must_exist=False)
    return read(tree, rel) if os.path.lexists(path) else None


def write(tree: Path, rel: str, data: bytes) -> None:
    """Replace (or create) a regular file in the tree without following a link."""
    path = checked(tree, rel, must_exist=False)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
