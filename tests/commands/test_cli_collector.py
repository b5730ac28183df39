"""cli.main makes the cyclic collector's young collections rarer while a verb runs, and gives the
process its own thresholds back after it (tests and the ray executor call main in-process)."""

from __future__ import annotations

import gc

import pytest

from harness import cli
from harness.commands import _validate


@pytest.mark.parametrize("fails", [False, True])
def test_a_run_raises_the_threshold_and_restores_it(monkeypatch, tmp_path, fails):
    seen: list[tuple[int, ...]] = []

    def validate(verb, args):
        seen.append(gc.get_threshold())
        if fails:
            raise RuntimeError("a bug")

    monkeypatch.setattr(_validate, "validate", validate)
    gc.set_threshold(700, 10, 10)
    try:
        code = cli.main(["cache", "info"])
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(700, 10, 10)
    assert seen == [(cli.RUN_GC_THRESHOLD, 10, 10)]
    assert (code == 3) if fails else (code in (0, 2))


_ENDING = r"""
import atexit, gc, sys
atexit.register(lambda: print("collector", gc.isenabled(), gc.get_threshold()[0], file=sys.stderr))
sys.argv = ["harness", "cache", "info"]
from harness.cli import main
main()
"""


def test_the_command_line_s_own_process_stops_collecting_at_its_end(tmp_path) -> None:
    """The command line's own process (``main()``) does not restore the thresholds after the verb:
    restored, they would start a full collection of the run's heap as it is about to exit. The
    collector is off for its end instead (an ``atexit`` callback sees it)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run(
        [sys.executable, "-c", _ENDING], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert f"collector False {cli.RUN_GC_THRESHOLD}" in proc.stderr
