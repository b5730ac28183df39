from __future__ import annotations

from pathlib import Path

import pytest

from harness.testing.repos import RepoBuilder


@pytest.fixture(scope="session", autouse=True)
def _harness_dirs(tmp_path_factory: pytest.TempPathFactory):
    """Probe cache and column trees of the whole run live in its tmp dir, never in ~/.cache or the
    shared $TMPDIR/harness-<uid> (tests that need cold caches set their own per test)."""
    root = tmp_path_factory.mktemp("harness-dirs")
    mp = pytest.MonkeyPatch()
    mp.setenv("HARNESS_CACHE_DIR", str(root / "cache"))
    mp.setenv("HARNESS_WORK_DIR", str(root / "trees"))
    mp.setenv("PYTHONPYCACHEPREFIX", str(root / "pycache"))  # no bytecode next to sources (probes/)
    yield root
    mp.undo()


@pytest.fixture
def builder(tmp_path: Path) -> RepoBuilder:
    return RepoBuilder(tmp_path / "repo")


@pytest.fixture
def run_cli(capsys):
    """Run the real CLI in-process; returns (exit code, stdout, stderr)."""
    from harness.cli import main

    def _run(*argv: str) -> tuple[int, str, str]:
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse errors
            code = int(exc.code or 0)
        out, err = capsys.readouterr()
        return code, out, err

    return _run
