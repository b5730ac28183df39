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
