"""Root causes on the demo: 5 P1 findings from 2 causes, each with its action; the ledger keeps ids."""

from __future__ import annotations

import json
from pathlib import Path

from harness.causes import anchors, group
from harness.report.model import Finding, Report, Section


def _causes(demo_dir: Path) -> tuple[dict, dict[str, dict]]:
    doc = json.loads((demo_dir / "report.json").read_text(encoding="utf-8"))
    findings = {f["id"]: f for s in doc["sections"] for f in s["findings"]}
    return doc, findings


def test_demo_p1_findings_come_from_two_causes(demo_dir: Path) -> None:
    doc, findings = _causes(demo_dir)
    p1 = [c for c in doc["causes"] if c["severity"] == "P1"]
    assert len(p1) == 2
    assert sum(findings[i]["severity"] == "P1" for c in p1 for i in c["findings"]) == 5
    picks, control = p1
    assert picks["action"] == "cherry-pick -x 87c541f3 58ad6816 onto backport/42"
    kinds = sorted(findings[i]["kind"] for i in picks["findings"])
    assert kinds == [
        "gap-not-pinned",
        "missing-commit",
        "missing-commit",
        "pick-subset",
        "probe-expectation",
    ]
    assert "cancel-all" in control["title"] and "serving/handler.py" in control["action"]
    # every open finding is in exactly one cause; ids are the findings' own
    members = [i for c in doc["causes"] for i in c["findings"]]
    assert sorted(members) == sorted(doc["open_findings"])


def test_causes_are_stable_across_runs(demo_dir: Path, tmp_path: Path) -> None:
    from harness.cli import main

    assert (
        main(
            [
                "compare",
                "release/1.0",
                "backport/42",
                "--source",
                "main",
                "--source-branch",
                "pr/42",
                "--repo",
                str(demo_dir / "repo"),
                "--output-dir",
                str(tmp_path / "again"),
                "--format",
                "none",
                "--previous",
                str(demo_dir / "report.json"),
            ]
        )
        == 1
    )
    again = json.loads((tmp_path / "again" / "report.json").read_text(encoding="utf-8"))
    first, _ = _causes(demo_dir)
    fidelity = {c["id"]: c for c in again["causes"]}
    assert next(c for c in first["causes"] if "cherry-pick" in c["action"])["id"] in fidelity
    statuses = {f["id"]: f["status"] for s in again["sections"] for f in s["findings"]}
    assert set(again["open_findings"]) <= {i for i, st in statuses.items() if st == "still present"}


def test_findings_without_anchors_group_by_kind_and_an_unrelated_file_stays_apart() -> None:
    a = Finding("shape-signoff", "P2", "aaaaaaaaaaaa: sign-off", key="a" * 40 + "\0signoff")
    b = Finding("shape-signoff", "P2", "bbbbbbbbbbbb: sign-off", key="b" * 40 + "\0signoff")
    c = Finding("lane-selects-nothing", "P2", "lane x selects nothing", key="x")
    report = Report(
        "t",
        "",
        [Section("shape", "Shape", findings=[a, b]), Section("selection", "S", findings=[c])],
    )
    causes = group(report)
    assert [x.findings for x in causes] == [[a.id, b.id], [c.id]]
    assert "aaaaaaaa bbbbbbbb" in causes[0].action
    assert anchors(c, None, {}) == []


def test_verdict_counts_root_causes(demo_dir: Path) -> None:
    doc, _ = _causes(demo_dir)
    assert doc["verdict"].startswith(
        "BLOCKED: 5 open finding(s) at or above P1 from 2 root cause(s)"
    )


def test_a_file_joins_a_pick_and_a_probe_control_and_apply_commit_controls_say_cherry_pick() -> (
    None
):
    pick = "a" * 40
    fidelity = Section(
        "fidelity",
        "Fidelity",
        findings=[Finding("pick-adapted", "P2", "pick 1 is adapted", key=f"{pick}:adapted")],
        data={
            "picks": [
                {
                    "pick": pick,
                    "files": [
                        {"path": "srv/x.py", "same": False},
                        {"path": "README.md", "same": True},
                    ],
                }
            ]
        },
    )
    columns = [
        {"name": "head", "role": "ref"},
        {
            "name": "fixed",
            "role": "control",
            "edits": ["replace in srv/x.py: a → b"],
            "edit_paths": ["srv/x.py"],
            "edit_commits": [],
        },
        {
            "name": "with-fix",
            "role": "control",
            "edits": ["apply-commit " + "c" * 40],
            "edit_paths": [],
            "edit_commits": ["c" * 40],
        },
    ]
    probe_a = Section(
        "probe-a",
        "A",
        findings=[Finding("probe-expectation", "P1", "a differs", key="a:head same as fixed")],
        data={"probe": "a", "columns": columns},
    )
    probe_b = Section(
        "probe-b",
        "B",
        findings=[Finding("probe-expectation", "P1", "b differs", key="b:head same as with-fix")],
        data={"probe": "b", "columns": columns},
    )
    causes = group(Report("t", "", [fidelity, probe_a, probe_b]), head="backport")
    assert [len(c.findings) for c in causes] == [2, 1]
    joined, picked = causes
    assert (
        "srv/x.py" in joined.title
        and "fixed" in joined.action
        and "replace in srv/x.py" in joined.action
    )
    assert picked.action == "cherry-pick -x cccccccc onto backport"
