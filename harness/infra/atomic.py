"""One way to write a file so that a killed run never leaves half of it: a temporary file in the
same folder, then a rename over the target."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable
from pathlib import Path

# What ``tempfile.mkstemp`` opens with; ``tempfile`` itself is not imported (with ``shutil``,
# ``random`` and the compression modules it brings, ~5 ms of every run's start).
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
_FLAGS |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def write_atomic(
    path: str | os.PathLike[str],
    data: str | bytes | Iterable[str | bytes],
    *,
    prefix: str = ".harness-",
    shared: bool = True,
) -> None:
    """Write ``data`` (text as UTF-8; or its parts in order) to ``path`` atomically. ``shared``:
    the file gets the mode a plain ``open`` would (0666 less the umask: a report); else it stays
    private (0600: the cache)."""
    path = Path(path)
    fd, tmp = create_unique(path.parent, prefix)
    try:
        with os.fdopen(fd, "wb") as fh:
            # Parts are written one by one: a large file is never held whole, encoded, in memory.
            for part in [data] if isinstance(data, (str, bytes)) else data:
                fh.write(part.encode("utf-8") if isinstance(part, str) else part)
        if shared:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def create_unique(folder: str | os.PathLike[str], prefix: str) -> tuple[int, str]:
    """A new file (0600) in ``folder`` named ``prefix`` and random characters, opened to write:
    ``tempfile.mkstemp``'s contract (never an existing name, never through a link)."""
    for _ in range(100):
        name = os.path.join(folder, prefix + os.urandom(6).hex())
        try:
            return os.open(name, _FLAGS, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unused temporary name", str(folder))
