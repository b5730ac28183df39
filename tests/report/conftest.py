from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`harness demo` run once (a real repository and a real compare) for the report tests to read."""
    from harness.cli import main

    root = tmp_path_factory.mktemp("demo") / "d"
    assert main(["demo", "--output-dir", str(root), "--format", "none"]) == 0
    return root
