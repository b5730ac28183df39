"""The demo's review, round 2 (issue #10 item 4): the reviewer asked for the two PR-branch commits
the pick lacked; they are cherry-picked with -x and the gate passes, the ledger resolving both."""

from __future__ import annotations

import json

import git

from harness.demo import build


def test_after_the_fix_round_passes_and_resolves_the_findings(tmp_path, run_cli):
    path = tmp_path / "demo"
    marks = build(path)
    repo = git.Repo(path)
    env = {
        "GIT_COMMITTER_NAME": "Riley Release",
        "GIT_COMMITTER_EMAIL": "riley@example.com",
        "GIT_COMMITTER_DATE": "1768176000 +0000",
    }
    common = [
        "--source",
        "main",
        "--source-branch",
        "pr/42",
        "--repo",
        str(path),
        "--format",
        "none",
    ]
    code1, _, err = run_cli(
        "compare", "release/1.0", marks["pick42"], *common, "--output", str(tmp_path / "r1")
    )
    assert code1 == 1, err  # round 1: the pick lacks c3 and c4
    first = json.loads((tmp_path / "r1" / "report.json").read_text())
    fid1 = next(s for s in first["sections"] if s["id"] == "fidelity")
    blocking1 = {f["id"] for f in fid1["findings"] if f["severity"] == "P1"}
    assert {f["kind"] for f in fid1["findings"] if f["severity"] == "P1"} == {
        "pick-subset",
        "missing-commit",
    }

    repo.git.checkout("-q", "backport/42")
    with repo.git.custom_environment(**env):
        for c in ("c3", "c4"):
            repo.git.cherry_pick("-x", marks[c])
    repo.git.checkout("-q", "main")

    code2, _, err = run_cli(
        "compare",
        "release/1.0",
        "backport/42",
        *common,
        "--output",
        str(tmp_path / "r2"),
        "--previous",
        str(tmp_path / "r1" / "report.json"),
    )
    second = json.loads((tmp_path / "r2" / "report.json").read_text())
    assert code2 == 0, [
        f["title"] for s in second["sections"] for f in s["findings"] if f["severity"] == "P1"
    ]
    fid2 = next(s for s in second["sections"] if s["id"] == "fidelity")
    assert fid2["data"]["missing_commits"] == []
    pick42 = next(p for p in fid2["data"]["picks"] if p["pick"] == marks["pick42"])
    assert (
        pick42["status"] == "subset" and len(pick42["completed_by"]) == 2
    )  # its own verdict stays true
    assert all(e["status"] == "same" for e in pick42["end_state"])
    ledger = next(s for s in second["sections"] if s["id"] == "ledger")
    resolved = {f["id"] for f in ledger["findings"] if f["status"] == "resolved"}
    assert blocking1 <= resolved
