"""A lock left empty by a killed run is cleaned once it is old; a fresh one belongs to a live run."""

from __future__ import annotations

import os
import time
from pathlib import Path

from harness.infra.stale_trees import EMPTY_LOCK_SECONDS, alive, clean_stale, owner_gone

KEY = "0123456789abcdef01234567"


def _tree(root: Path, lock_text: str, age: float) -> Path:
    (root / KEY).mkdir()
    (root / KEY / "f.txt").write_text("x\n")
    lock = root / f"{KEY}.lock"
    lock.write_text(lock_text)
    then = time.time() - age
    os.utime(lock, (then, then))
    return lock


def test_no_pid_is_alive() -> None:
    assert not alive(0) and not alive(-1)
    assert alive(os.getpid())


def test_an_old_empty_lock_is_cleaned(tmp_path: Path) -> None:
    lock = _tree(tmp_path, "", EMPTY_LOCK_SECONDS + 50)
    assert owner_gone(lock)
    assert clean_stale(tmp_path) == [KEY]
    assert not lock.exists() and not (tmp_path / KEY).exists()


def test_a_fresh_empty_lock_and_a_live_pid_are_kept(tmp_path: Path) -> None:
    lock = _tree(tmp_path, "", 0)
    assert not owner_gone(lock)
    assert clean_stale(tmp_path) == []
    lock.write_text(str(os.getpid()))
    os.utime(lock, (time.time() - 3600, time.time() - 3600))
    assert clean_stale(tmp_path) == [] and (tmp_path / KEY / "f.txt").exists()
