"""Root causes on the demo: 5 P1 findings from 2 causes, each with its action; the ledger keeps ids."""

from __future__ import annotations

import json
from pathlib import Path

from harness.report.model import (
    Anchors,
    ControlFacts,
    Finding,
    PickFacts,
    Report,
    Section,
)
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
        "tests-gap-not-pinned",  # the tests section's, for the same missing commit (c3)
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
    assert anchors(c) == []


def test_verdict_counts_root_causes(demo_dir: Path) -> None:
    doc, _ = _causes(demo_dir)
    assert doc["verdict"].startswith(
        "BLOCKED: 5 open finding(s) at or above P1 from 2 root cause(s)"
    )


def _probe(probe: str, key: str, columns: list[dict], sev: str = "P1") -> Section:
    """A probe section whose expectation finding carries the anchors probe_table sets: the
    controls it compares (of ``columns``), the comparison and the other column's edits."""
    col, rest = key.partition(":")[2].split(" ", 1)
    rel, other = rest.rsplit(" ", 1)
    controls = tuple(
        ControlFacts(
            name=f"{probe}/{c['name']}",
            commits=tuple(c["edit_commits"]),
            paths=tuple(c["edit_paths"]),
        )
        for c in columns
        if c["role"] == "control" and c["name"] in (col, other)
    )
    edits = next(tuple(c.get("edits", ())) for c in columns if c["name"] == other)
    finding = Finding(
        "probe-expectation",
        sev,  # type: ignore[arg-type]
        f"{probe} expectation fails",
        key=key,
        anchors=Anchors(controls=controls, expects=(col, rel, other), other_edits=edits),
    )
    return Section(f"probe-{probe}", probe, findings=[finding])


def _pick(
    kind: str, sev: str, title: str, sha: str, files: list[dict], source: str = ""
) -> Finding:
    """A pick finding with the anchors fidelity sets (its pick, its source, the files)."""
    facts = PickFacts(
        sha=sha,
        source=source,
        differ=tuple(f["path"] for f in files if not f.get("same")),
        lacking=tuple(f["path"] for f in files if f.get("only_in_source")),
    )
    status = kind.removeprefix("pick-")
    return Finding(kind, sev, title, key=f"{sha}:{status}", anchors=Anchors(pick=facts))  # type: ignore[arg-type]


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
        findings=[
            _pick(
                "pick-adapted",
                "P2",
                "pick 1 is adapted",
                pick,
                [{"path": "srv/x.py", "same": False}],
                "d" * 40,
            )
        ],
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
            _pick("pick-superset", "P2", "pick 1 is superset", sup, picks[0]["files"], "3" * 40),
            _pick("pick-subset", "P1", "pick 2 is subset", sub, picks[1]["files"], "4" * 40),
            _pick("pick-no-source", "P2", "pick 3 is no-source", "5" * 40, []),
        ],
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


def _demo_report(demo_dir: Path) -> Report:
    """The demo's compare as the command builds it (sections from the cache the demo filled)."""
    from harness import demo
    from harness.commands.demo import scenario_path
    from harness.compare import CompareInputs, build_report, run_plan
    from harness.git import GitRepo
    from harness.plan import plan_for

    repo = GitRepo(demo_dir / "repo")
    inputs = CompareInputs(
        base=demo.REFS["base"],
        head=demo.REFS["head"],
        source=demo.REFS["source"],
        source_branch=demo.REFS["source_branch"],
        scenario_paths=[str(scenario_path())],
    )
    sections, _ = run_plan(plan_for(repo, inputs))
    return build_report(repo, inputs, sections, [], "", "")


def test_causes_come_from_the_findings_anchors_never_from_section_data(demo_dir: Path) -> None:
    """The checks set each finding's anchors; causes read those alone: the demo's causes with
    every section's data gone are the report's, and with the anchors gone they are not."""
    from harness.demo import REFS

    doc, _ = _causes(demo_dir)
    want = [(c["id"], c["title"], c["action"], c["findings"]) for c in doc["causes"]]
    report = _demo_report(demo_dir)
    missing = [f for f in report.findings if f.kind == "missing-commit"]
    assert missing and all(f.anchors["missing"]["sha"] in f.key for f in missing)
    (subset,) = [f for f in report.findings if f.kind == "pick-subset"]
    assert subset.anchors["lacks"] == subset.anchors["pick"]["sha"] == subset.key.split(":")[0]
    (gap,) = [f for f in report.findings if f.kind == "gap-not-pinned"]
    assert gap.anchors["commit"] == missing[0].anchors["missing"]["sha"]
    expectation = next(f for f in report.findings if f.kind == "probe-expectation")
    assert expectation.anchors["controls"] and expectation.anchors["expects"][1] == "same as"
    for s in report.sections:
        s.data = {}
    got = [(c.id, c.title, c.action, c.findings) for c in group(report, REFS["head"])]
    assert got == want
    for f in report.findings:
        f.anchors = Anchors()
    lost = group(report, REFS["head"])
    assert not any("lacks 2 commit(s)" in c.title for c in lost)
    assert len(lost) > len(want)


def test_anchors_are_kept_by_the_section_caches_and_left_out_of_the_report() -> None:
    from harness.infra.cache import _dec, _enc
    from harness.infra.history_codec import pack, unpack
    from harness.report.jsontext import dumps

    anchors_ = Anchors(
        pick=PickFacts(sha="a" * 40, source="b" * 40, differ=("x.py",), lacking=()),
        lacks="a" * 40,
        controls=(ControlFacts(name="p/fixed", commits=("c" * 40,), paths=("x.py",)),),
        expects=("head", "same as", "fixed"),
        other_edits=("replace in x.py: a → b",),
    )
    section = Section(
        "fidelity", "F", findings=[Finding("pick-subset", "P1", "t", key="k", anchors=anchors_)]
    )
    assert _dec(json.loads(json.dumps(_enc(section)))).findings[0].anchors == anchors_
    assert unpack(json.dumps(pack(section))).findings[0].anchors == anchors_
    text = dumps(section)
    assert "anchors" not in text and "fixed" not in text and "b" * 40 not in text
