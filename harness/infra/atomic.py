"""One way to write a file so that a killed run never leaves half of it: a temporary file in the
same folder, then a rename over the target."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


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
    fd, tmp = tempfile.mkstemp(prefix=prefix, dir=str(path.parent))
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
