"""File names that are not UTF-8 in reviewed commits: every verb reports, shown escaped (\\xNN)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from harness.testing.repos import RepoBuilder


def _put(root: Path, rel: bytes, data: bytes) -> None:
    path = os.path.join(os.fsencode(root), rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(data)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> RepoBuilder:
    b = RepoBuilder(tmp_path_factory.mktemp("nonutf8") / "repo")
    b.commit("base", {"a.py": "x = 1\n", "tests/test_a.py": "def test_a():\n    pass\n"})
    b.branch("release")
    _put(b.path, b"caf\xe9.py", b"def f(x):\n    return x  # TODO-MARK\n")
    _put(b.path, b"d\xff/n\xfe.txt", b"TODO-MARK\n")
    _put(b.path, b"tests/test_\xe9.py", b"def test_e():\n    pass\n")
    b.commit("non-UTF-8 names (#5)")
    b.checkout("release")
    b.cherry_pick("main", "-x")
    return b


VERBS = {
    "compare": ["compare", "main~1", "release", "--source", "main"],
    "fidelity": ["fidelity", "main~1..release", "--source", "main"],
    "drift": ["drift", "main", "release"],
    "shape": ["shape", "main~1..release"],
    "trace": ["trace", "TODO-MARK", "--refs", "main", "release", "--range", "main~1..main"],
    "select": ["select", "--lane", "all=", "--ref", "main~1", "--ref", "main"],
    "lanes": ["lanes", "--ref", "main"],
}


@pytest.mark.parametrize("fmt", ["json", "md", "term", "html"])
@pytest.mark.parametrize("verb", sorted(VERBS))
def test_a_non_utf8_path_never_stops_a_report(
    repo: RepoBuilder, run_cli, tmp_path: Path, verb: str, fmt: str
) -> None:
    argv = [*VERBS[verb], "--repo", str(repo.path), "--fail-on", "never"]
    if verb == "compare":
        argv += ["--output", str(tmp_path / "out"), "--format", "none"]
    else:
        argv += ["--output", str(tmp_path / f"report.{fmt}"), "--format", fmt]
    code, _, err = run_cli(*argv)
    assert code == 0, err
    if verb == "compare":
        text = (tmp_path / "out" / "report.json").read_text(encoding="utf-8")
        json.loads(text)
        (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    else:
        text = (tmp_path / f"report.{fmt}").read_text(encoding="utf-8")
    if verb in ("compare", "fidelity", "drift", "trace"):
        assert "caf\\xe9.py" in text.replace("\\\\", "\\") or "d\\xff" in text.replace(
            "\\\\", "\\"
        ), text[:2000]
    assert "\ufffd" not in text


def test_the_same_repository_gives_the_same_bytes(
    repo: RepoBuilder, run_cli, tmp_path: Path
) -> None:
    outs = []
    for _i in range(2):
        code, _, err = run_cli(
            "compare",
            "main~1",
            "release",
            "--source",
            "main",
            "--repo",
            str(repo.path),
            "--output",
            str(tmp_path / "o"),
            "--format",
            "none",
            "--fail-on",
            "never",
        )
        assert code == 0, err
        outs.append(
            (tmp_path / "o" / "report.md").read_bytes()
            + (tmp_path / "o" / "report.json").read_bytes()
        )
    # The dated header aside (two runs may straddle a second).
    dated = re.compile(rb"Generated \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ|\"generated\": \"[^\"]*\"")
    assert all(dated.search(o) for o in outs)  # the pattern matches the header it removes
    assert dated.sub(b"", outs[0]) == dated.sub(b"", outs[1])
