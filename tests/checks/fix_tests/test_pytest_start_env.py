"""The zygote a tests section starts ahead is one its pytest runs can use: the runner's start-up
environment is what its runs' environments hold at start-up."""

from __future__ import annotations

import sys
from pathlib import Path

from harness.checks.fix_tests.runners import pytest_runner
from harness.checks.fix_tests.runners.base import RunContext
from harness.infra import zygote


def test_a_run_starts_with_the_environment_the_section_prestarts_for(tmp_path: Path) -> None:
    extra = {"PYTHONHASHSEED": "0", "HARNESS_PRETEND": "1.2"}  # as a column's options may add
    ctx = RunContext(sys.executable, 30.0, (), (), tmp_path / "cell", dict(extra))
    tree = tmp_path / "tree"
    (tree / "src").mkdir(parents=True)
    run_env = pytest_runner._env(tree, ctx, tmp_path / "out.json", ["pkg/mod.py"])
    ahead = pytest_runner.start_env(extra)
    assert zygote._start_vars(run_env) == zygote._start_vars(ahead)
    assert dict(zygote._start_vars(ahead))["PYTHONDONTWRITEBYTECODE"] == "1"
    # what differs is the run's own: its tree on the path, its home and files
    assert run_env["PYTHONPATH"] != ahead["PYTHONPATH"] and str(tree) in run_env["PYTHONPATH"]
    assert run_env["HOME"].startswith(str(tmp_path)) and "HARNESS_OUTCOMES_OUT" not in ahead
