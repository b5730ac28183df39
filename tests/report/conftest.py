from __future__ import annotations

from pathlib import Path

import pytest

from harness.testing.located_repo import Located, build


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`harness demo` run once (a real repository and a real compare) for the report tests to read."""
    from harness.cli import main

    root = tmp_path_factory.mktemp("demo") / "d"
    assert main(["demo", "--output-dir", str(root), "--format", "none"]) == 0
    return root


@pytest.fixture(scope="session")
def located(tmp_path_factory: pytest.TempPathFactory) -> tuple[Located, Path]:
    """A real compare of a backport whose findings have files and lines (conflict markers, a pin, a
    lane): the repository and its report folder."""
    from harness.cli import main

    root = tmp_path_factory.mktemp("located")
    built = build(root)
    out = root / "report"
    argv = ["compare", "release..backport", "--repo", str(built.repo), "--source", "main"]
    argv += ["--scenario", str(built.scenario), "--output-dir", str(out), "--format", "none"]
    assert main(argv) == 1  # the conflict markers are P1
    return built, out
