"""The harness started inside the repository under review (the usual working folder): the Python
children it starts itself (the end-state worker, pip, venv, ``harness compare`` from the CI
steps) must import the installed modules, never a ``harness/``, ``pip/`` or ``pickle.py`` lying in
that folder (``python -m`` puts its working folder first on ``sys.path``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from harness.infra import process

PLANT = "import pathlib; pathlib.Path({mark!r}).write_text('ran {name}')\n"


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository root holding look-alikes of what the children import; the working folder."""
    root = tmp_path / "reviewed"
    mark = tmp_path / "planted-code-ran"
    for rel, name in (
        ("harness/__init__.py", "harness"),
        ("harness/infra/__init__.py", "harness.infra"),
        ("harness/infra/offload.py", "offload"),
        ("pip/__init__.py", "pip"),
        ("pip/__main__.py", "pip main"),
        ("venv/__init__.py", "venv"),
        ("venv/__main__.py", "venv main"),
        ("pickle.py", "pickle"),
        ("json.py", "json"),
        ("queue.py", "queue"),
    ):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(PLANT.format(mark=str(mark), name=name))
    monkeypatch.chdir(root)
    return mark


def test_the_end_state_worker_imports_the_installed_harness(hostile: Path) -> None:
    from harness.infra.offload import Worker

    worker = Worker("builtins", "len")
    answers = [worker.submit("abc"), worker.submit([1, 2])]
    worker.close()
    assert [a.result(timeout=60) for a in answers] == [3, 2]
    assert worker._proc is not None and worker._proc.wait(timeout=60) == 0  # answered there
    assert not hostile.exists(), hostile.read_text()


def test_pip_is_the_installed_one(hostile: Path) -> None:
    proc = process.run(process.own_module("pip", "--version"), capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.startswith("pip "), proc.stderr
    assert not hostile.exists(), hostile.read_text()


def test_a_venv_is_made_by_the_installed_venv(hostile: Path, tmp_path: Path) -> None:
    from harness.envs.installer import Installer

    argv = Installer("pip").venv_argv(sys.executable, tmp_path / "env")
    proc = process.run(argv, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "env" / "bin" / "python").exists()
    assert not hostile.exists(), hostile.read_text()


def test_the_ci_steps_start_the_installed_harness(hostile: Path) -> None:
    argv = process.own_module("harness", "--help")
    proc = process.run(argv, capture_output=True, text=True, env={**os.environ})
    assert proc.returncode == 0 and "compare" in proc.stdout, proc.stderr
    assert not hostile.exists(), hostile.read_text()
