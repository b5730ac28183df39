"""Removing a folder the harness made (a run folder, a stale tree): ``shutil.rmtree`` ignoring
errors, with ``shutil`` (and the compression modules it brings, ~3 ms) imported only where a run
removes one, not at every start."""

from __future__ import annotations

import os


def remove_tree(path: str | os.PathLike[str]) -> None:
    """``shutil.rmtree(path, ignore_errors=True)``."""
    import shutil

    shutil.rmtree(path, ignore_errors=True)
