"""Root causes on the demo: 5 P1 findings from 2 causes, each with its action; the ledger keeps ids."""

from __future__ import annotations

import json
from pathlib import Path

from harness.report.model import Finding, Report, Section
from harness.verdict.causes import anchors, group


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


def _probe(probe: str, key: str, columns: list[dict], sev: str = "P1") -> Section:
    return Section(
        f"probe-{probe}",
        probe,
        findings=[Finding("probe-expectation", sev, f"{probe} expectation fails", key=key)],  # type: ignore[arg-type]
        data={"probe": probe, "columns": columns},
    )


COLUMNS = [
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
    {
        "name": "bug-back",
        "role": "control",
        "edits": ["replace in srv/x.py: b → a"],
        "edit_paths": ["srv/x.py"],
        "edit_commits": [],
    },
]


def test_a_pick_and_a_control_on_one_file_are_two_causes_and_actions_are_safe() -> None:
    """#26: a file no longer joins a pick and a probe control (it did before); an apply-commit
    control says cherry-pick; a control the probe expects HEAD to differ from (the bug put back)
    is never offered as the change to make."""
    pick = "a" * 40
    fidelity = Section(
        "fidelity",
        "Fidelity",
        findings=[Finding("pick-adapted", "P2", "pick 1 is adapted", key=f"{pick}:adapted")],
        data={
            "picks": [
                {"pick": pick, "source": "d" * 40, "files": [{"path": "srv/x.py", "same": False}]}
            ]
        },
    )
    report = Report(
        "t",
        "",
        [
            fidelity,
            _probe("a", "a:head same as fixed", COLUMNS),
            _probe("b", "b:head same as with-fix", COLUMNS),
            _probe("c", "c:head differs from bug-back", COLUMNS),
        ],
    )
    causes = group(report, head="backport")
    assert [len(c.findings) for c in causes] == [1, 1, 1, 1]
    by_title = {c.title.split(" ")[0]: c for c in causes}
    assert "fixed" in by_title["a"].action and "replace in srv/x.py: a → b" in by_title["a"].action
    assert by_title["b"].action == "cherry-pick -x cccccccc onto backport, then re-run"
    bug = by_title["c"].action
    assert "bug-back" in bug and "behave like" not in bug and "b → a" not in bug
    adapted = by_title["pick"]
    assert "aaaaaaaa" in adapted.action and "dddddddd" in adapted.action
    assert "re-pick" not in adapted.action and "intended adaptation" in adapted.action


def test_superset_and_subset_picks_on_one_file_stay_apart_and_titles_match_severity() -> None:
    """#26: one cause per pick, titled by a finding of the cause's own severity, its action naming
    the pick; long path lists are bounded."""
    sup, sub = "1" * 40, "2" * 40
    paths = [f"pkg/m{i}.py" for i in range(57)]
    picks = [
        {"pick": sup, "source": "3" * 40, "files": [{"path": "core.py", "same": False}]},
        {
            "pick": sub,
            "source": "4" * 40,
            "files": [
                {"path": p, "same": False, "only_in_source": ["x"]} for p in ["core.py", *paths]
            ],
        },
    ]
    fidelity = Section(
        "fidelity",
        "Fidelity",
        findings=[
            Finding("pick-superset", "P2", "pick 1 is superset", key=f"{sup}:superset"),
            Finding("pick-subset", "P1", "pick 2 is subset", key=f"{sub}:subset"),
            Finding("pick-no-source", "P2", "pick 3 is no-source", key=f"{'5' * 40}:no-source"),
        ],
        data={"picks": picks},
    )
    causes = group(Report("t", "", [fidelity]), head="rel")
    assert [(c.severity, c.title) for c in causes] == [
        ("P1", "pick 2 is subset"),
        ("P2", "pick 1 is superset"),
        ("P2", "pick 3 is no-source"),
    ]
    subset, superset, nosource = causes
    assert "22222222" in subset.action and "44444444" in subset.action
    assert "11111111" in superset.action and "22222222" not in superset.action
    assert "re-pick" not in nosource.action and "55555555" in nosource.action
    assert subset.action.count("pkg/m") <= 5 and "more" in subset.action
    assert all(len(c.title) <= 200 and len(c.action) <= 200 for c in causes)
