"""Files that take a git process's output (``capture_file``) and give it back (``read_file``):
git never waits on a pipe's reader, and this process is not woken for every few KiB it writes."""

from __future__ import annotations

import os


def capture_file() -> int:
    """A file (descriptor) for a git process's stdout, read back by ``read_file`` once it exits.
    A pipe wakes this process for every few KiB git writes while it runs (a 3 MB log of a
    20k-commit history: ~0.1 CPU-s of Python against ~0.01 for the file); unnamed, in memory
    where the platform has it."""
    if hasattr(os, "memfd_create"):
        try:
            return os.memfd_create("harness-git", os.MFD_CLOEXEC)
        except OSError:  # a kernel without it (or a sandbox that refuses it): a file on disk
            pass
    import tempfile

    from harness.infra.workarea import run_dir

    # In this run's private folder (0700, removed at the run's end and by the next run after a
    # kill), unlinked at once: the repository's text never sits in a shared temporary folder.
    fd, path = tempfile.mkstemp(prefix="git-out-", dir=str(run_dir()))
    os.unlink(path)
    return fd


def read_file(fd: int) -> bytes:
    """Everything written to ``fd`` (a ``capture_file``), from its start."""
    size, at = os.fstat(fd).st_size, 0
    parts: list[bytes] = []
    os.lseek(fd, 0, os.SEEK_SET)
    while True:
        part = os.read(fd, max(size - at, 1 << 16))
        if not part:
            return b"".join(parts)
        parts.append(part)
        at += len(part)
