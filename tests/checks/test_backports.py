"""`harness backports`: the release matrix on a repository built here, one case per state.

main carries the fixes; ``rel1`` forks first (older), ``rel2`` later (newer)::

    m0 base ── m1 Fix a ── m2 Docs ── m3 Fix legacy ── m4 Fix b ── m5 Fix c (#12) ── merge m6 ── m7 Fix e ── m8
      │                      │ └── topic: m6 Fix d
      rel1 (forks at m0)     rel2 (forks at m2; removes legacy.py, changes c.py, merges topic)

- m1: picked into rel1 (-x), in-fork on rel2;
- m3: changes legacy.py, which rel2 deleted: n/a on rel2;
- m4: picked into rel1 only: missing on newer rel2 (P1), a cherry-pick applies there;
- m5: rel2 changed the same line of c.py: missing on rel2, a cherry-pick conflicts;
- m6: rel2 merged the topic branch it was made on: reached (merged);
- m7: rel2 got its change inside an unrelated vendoring commit: reached (in place);
- m8: not a fix: no row unless listed as a candidate;
- m9: only removes lines of b.py; rel2 removed them in an unrelated commit: reached (in place).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from harness.checks.backports import backports_check
from harness.checks.backports_candidates import CandidateSpec, compile_rule, read_candidates
from harness.errors import UsageError
from harness.git import GitRepo
from harness.infra.history_index import HistoryIndex
from harness.testing.repos import RepoBuilder, bare_snapshot


def body(tag: str, n: int = 12) -> str:
    return "".join(f"def {tag}{i}(x):\n    return x * {i}\n\n" for i in range(n))


@dataclass
class Matrix:
    b: RepoBuilder
    src: dict[str, str] = field(default_factory=dict)
    pick: dict[str, str] = field(default_factory=dict)


def build(b: RepoBuilder) -> Matrix:
    mx = Matrix(b)
    b.commit(
        "base",
        {
            "a.py": body("a"),
            "b.py": body("b"),
            "c.py": body("c"),
            "d.py": body("d"),
            "e.py": body("e"),
            "legacy.py": body("legacy"),
        },
    )
    b.branch("rel1")
    mx.src["in_fork"] = b.commit(
        "Fix a3 overflow", {"a.py": body("a").replace("x * 3\n", "x * 3 + 1  # overflow fix\n")}
    )
    b.commit("Docs", {"README": "read me\n"})
    b.branch("rel2")
    b.branch("topic")
    b.checkout("rel2")
    b.remove("legacy.py")
    b.commit("Remove legacy module from the release")
    b.commit(
        "Adapt c5 for the release",
        {"c.py": body("c").replace("x * 5\n", "x * 5 - release_offset()\n")},
    )
    b.checkout("main")
    mx.src["na"] = b.commit(
        "Fix legacy helper",
        {"legacy.py": body("legacy").replace("x * 2\n", "x * 2  # legacy fix\n")},
    )
    mx.src["regression"] = b.commit(
        "Fix b7 rounding", {"b.py": body("b").replace("x * 7\n", "round(x * 7, 2)\n")}
    )
    mx.src["conflict"] = b.commit(
        "Fix c5 sign (#12)", {"c.py": body("c").replace("x * 5\n", "abs(x * 5)\n")}
    )
    b.checkout("topic")
    mx.src["merged"] = b.commit(
        "Fix d4 bounds", {"d.py": body("d").replace("x * 4\n", "min(x * 4, LIMIT)\n")}
    )
    b.checkout("main")
    b.merge("topic", "Merge branch 'topic'")
    new_e = body("e").replace("x * 6\n", "x * 6\n    assert_checked_value(x, 'e6')\n")
    mx.src["lines"] = b.commit("Fix e6 validation", {"e.py": new_e})
    mx.src["plain"] = b.commit(
        "Refactor a naming",
        {
            "a.py": body("a")
            .replace("x * 3\n", "x * 3 + 1  # overflow fix\n")
            .replace("def a9", "def a_nine")
        },
    )
    dead = body("b").replace("round(x * 7, 2)\n", "x * 7\n")  # b.py as rel2 has it: m4 is not there
    mx.src["removed"] = b.commit(
        "Fix: drop the dead b11 helper",
        {
            "b.py": body("b")
            .replace("x * 7\n", "round(x * 7, 2)\n")
            .replace("def b11(x):\n    return x * 11\n\n", "")
        },
    )
    # The releases.
    b.checkout("rel1")
    mx.pick["in_fork"] = b.cherry_pick(mx.src["in_fork"], "-x")
    mx.pick["regression"] = b.cherry_pick(mx.src["regression"], "-x")
    b.checkout("rel2")
    b.merge("topic", "Merge branch 'topic' into rel2")
    vendored = "".join(f"vendored_{i} = load('{i}')\n" for i in range(60))
    mx.pick["lines"] = b.commit(
        "Vendor the new toolkit", {"vendor/toolkit.py": vendored, "e.py": new_e}
    )
    more = "".join(f"extra_{i} = load('{i}')\n" for i in range(60))
    b.commit(
        "Vendor more of the toolkit",
        {"vendor/more.py": more, "b.py": dead.replace("def b11(x):\n    return x * 11\n\n", "")},
    )
    b.checkout("main")
    return mx


@pytest.fixture(scope="module")
def mx(tmp_path_factory: pytest.TempPathFactory) -> Matrix:
    return build(RepoBuilder(tmp_path_factory.mktemp("backports") / "repo"))


@pytest.fixture(scope="module")
def checked(mx: Matrix):
    return backports_check(
        GitRepo(mx.b.path), "main", ["rel2", "rel1"], [CandidateSpec("x", pr=12)]
    )


def test_releases_are_ordered_by_fork_point(checked) -> None:
    assert [r.name for r in checked.result.releases] == ["rel1", "rel2"]


def test_picked_and_in_fork(mx: Matrix, checked) -> None:
    c = checked.result.cell(mx.src["in_fork"], "rel1")
    assert (c.state, c.pick, c.status) == ("picked", mx.pick["in_fork"], "identical")
    assert checked.result.cell(mx.src["in_fork"], "rel2").state == "in-fork"


def test_not_applicable(mx: Matrix, checked) -> None:
    assert checked.result.cell(mx.src["na"], "rel2").state == "n/a"
    # rel1 still has legacy.py: there the fix is missing, and it applies.
    c = checked.result.cell(mx.src["na"], "rel1")
    assert (c.state, c.applies) == ("missing", True)


def test_missing_applies_and_conflicts(mx: Matrix, checked) -> None:
    ok = checked.result.cell(mx.src["regression"], "rel2")
    assert (ok.state, ok.applies, ok.pick, ok.status) == ("missing", True, None, None)
    bad = checked.result.cell(mx.src["conflict"], "rel2")
    assert (bad.state, bad.applies) == ("missing", False)
    assert checked.result.cell(mx.src["conflict"], "rel1").applies is True


def test_reached(mx: Matrix, checked) -> None:
    merged = checked.result.cell(mx.src["merged"], "rel2")
    assert (merged.state, merged.how) == ("reached", "merged")
    lines = checked.result.cell(mx.src["lines"], "rel2")
    assert lines.state in ("reached", "picked"), lines
    if lines.state == "reached":
        assert lines.how == "in place"
    assert checked.result.cell(mx.src["lines"], "rel1").state == "missing"
    removed = checked.result.cell(mx.src["removed"], "rel2")
    assert (removed.state, removed.how) == ("reached", "in place"), removed
    assert checked.result.cell(mx.src["removed"], "rel1").state == "missing"


def test_rows_come_from_picks_candidates_and_the_rule(mx: Matrix, checked) -> None:
    rows = {r.sha: r for r in checked.result.rows}
    assert "picked" in rows[mx.src["regression"]].reasons
    assert rows[mx.src["conflict"]].reasons == ("rule", "candidate") or set(
        rows[mx.src["conflict"]].reasons
    ) == {"rule", "candidate"}
    assert rows[mx.src["conflict"]].prs == (12,)
    assert mx.src["plain"] not in rows  # not a fix, not listed


def test_regression_is_p1_and_candidate_p2(mx: Matrix, checked) -> None:
    by = {(f.kind, f.severity): f for f in checked.section.findings}
    p1 = [f for f in checked.section.findings if f.severity == "P1"]
    assert len(p1) == 1 and p1[0].kind == "backport-regression"
    assert mx.src["regression"][:12] in p1[0].title and "rel2" in p1[0].title
    p2 = [f for f in checked.section.findings if f.severity == "P2"]
    assert {f.key for f in p2} == {
        f"{mx.src['conflict']}:rel1:candidate",
        f"{mx.src['conflict']}:rel2:candidate",
    }
    assert ("backport-not-picked", "info") in by
    assert all(c.ok for c in checked.section.controls if c.ok is not None)


def test_rule_and_since(mx: Matrix) -> None:
    repo = GitRepo(mx.b.path)
    only_refactor = backports_check(repo, "main", ["rel1"], rule=compile_rule("^Refactor"))
    shas = {r.sha for r in only_refactor.result.rows}
    assert mx.src["plain"] in shas and mx.src["na"] not in shas
    late = backports_check(repo, "main", ["rel1"], since=("ref", mx.src["conflict"]))
    rule_rows = {r.sha for r in late.result.rows if "rule" in r.reasons}
    assert mx.src["lines"] in rule_rows and mx.src["na"] not in rule_rows


def test_candidates_file(tmp_path: Path) -> None:
    f = tmp_path / "c.txt"
    f.write_text("# backport-1.x\n\nabc1234\n#12\n 34 \nPR #56\nmain~1\n", encoding="utf-8")
    got = read_candidates(str(f))
    assert [(c.ref, c.pr) for c in got] == [
        ("abc1234", None),
        (None, 12),
        (None, 34),
        (None, 56),
        ("main~1", None),
    ]
    j = tmp_path / "c.json"
    j.write_text(json.dumps([{"number": 7}, {"number": 8, "mergeCommit": {"oid": "a" * 40}}, 9]))
    assert [(c.ref, c.pr) for c in read_candidates(str(j))] == [(None, 7), ("a" * 40, 8), (None, 9)]
    for bad in ("two words\n", '[{"number": -1}]', "[1, ", "--upload-pack=x\n"):
        f.write_text(bad, encoding="utf-8")
        with pytest.raises(UsageError):
            read_candidates(str(f))
    with pytest.raises(UsageError):
        read_candidates(str(tmp_path / "absent"))
    with pytest.raises(UsageError):
        read_candidates(str(tmp_path))


def _cli(mx: Matrix, *extra: str) -> list[str]:
    return [
        "backports",
        "--repo",
        str(mx.b.path),
        "--source",
        "main",
        "--release",
        "rel1",
        "--release",
        "rel2",
        *extra,
    ]


def test_json_shape_and_exit_code(mx: Matrix, run_cli, tmp_path: Path) -> None:
    cand = tmp_path / "cand.txt"
    cand.write_text(mx.src["plain"] + "\n", encoding="utf-8")
    code, out, err = run_cli(*_cli(mx, "--candidates", str(cand), "--format", "json"))
    assert code == 1, err  # the P1 regression
    doc = json.loads(out)
    (section,) = doc["sections"]
    assert section["id"] == "backports"
    cells = section["data"]["cells"]
    assert cells and all(
        set(c) >= {"source", "release", "state", "pick", "status", "applies"} for c in cells
    )
    assert {c["release"] for c in cells} == {"rel1", "rel2"}
    assert {c["state"] for c in cells} <= {"picked", "in-fork", "reached", "missing", "n/a"}
    picked = next(c for c in cells if c["source"] == mx.src["in_fork"] and c["release"] == "rel1")
    assert picked["pick"] == mx.pick["in_fork"] and picked["status"] == "identical"
    assert any(c["source"] == mx.src["plain"] for c in cells)
    for c in cells:
        assert (c["applies"] is None) or c["state"] == "missing"
    for fmt in ("md", "html", "term"):
        code, out, _ = run_cli(*_cli(mx, "--format", fmt, "--fail-on", "never"))
        assert code == 0 and "rel2" in out


@pytest.mark.parametrize(
    "extra",
    [
        ("--release", "no-such-branch"),
        ("--candidates", "/nonexistent/candidates.txt"),
        ("--since", "not a date"),
        ("--since", "2024-02-30"),  # the shape of a date, not a date
        ("--since", "0000-00-00"),
        ("--rule", "(unclosed"),
    ],
)
def test_bad_input_is_exit_2(mx: Matrix, run_cli, tmp_path: Path, extra: tuple[str, ...]) -> None:
    out_file = tmp_path / "r.json"
    code, out, err = run_cli(*_cli(mx, *extra, "--output", str(out_file), "--format", "json"))
    assert code == 2, (out, err)
    assert len(err.strip().splitlines()) == 1 and not out_file.exists()


def test_unknown_candidate_commit_is_exit_2(mx: Matrix, run_cli, tmp_path: Path) -> None:
    cand = tmp_path / "cand.txt"
    cand.write_text("deadbeefdeadbeef\n", encoding="utf-8")
    code, _, err = run_cli(*_cli(mx, "--candidates", str(cand)))
    assert code == 2 and "cand.txt:1" in err


def test_repository_unchanged(mx: Matrix, run_cli, tmp_path: Path) -> None:
    before = mx.b.snapshot()
    bare = mx.b.bare_clone(tmp_path / "bare.git")
    bare_before = bare_snapshot(bare)
    assert run_cli(*_cli(mx, "--format", "json"))[0] == 1
    code, _, _ = run_cli(
        "backports",
        "--repo",
        str(bare),
        "--source",
        "main",
        "--release",
        "rel1",
        "--release",
        "rel2",
        "--format",
        "json",
    )
    assert code == 1
    assert mx.b.snapshot() == before
    assert bare_snapshot(bare) == bare_before


def test_trial_fast_path_agrees_with_merge_tree(mx: Matrix, checked) -> None:
    from harness.git.backports import TrialPick, trial_picks
    from harness.git.patch import diff_many

    repo = GitRepo(mx.b.path)
    cells = [c for c in checked.result.cells if c.state == "missing"]
    patches = {p.commit: p.files for p in diff_many(repo, [(c.source, None) for c in cells])}
    trials = [
        TrialPick(
            c.source,
            repo.resolve(f"{c.source}^"),
            repo.resolve(c.release),
            tuple((f.status, f.old_path, f.new_path) for f in patches[c.source]),
        )
        for c in cells
    ]
    assert trial_picks(repo, trials) == trial_picks(repo, trials, fast=False)
    assert [c.applies for c in cells] == trial_picks(repo, trials, fast=False)


def test_no_trial_leaves_applies_null(mx: Matrix, run_cli) -> None:
    code, out, _ = run_cli(*_cli(mx, "--no-trial", "--format", "json", "--fail-on", "never"))
    cells = json.loads(out)["sections"][0]["data"]["cells"]
    assert code == 0 and all(c["applies"] is None for c in cells)
    assert any(c["state"] == "missing" for c in cells)


def test_gh_json_candidates_by_cli(mx: Matrix, run_cli, tmp_path: Path) -> None:
    cand = tmp_path / "prs.json"
    cand.write_text(json.dumps([{"number": 12}, {"number": 999}]), encoding="utf-8")
    code, out, _ = run_cli(*_cli(mx, "--candidates", str(cand), "--format", "json"))
    section = json.loads(out)["sections"][0]
    rows = {r["source"]: r for r in section["data"]["rows"]}
    assert (
        rows[mx.src["conflict"]]["prs"] == [12] and "candidate" in rows[mx.src["conflict"]]["from"]
    )
    kinds = {(f["kind"], f["severity"]) for f in section["findings"]}
    assert ("backport-missing", "P2") in kinds and ("backport-candidate-unmatched", "info") in kinds


def test_compare_section_from_the_scenario(mx: Matrix, run_cli, tmp_path: Path) -> None:
    scenario = tmp_path / "bp.yaml"
    scenario.write_text(
        'backports:\n  releases: [rel1, rel2]\n  candidates: ["#12"]\n', encoding="utf-8"
    )
    fork = mx.b.rev("rel1~2")
    out_dir = tmp_path / "out"
    code, _, err = run_cli(
        "compare",
        f"{fork}..rel1",
        "--source",
        "main",
        "--scenario",
        str(scenario),
        "--repo",
        str(mx.b.path),
        "--output-dir",
        str(out_dir),
        "--no-cache",
    )
    assert code in (0, 1), err
    doc = json.loads((out_dir / "report.json").read_text(encoding="utf-8"))
    (bp,) = [s for s in doc["sections"] if s["id"] == "backports"]
    assert any(f["kind"] == "backport-regression" for f in bp["findings"])
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "backports:\n  releases: [rel1]\n  candidates: [deadbeefdead]\n", encoding="utf-8"
    )
    code, _, err = run_cli(
        "compare",
        f"{fork}..rel1",
        "--source",
        "main",
        "--scenario",
        str(bad),
        "--repo",
        str(mx.b.path),
        "--output-dir",
        str(tmp_path / "out2"),
    )
    assert code == 2 and "bad.yaml:3" in err and not (tmp_path / "out2").exists()


def test_release_that_merged_main_back(tmp_path: Path) -> None:
    """A release that merged main in: main's commits it merged are reached (merged), the fork
    point stays where the release left main (fidelity's first-parent rule)."""
    b = RepoBuilder(tmp_path / "repo")
    b.commit("base", {"a.py": body("a"), "b.py": body("b")})
    b.branch("rel")
    first = b.commit("Fix a2", {"a.py": body("a").replace("x * 2\n", "x * 2 + 0\n")})
    b.checkout("rel")
    b.commit("Release notes", {"NOTES": "1.0\n"})
    b.merge("main", "Merge branch 'main' into rel")
    b.checkout("main")
    later = b.commit("Fix b3", {"b.py": body("b").replace("x * 3\n", "x * 3 + 0\n")})
    got = backports_check(GitRepo(b.path), "main", ["rel"])
    (rel,) = got.result.releases
    assert rel.fork == b.rev("main~2")
    merged = got.result.cell(first, "rel")
    assert (merged.state, merged.how) == ("reached", "merged")
    assert got.result.cell(later, "rel").state == "missing"


def test_bad_source_and_date_since(mx: Matrix, run_cli) -> None:
    code, _, err = run_cli(
        "backports", "--repo", str(mx.b.path), "--source", "nope", "--release", "rel1"
    )
    assert code == 2 and len(err.strip().splitlines()) == 1
    code, out, _ = run_cli(*_cli(mx, "--since", "2100-01-01", "--format", "json"))
    rows = json.loads(out)["sections"][0]["data"]["rows"]
    assert not any("rule" in r["from"] for r in rows)  # nothing committed after 2100
    assert any("picked" in r["from"] for r in rows)


def test_the_history_index_gives_the_same_matrix(
    mx: Matrix, run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """backports reads the releases' source history through the history index (kept in the
    private cache): cold and warm give the --no-cache matrix, and the second run recalls what the
    first kept; --no-cache writes nothing."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(cache))
    args = ("--format", "json", "--fail-on", "never")
    code, plain, _ = run_cli(*_cli(mx, *args, "--no-cache"))
    assert code == 0 and not (cache / "history").exists()
    for _ in range(2):
        code, out, _ = run_cli(*_cli(mx, *args))
        assert code == 0 and json.loads(out)["sections"] == json.loads(plain)["sections"]
    (folder,) = [p for p in (cache / "history").iterdir() if p.is_dir()]
    assert {"index.json", "diffs.json", "memo-resolution.json"} <= {
        p.name for p in folder.iterdir()
    }
    index = HistoryIndex(GitRepo(mx.b.path), cache / "history")
    again = backports_check(GitRepo(mx.b.path), "main", ["rel1", "rel2"], index=index)
    assert index.served.get("recalled resolution", 0) > 0 and index.served["read"] == 0
    assert again.section.data == json.loads(plain)["sections"][0]["data"]
