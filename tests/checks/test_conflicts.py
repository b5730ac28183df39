"""Conflict markers committed in a pick are P1, one finding per pick naming file:line; an RST underline
('=======' alone) is not a marker."""

from __future__ import annotations

import json

from harness.checks.conflicts import conflicts_section, pick_markers
from harness.git.repo import GitRepo

CONFLICTED = """\
def f():
<<<<<<< HEAD
    return 1
=======
    return 2
>>>>>>> 1a2b3c4 (Fix f)
"""

RST = """\
Release notes
=============

Fixes
=======

<<<<<<<
"""


def _repo(builder):
    builder.commit("base", {"a.py": "def f():\n    return 0\n", "docs/notes.rst": "Notes\n"})
    builder.branch("release")
    builder.checkout("release")
    builder.branch("backport")
    builder.checkout("backport")
    clean = builder.commit("clean pick", {"b.py": "x = 1\n"})
    bad = builder.commit("conflicted pick", {"a.py": CONFLICTED, "c.py": "y = 1\n>>>>>>> theirs\n"})
    docs = builder.commit("docs pick", {"docs/notes.rst": RST})
    builder.checkout("main")
    return clean, bad, docs


def test_markers_per_pick_with_file_and_line(builder):
    clean, bad, docs = _repo(builder)
    got = {
        sha: [(m.path, m.line) for m in ms]
        for sha, ms in pick_markers(GitRepo(builder.path), "release", "backport")
    }
    assert got == {clean: [], bad: [("a.py", 2), ("a.py", 4), ("a.py", 6), ("c.py", 2)], docs: []}


def test_one_p1_per_pick_through_shape_and_compare(builder, run_cli, tmp_path):
    _clean, bad, _docs = _repo(builder)
    snap = builder.snapshot()
    code, out, err = run_cli(
        "shape", "--repo", str(builder.path), "release..backport", "--format", "json"
    )
    assert code == 1, err
    sec = next(s for s in json.loads(out)["sections"] if s["id"] == "conflicts")
    [finding] = sec["findings"]
    assert finding["severity"] == "P1" and finding["title"].startswith(bad[:12])
    assert finding["detail"] == "a.py:2, a.py:4, a.py:6, c.py:2"
    assert [c["ok"] for c in sec["controls"]] == [True]
    code, _, err = run_cli(
        "compare",
        "--no-fidelity",
        "release",
        "backport",
        "--repo",
        str(builder.path),
        "--output",
        str(tmp_path / "rep"),
        "--format",
        "none",
    )
    doc = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert code == 1 and [
        f["kind"] for s in doc["sections"] for f in s["findings"] if f["severity"] == "P1"
    ] == ["conflict-markers"]
    assert builder.snapshot() == snap


def test_clean_range_has_no_finding(builder):
    _repo(builder)
    section = conflicts_section(GitRepo(builder.path), "release", "backport~2")
    assert section.findings == [] and section.summary.startswith("0 of 1")


def test_a_pick_that_resolves_markers_is_not_flagged(builder):
    _clean, bad, _docs = _repo(builder)
    builder.checkout("backport")
    builder.commit("resolve", {"a.py": "def f():\n    return 2\n", "c.py": "y = 1\n"})
    builder.checkout("main")
    got = dict(pick_markers(GitRepo(builder.path), "backport~1", "backport"))
    assert len(got) == 1 and all(not m for m in got.values())  # removed lines are not markers
