"""A small Python project with a fix on ``main`` (squash of a two-commit PR) and four backports
of it: a whole pick, a pick of the test without the fix, a pick cut after the PR's first commit,
and a whole pick that also rewords a message a test still matches; a CI workflow with one marker
lane. The tests section's tests run on it."""

from __future__ import annotations

from pathlib import Path

from harness.testing.repos import RepoBuilder

PYPROJECT = """[project]
name = "calc"
version = "1.0"
dependencies = []

[project.optional-dependencies]
test = ["pytest"]

[tool.pytest.ini_options]
testpaths = ["tests"]
"""
OPS_BUG = "def clamp(x, lo, hi):\n    return max(lo, x)\n"
OPS_C1 = "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n"
OPS_C2 = (
    "def clamp(x, lo, hi):\n"
    "    if lo > hi:\n"
    "        raise ValueError('lo > hi')\n"
    "    return max(lo, min(x, hi))\n"
)
TEST_BASE = "from calc.ops import clamp\n\n\ndef test_lo():\n    assert clamp(-5, 0, 9) == 0\n"
TEST_C1 = TEST_BASE + "\n\ndef test_hi():\n    assert clamp(50, 0, 9) == 9\n"
TEST_C2 = (
    "import pytest\n\n"
    + TEST_C1
    + "\n\ndef test_order():\n    with pytest.raises(ValueError):\n        clamp(1, 9, 0)\n"
)


MESSAGES = 'CLAMPED = "value was out of range"\n'
TEST_MESSAGES = (
    "from calc.messages import CLAMPED\n\n\n"
    "def test_message():\n"
    '    assert "value was out of range" == CLAMPED\n'
)
WORKFLOW = """name: ci
on: [push]
jobs:
  unit:
    runs-on: ubuntu-latest
    steps:
      - run: python -m pytest -m "not slow" tests
"""


def build(path: Path) -> dict[str, str]:
    """Branches: main (the squash), pr/7 (c1, c2), release/1.x, and the backports
    ``backport/whole``, ``backport/test-only`` and ``backport/partial``; returns mark → sha."""
    b = RepoBuilder(path)
    shas: dict[str, str] = {}
    shas["init"] = b.commit(
        "Initial calc",
        {
            "pyproject.toml": PYPROJECT,
            "src/calc/__init__.py": "",
            "src/calc/ops.py": OPS_BUG,
            "tests/test_ops.py": TEST_BASE,
            "src/calc/messages.py": MESSAGES,
            "tests/test_messages.py": TEST_MESSAGES,
            ".github/workflows/ci.yml": WORKFLOW,
        },
    )
    b.branch("release/1.x")
    b.branch("pr/7")
    b.checkout("pr/7")
    shas["c1"] = b.commit("Clamp to hi", {"src/calc/ops.py": OPS_C1, "tests/test_ops.py": TEST_C1})
    shas["c2"] = b.commit(
        "Refuse lo > hi", {"src/calc/ops.py": OPS_C2, "tests/test_ops.py": TEST_C2}
    )
    b.checkout("main")
    shas["main_other"] = b.commit("Add a README", {"README.md": "calc\n"})
    shas["squash"] = b.commit(
        "Fix clamp (#7)\n\n* Clamp to hi\n* Refuse lo > hi",
        {"src/calc/ops.py": OPS_C2, "tests/test_ops.py": TEST_C2},
    )
    backports: list[tuple[str, dict[str, str | bytes]]] = [
        ("whole", {"src/calc/ops.py": OPS_C2, "tests/test_ops.py": TEST_C2}),
        ("test-only", {"tests/test_ops.py": TEST_C2}),
        ("partial", {"src/calc/ops.py": OPS_C1, "tests/test_ops.py": TEST_C1}),
        (  # the whole fix, and a user-visible message reworded that a test still matches
            "rewords",
            {
                "src/calc/ops.py": OPS_C2,
                "tests/test_ops.py": TEST_C2,
                "src/calc/messages.py": MESSAGES.replace("out of range", "outside the bounds"),
            },
        ),
    ]
    for name, files in backports:
        b.checkout("release/1.x")
        b.branch(f"backport/{name}")
        b.checkout(f"backport/{name}")
        msg = "[1.x] Fix clamp (#7)"
        if name == "whole":
            msg += f"\n\n(cherry picked from commit {shas['squash']})"
        shas[name] = b.commit(msg, dict(files))
    b.checkout("main")
    return shas
