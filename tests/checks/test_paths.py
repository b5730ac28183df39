"""One answer to "is this a test file?" for fidelity and sweep alike."""

from __future__ import annotations

import pytest

from harness.checks.fidelity import compare as fidelity_compare
from harness.checks.paths import is_test_path
from harness.checks.tests_as_evidence import sweep_results


@pytest.mark.parametrize(
    "path",
    [
        "conftest.py",
        "tests/conftest.py",
        "pkg/conftest.py",
        "tests/test_x.py",
        "test_top.py",
        "pkg/calc_test.py",
        "src/app.test.ts",
        "testing/helpers.py",
    ],
)
def test_test_paths(path: str) -> None:
    assert is_test_path(path)


@pytest.mark.parametrize(
    "path", ["pkg/calc.py", "pkg/contest.py", "latest/x.py", "pkg/conftest.py.orig", "attest.py"]
)
def test_code_paths(path: str) -> None:
    assert not is_test_path(path)


def test_fidelity_and_sweep_use_the_same_function() -> None:
    assert fidelity_compare.is_test_path is is_test_path
    assert sweep_results.is_test_path is is_test_path
