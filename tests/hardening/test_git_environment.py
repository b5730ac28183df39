"""The harness run from inside a git hook (or ``git rebase --exec``) inherits ``GIT_DIR``,
``GIT_WORK_TREE``, ``GIT_INDEX_FILE`` and friends pointing at *another* repository. Before, the
lanes section failed with ``GIT_WORK_TREE`` set; now every git child (and every other child: a test
that runs git) is given an environment without them, and the report is the one made without them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.testing.repos import RepoBuilder

WORKFLOW = """on: [push]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: pytest -m "not slow" tests
"""


def _sections(path: Path) -> list:
    doc = json.loads(path.read_text())
    return doc["sections"]


@pytest.mark.parametrize(
    "names",
    [("GIT_WORK_TREE",), ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"), ("GIT_OBJECT_DIRECTORY",)],
    ids=lambda names: "+".join(names),
)
def test_an_outer_gits_environment_changes_nothing(
    builder, run_cli, tmp_path: Path, monkeypatch, names: tuple[str, ...]
) -> None:
    builder.commit(
        "one",
        {
            "a.py": "x = 1\n",
            ".github/workflows/ci.yml": WORKFLOW,
            "tests/test_a.py": "def test_a():\n    pass\n",
        },
    )
    builder.commit("two", {"a.py": "x = 2\n"})
    other = RepoBuilder(tmp_path / "other")
    other.commit("elsewhere", {"z.txt": "z\n"})
    values = {
        "GIT_DIR": str(other.path / ".git"),
        "GIT_WORK_TREE": str(other.path),
        "GIT_INDEX_FILE": str(other.path / ".git" / "index"),
        "GIT_OBJECT_DIRECTORY": str(other.path / ".git" / "objects"),
    }
    args = [
        "compare",
        "--no-fidelity",
        "HEAD~1",
        "HEAD",
        "--repo",
        str(builder.path),
        "--format",
        "none",
        "--no-cache",
    ]
    code, _, err = run_cli(*args, "--output-dir", str(tmp_path / "plain"))
    assert code in (0, 1), err
    before = (builder.snapshot(), other.snapshot())
    for name in names:
        monkeypatch.setenv(name, values[name])
    code, _, err = run_cli(*args, "--output-dir", str(tmp_path / "hooked"))
    assert code in (0, 1), err
    for name in names:  # the snapshot's own git must not see them
        monkeypatch.delenv(name)
    assert "crashed" not in (tmp_path / "hooked" / "report.md").read_text()
    assert _sections(tmp_path / "hooked" / "report.json") == _sections(
        tmp_path / "plain" / "report.json"
    )
    assert (builder.snapshot(), other.snapshot()) == before


def test_a_child_process_is_not_given_an_outer_gits_repository(monkeypatch, tmp_path) -> None:
    from harness.infra import process

    monkeypatch.setenv("GIT_DIR", str(tmp_path))
    monkeypatch.setenv("GIT_WORK_TREE", str(tmp_path))
    env = process.child_env({"KEEP": "1"})
    assert "GIT_DIR" not in env and "GIT_WORK_TREE" not in env and env["KEEP"] == "1"
    assert process.child_env({"GIT_DIR": "set on purpose"})["GIT_DIR"] == "set on purpose"
