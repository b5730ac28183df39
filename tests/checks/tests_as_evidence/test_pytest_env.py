"""A column's pytest environment and the caller's bytecode cache prefix: a run that writes no
bytecode must read the compiled files installed beside the packages (a prefix would hide them and
make every run compile pytest again); a tree the harness owns keeps writing to a prefix."""

from __future__ import annotations

import subprocess
import sys

from harness.checks.tests_as_evidence.pytest_run import pytest_env

PROBE = "import sys, pytest; print(sys.pycache_prefix, sys.dont_write_bytecode, pytest.__cached__)"


def _child(env: dict[str, str]) -> list[str]:
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_a_column_ignores_the_callers_prefix_and_reads_the_installed_files(monkeypatch, tmp_path):
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(tmp_path / "prefix"))
    prefix, dont_write, cached = _child(pytest_env())
    assert prefix == "None" and dont_write == "True"
    assert "__pycache__" in cached and str(tmp_path) not in cached
    # A tree the harness owns and reuses writes its bytecode, to the caller's prefix where set.
    prefix, dont_write, cached = _child(pytest_env(bytecode=True))
    assert prefix == str(tmp_path / "prefix") and dont_write == "False"
    assert cached.startswith(str(tmp_path / "prefix"))
