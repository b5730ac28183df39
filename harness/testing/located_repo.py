"""A backport whose findings each have a file and line: conflict markers a pick committed, a pin
that differs from the source, a CI lane whose marker expression pytest refuses.

``build(root)`` writes the repository at ``root / "repo"`` and the scenario beside it; the report
and CI-recipe tests run ``harness compare release..backport --source main`` on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.testing.repos import RepoBuilder

CI = """\
jobs:
  unit:
    runs-on: ubuntu-latest
    with:
      markers: 'not (gpu'
"""
CONFLICTED = "x = 1\n<<<<<<< HEAD\ny = 1\n=======\ny = 2\n>>>>>>> main\n"
SCENARIO = """\
pins:
  - file: deploy/engine.yaml
    key: engine.image
    refs: [base, head, source]
lanes:
  ref: head
"""

# (kind, path, line) of each place the report must name.
PLACES = {
    ("conflict-markers", "b.py", 2),
    ("conflict-markers", "b.py", 4),
    ("conflict-markers", "b.py", 6),
    ("pin-differs", "deploy/engine.yaml", 2),
    ("lane-expression", ".github/workflows/ci.yml", 5),
    ("pick-no-source", "b.py", None),
}


@dataclass(frozen=True)
class Located:
    repo: Path
    scenario: Path
    fix: str  # the source commit the first pick carries
    conflicted: str  # the pick that commits conflict markers


def build(root: Path) -> Located:
    b = RepoBuilder(root / "repo")
    b.commit(
        "base",
        {
            "a.py": "def f():\n    return 0\n",
            "deploy/engine.yaml": "engine:\n  image: v1\n",
            ".github/workflows/ci.yml": CI,
        },
    )
    b.branch("release")
    fix = b.commit(
        "Fix f",
        {"a.py": "def f():\n    return 1\n", "deploy/engine.yaml": "engine:\n  image: v2\n"},
    )
    b.branch("backport", "release")
    b.checkout("backport")
    b.cherry_pick(fix, "-x")
    conflicted = b.commit("Resolve the merge", {"b.py": CONFLICTED})
    b.checkout("main")
    scenario = root / "scenario.yaml"
    scenario.write_text(SCENARIO)
    return Located(b.path, scenario, fix, conflicted)
