"""`harness backports`: cells a release manager can act on (#47), each on a repository built here
and settled against a real ``git cherry-pick`` in a throwaway clone where it matters.

- reached only when the change itself is in place (its diff reverse-applies at the release tip,
  or the file is its after-image); lines found elsewhere in the file never count;
- a merge's row is where the commits it brought are, and no regression for a picked merge;
- one row per change (one patch id, Change-Id or PR), named by the commit on ``--source``;
- words: ``--release`` equal to the source is exit 2, a repeated one is listed once.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from harness.checks.backports import backports_check
from harness.checks.backports_candidates import CandidateSpec
from harness.git import GitRepo
from harness.testing.repos import RepoBuilder


def _tests(extra: str = "", two: str | None = None) -> str:
    """A test module: two tests reading a process's output, the second without join()."""
    second = (
        two
        if two is not None
        else (
            "def test_two():\n"
            "    p = spawn('two')\n"
            "    if IS_PYPY:\n"
            "        pytest.skip('flaky on pypy')\n"
            "    out = p.read()\n"
            "    assert out == 'two'\n"
        )
    )
    return (
        "import pytest\n\n" + extra + "def test_one():\n"
        "    p = spawn('one')\n"
        "    p.join()\n"
        "    p.wait(timeout=5)\n"
        "    out = p.read()\n"
        "    assert out == 'one'\n\n\n" + second
    )


FIXED_TWO = (
    "def test_two():\n"
    "    p = spawn('two')\n"
    "    p.join()\n"
    "    p.wait(timeout=5)\n"
    "    out = p.read()\n"
    "    assert out == 'two'\n"
)


def _cherry_pick_applies(repo: Path, tmp: Path, commit: str, onto: str) -> bool:
    """The truth: a real ``git cherry-pick --no-commit`` in a throwaway clone."""
    clone = tmp / f"clone-{commit[:8]}-{onto}"
    subprocess.run(["git", "clone", "-q", "--shared", str(repo), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", f"origin/{onto}"], check=True)
    proc = subprocess.run(
        ["git", "-C", str(clone), "cherry-pick", "--no-commit", commit], capture_output=True
    )
    return proc.returncode == 0


def test_lines_found_elsewhere_are_not_reached(tmp_path: Path) -> None:
    """A two-line fix of test_two (join() and wait() before reading, the pypy guard dropped):
    its added lines are test_one's, and the release added a third test with them too. The change
    is not on the release: missing, and a cherry-pick applies (as git's own does)."""
    b = RepoBuilder(tmp_path / "repo")
    b.commit("base", {"tests/test_proc.py": _tests(), "README": "r\n"})
    b.branch("rel")
    fix = b.commit("Fix flaky test_two", {"tests/test_proc.py": _tests(two=FIXED_TWO)})
    b.checkout("rel")
    third = "def test_three():\n    p = spawn('3')\n    p.join()\n    p.wait(timeout=5)\n\n\n"
    b.commit("Add test_three", {"tests/test_proc.py": _tests(extra=third)})
    b.checkout("main")
    got = backports_check(GitRepo(b.path), "main", ["rel"])
    cell = got.result.cell(fix, "rel")
    assert (cell.state, cell.applies, cell.how) == ("missing", True, None), cell
    assert _cherry_pick_applies(b.path, tmp_path, fix, "rel")


def test_change_in_place_is_reached_with_how(tmp_path: Path) -> None:
    """The same fix carried by an unrelated release commit (vendoring a toolkit), the file
    otherwise different (a test added above it): reached (in place), as a real cherry-pick agrees
    (it brings nothing). A release that merged the fix: reached (merged)."""
    b = RepoBuilder(tmp_path / "repo")
    b.commit("base", {"tests/test_proc.py": _tests(), "a.py": "a = 1\n", "b.py": "b = 1\n"})
    b.branch("rel")
    b.branch("topic")
    fix = b.commit("Fix flaky test_two", {"tests/test_proc.py": _tests(two=FIXED_TWO)})
    b.checkout("topic")
    merged = b.commit("Fix b", {"b.py": "b = 2\n"})
    b.checkout("main")
    b.merge("topic", "Merge branch 'topic'")
    b.checkout("rel")
    head = "def test_zero():\n    assert True\n\n\n"
    vendored = "".join(f"vendored_{i} = load('{i}')\n" for i in range(80))
    b.commit(
        "Vendor the toolkit",
        {"vendor/t.py": vendored, "tests/test_proc.py": _tests(extra=head, two=FIXED_TWO)},
    )
    b.merge("topic", "Merge branch 'topic' into rel")
    b.checkout("main")
    got = backports_check(GitRepo(b.path), "main", ["rel"])
    cells = {s: got.result.cell(s, "rel") for s in (fix, merged)}
    assert {s: (c.state, c.how) for s, c in cells.items()} == {
        fix: ("reached", "in place"),
        merged: ("reached", "merged"),
    }
    shown = " ".join(str(x) for row in got.section.tables[0].rows for x in row)
    assert "reached (in place)" in shown and "reached (merged)" in shown
    # The truth: a cherry-pick of the fix onto the release changes nothing.
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--shared", str(b.path), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", "origin/rel"], check=True)
    subprocess.run(["git", "-C", str(clone), "cherry-pick", "--no-commit", fix], check=False)
    diff = subprocess.run(["git", "-C", str(clone), "diff", "HEAD"], capture_output=True)
    assert diff.stdout == b""


def _sec(check: str = "if len(name) > 64:\n        raise ValueError(name)\n") -> str:
    return (
        "def parse_header(name, value):\n    "
        + check.lstrip()
        + "    return name, value\n\n\n"
        + "".join(f"def helper{i}(x):\n    return x + {i}\n\n\n" for i in range(8))
    )


def test_a_merge_is_picked_where_its_commits_are(tmp_path: Path) -> None:
    """A security fix merged into main as a merge commit: the older release picked the merge
    (-m 1 -x), the newer one its only commit, adapted (trailer naming the commit). The merge's row
    is picked on both, and there is no regression finding."""
    b = RepoBuilder(tmp_path / "repo")
    b.commit("base", {"sec.py": _sec("pass\n"), "README": "r\n"})
    b.branch("rel1")
    b.commit("Docs", {"README": "r2\n"})
    b.branch("rel2")
    b.branch("fork-fix")
    b.checkout("fork-fix")
    inner = b.commit("Fix the header check", {"sec.py": _sec()})
    b.checkout("main")
    merge = b.merge("fork-fix", "Merge commit from fork")
    b.checkout("rel1")
    older = b.cherry_pick(merge, "-m", "1", "-x")
    b.checkout("rel2")
    adapted = _sec("if len(name) > 64:\n        raise HeaderError(name)\n")
    newer = b.commit(
        f"Fix the header check\n\n(cherry picked from commit {inner})", {"sec.py": adapted}
    )
    b.checkout("main")
    got = backports_check(GitRepo(b.path), "main", ["rel1", "rel2"])
    on1, on2 = got.result.cell(merge, "rel1"), got.result.cell(merge, "rel2")
    assert (on1.state, on1.pick) == ("picked", older)
    assert (on2.state, on2.pick) == ("picked", newer), on2
    assert not [f for f in got.section.findings if f.kind == "backport-regression"]


def test_one_row_per_change(tmp_path: Path) -> None:
    """An abandoned backport PR (its head only under refs/pull/51/head) holds a copy of main's fix
    (same patch id, another subject); the older release's manual backport names that copy in its
    trailer, the newer release picked main's commit. One row, named by main's commit, picked on
    both releases; listing the copy as a candidate folds it into the same row."""
    b = RepoBuilder(tmp_path / "repo")
    b.commit("base", {"p.py": _sec("pass\n"), "README": "r\n"})
    b.branch("rel1")
    b.commit("Docs", {"README": "r2\n"})
    b.branch("rel2")
    b.branch("pr51", "rel1")
    fix = b.commit("Fix the header parser (#50)", {"p.py": _sec()})
    b.checkout("pr51")
    copy = b.cherry_pick(fix)
    b.repo.git.commit("--amend", "-q", "-m", "[1.x] Backport the parser check")
    copy = b.rev("HEAD")
    b.checkout("main")
    b.repo.git.update_ref("refs/pull/51/head", copy)
    b.repo.git.branch("-D", "pr51")
    b.checkout("rel1")
    older = b.cherry_pick(copy, "-x")
    b.checkout("rel2")
    newer = b.cherry_pick(fix, "-x")
    b.checkout("main")
    repo = GitRepo(b.path)
    got = backports_check(repo, "main", ["rel1", "rel2"])
    rows = [r for r in got.result.rows if fix in (r.sha, *r.also) or copy in (r.sha, *r.also)]
    assert [r.sha for r in rows] == [fix], rows
    assert {n: got.result.cell(fix, n).pick for n in ("rel1", "rel2")} == {
        "rel1": older,
        "rel2": newer,
    }
    assert all(got.result.cell(fix, n).state == "picked" for n in ("rel1", "rel2"))
    listed = backports_check(repo, "main", ["rel1", "rel2"], [CandidateSpec("c:1", ref=copy)])
    (row,) = [r for r in listed.result.rows if fix in (r.sha, *r.also)]
    assert row.sha == fix and copy in row.also and "candidate" in row.reasons
    assert copy not in {r.sha for r in listed.result.rows}


def test_one_row_per_change_id_and_pr(tmp_path: Path) -> None:
    """Rows of one Gerrit Change-Id, or of one PR number, are one row (contents differ); two
    first-parent source commits are never joined."""
    cid = "Change-Id: I" + "ab" * 20
    b = RepoBuilder(tmp_path / "repo")
    b.commit("base", {"p.py": _sec("pass\n"), "q.py": "q = 1\n", "r.py": "r = 1\n"})
    b.branch("rel1")
    b.branch("side")
    fix = b.commit(f"Fix the header parser\n\n{cid}", {"p.py": _sec()})
    pr = b.commit("Fix q (#77)", {"q.py": "q = 2\n"})
    r1 = b.commit("Fix r (#88)", {"r.py": "r = 2\n"})
    r2 = b.commit("Fix r again (#88)", {"r.py": "r = 3\n"})
    b.checkout("side")
    other = b.commit(f"Check header names\n\n{cid}", {"p.py": _sec("assert name\n")})
    other_pr = b.commit("[1.x] Fix q (#77)", {"q.py": "q = 22\n"})
    b.checkout("main")
    listed = [CandidateSpec("c:1", ref=other), CandidateSpec("c:2", ref=other_pr)]
    got = backports_check(GitRepo(b.path), "main", ["rel1"], listed)
    shas = [r.sha for r in got.result.rows]
    assert other not in shas and other_pr not in shas
    assert r1 in shas and r2 in shas  # two source commits of #88: two rows
    by = {r.sha: r for r in got.result.rows}
    assert by[fix].also == (other,) and by[pr].also == (other_pr,)
    assert by[fix].reasons == ("rule", "candidate")


def test_release_that_is_the_source_and_a_repeated_release(tmp_path: Path, run_cli) -> None:
    """--release naming the source branch is exit 2 with the reason; a --release given twice is
    listed once, with a note."""
    b = RepoBuilder(tmp_path / "repo")
    b.commit("base", {"p.py": _sec("pass\n")})
    b.branch("rel1")
    fix = b.commit("Fix the header parser", {"p.py": _sec()})
    b.branch("same-as-main")
    base = ["backports", "--repo", str(b.path), "--source", "main", "--format", "json"]
    for bad in ("main", "same-as-main"):
        code, out, err = run_cli(*base, "--release", "rel1", "--release", bad)
        assert code == 2 and not out, (code, out, err)
        assert len(err.strip().splitlines()) == 1 and f"--release {bad}" in err
        assert "source" in err
    code, out, err = run_cli(*base, "--release", "rel1", "--release", "rel1")
    doc = json.loads(out)
    (section,) = doc["sections"]
    assert [r["release"] for r in section["data"]["releases"]] == ["rel1"]
    assert section["data"]["notes"] == ["--release rel1 given 2 times: listed once"]
    assert "listed once" in section["summary"]
    assert doc["inputs"]["releases"].count("rel1") == 1
    assert {c["release"] for c in section["data"]["cells"] if c["source"] == fix} == {"rel1"}


def test_no_source_action_names_the_release_branch(tmp_path: Path, run_cli) -> None:
    """A pick with no source, the range's HEAD typed as a commit id (or a tag): the action names
    the release branch that holds it, never an id."""
    b = RepoBuilder(tmp_path / "repo")
    b.commit("base", {"p.py": _sec("pass\n")})
    b.branch("release/1.x")
    b.commit("Fix the header parser", {"p.py": _sec()})
    b.checkout("release/1.x")
    fork = b.rev("HEAD")
    pick = b.commit("Tune the release build", {"build.cfg": "opt = 2\n"})
    b.commit("Release notes", {"NOTES": "1.0.1\n"})
    b.repo.git.tag("v1.0.1", pick)
    b.checkout("main")
    for head in (pick, pick[:10], b.rev("release/1.x")):
        code, out, err = run_cli(
            "fidelity", f"{fork}..{head}", "--source", "main", "--repo", str(b.path),
            "--format", "json", "--fail-on", "never", "--no-cache",
        )  # fmt: skip
        assert code == 0, err
        actions = [c["action"] for c in json.loads(out)["causes"] if "made for" in c["action"]]
        assert actions and all("made for release/1.x only" in a for a in actions), actions
        assert not any(pick[:8] in a.split("made for")[1] for a in actions)
    code, out, _ = run_cli(
        "fidelity", f"{fork}..v1.0.1", "--source", "main", "--repo", str(b.path),
        "--format", "json", "--fail-on", "never", "--no-cache",
    )  # fmt: skip
    actions = [c["action"] for c in json.loads(out)["causes"] if "made for" in c["action"]]
    assert actions and all("made for v1.0.1 only" in a for a in actions), actions


def test_in_place_when_a_nearby_context_line_differs(tmp_path: Path) -> None:
    """The release has the docstring fix, but a line three below it is another (an attribute
    added): still reached (in place) — a real cherry-pick changes nothing — while the same file
    without the fix is missing · applies."""
    doc = (
        "class ConnectorError(OSError):\n"
        '    """Connector error.\n\n'
        "    Raised if\n"
        "        {what} can not be established.\n"
        '    """\n\n'
        "{extra}"
        "    def __init__(self, key):\n"
        "        self.key = key\n"
    )
    old = doc.format(what="connection to proxy", extra="")
    b = RepoBuilder(tmp_path / "repo")
    b.commit("base", {"errors.py": old, "README": "r\n"})
    b.branch("rel1")
    b.branch("rel2")
    fix = b.commit("Fix the docstring", {"errors.py": doc.format(what="a connection", extra="")})
    b.checkout("rel1")
    typed = "    args: tuple[str, int]\n\n"
    b.commit(
        "Type the args, docstring too",
        {"errors.py": doc.format(what="a connection", extra=typed), "vendor/v.py": "v = 1\n" * 60},
    )
    b.checkout("rel2")
    b.commit("Type the args", {"errors.py": doc.format(what="connection to proxy", extra=typed)})
    b.checkout("main")
    got = backports_check(GitRepo(b.path), "main", ["rel1", "rel2"])
    placed, lacking = got.result.cell(fix, "rel1"), got.result.cell(fix, "rel2")
    assert (placed.state, placed.how) == ("reached", "in place"), placed
    assert (lacking.state, lacking.applies) == ("missing", True), lacking
    assert _cherry_pick_applies(b.path, tmp_path, fix, "rel2")


def test_a_fix_rebased_by_hand_names_its_source(tmp_path: Path) -> None:
    """A maintenance branch whose fixes are rebased by hand (no trailer, no PR number): one
    reworded and adapted (one changed line of three shared), one with the subject kept and no
    line in common. The same author and author date to the second names the source (fidelity's
    ``authored`` rule), so the matrix says picked; a commit with the same author date by someone
    else, or sharing neither subject nor line, names nothing."""
    from harness.checks.fidelity.check import fidelity_section

    when = 1_700_300_000
    body = "".join(f"value_{i} = compute({i})\n" for i in range(30))
    b = RepoBuilder(tmp_path / "repo")
    b.commit("base", {"m.py": body, "n.py": body, "o.py": body})
    b.branch("rel")
    fixed = (
        body.replace("compute(3)", "compute(3, strict=True)")
        .replace("compute(4)", "compute(4, strict=True)")
        .replace("compute(5)", "compute(5, strict=True)")
    )
    reworded = b.commit("Fix strict parsing of values", {"m.py": fixed}, author_time=when)
    same_subject = b.commit(
        "Fix n on Windows", {"n.py": body.replace("compute(9)", "compute(9, nt=True)")},
        author_time=when + 60,
    )  # fmt: skip
    stranger = b.commit(
        "Fix o ordering", {"o.py": body.replace("compute(7)", "compute(7, order=1)")},
        author_time=when + 120,
    )  # fmt: skip
    b.checkout("rel")
    fork = b.rev("HEAD")
    adapted = (
        body.replace("compute(3)", "compute(3, strict=True)")
        .replace("compute(4)", "compute_strict(4)")
        .replace("compute(5)", "compute_strict(5)")
    )
    p1 = b.commit("Values: parse strictly", {"m.py": adapted}, author_time=when)
    p2 = b.commit(
        "Fix n on Windows", {"n.py": body.replace("compute(9)", "compute(9, os_name='nt')")},
        author_time=when + 60,
    )  # fmt: skip
    p3 = b.commit(
        "Order o", {"o.py": body.replace("compute(7)", "compute(7, order=2)")},
        author="Someone Else <else@example.com>", author_time=when + 120,
    )  # fmt: skip
    b.checkout("main")
    repo = GitRepo(b.path)
    picks = {p["pick"]: p for p in fidelity_section(repo, fork, "rel", "main").data["picks"]}
    assert (picks[p1]["source"], picks[p1]["found_by"]) == (reworded, "authored"), picks[p1]
    assert "another subject" in picks[p1]["note"] and "67%" in picks[p1]["note"]  # 4 of 6 ± lines
    assert (picks[p2]["source"], picks[p2]["found_by"]) == (same_subject, "authored"), picks[p2]
    assert picks[p3]["found_by"] != "authored"
    got = backports_check(repo, "main", ["rel"])
    assert got.result.cell(reworded, "rel").pick == p1
    assert got.result.cell(same_subject, "rel").pick == p2
    del stranger


def test_a_subject_alone_does_not_reach(tmp_path: Path) -> None:
    """A release commit fidelity found no source for, with a row's subject: reached (subject)
    only when it changes one of the row's files ("fix test" on another file is another change)."""
    body = "".join(f"value_{i} = compute({i})\n" for i in range(30))
    b = RepoBuilder(tmp_path / "repo")
    b.commit("base", {"a.py": body, "b.py": body, "c.py": body})
    b.branch("rel")
    generic = b.commit("fix test", {"a.py": body.replace("compute(3)", "compute(3, t=1)")})
    adapted = b.commit(
        "Fix the parser on macOS", {"c.py": body.replace("compute(8)", "compute(8, mac=True)")}
    )
    b.checkout("rel")
    b.commit("Fix test", {"b.py": body.replace("compute(20)", "compute_later(20)")})
    hand = b.commit(
        "[1.x] Fix the parser on macOS",
        {"c.py": body.replace("compute(8)", "compute_mac(8)"), "ci.yml": "os: [macos-12]\n"},
    )
    b.checkout("main")
    got = backports_check(GitRepo(b.path), "main", ["rel"])
    assert got.result.cell(generic, "rel").state == "missing"
    c = got.result.cell(adapted, "rel")
    assert (c.state, c.how, c.pick) in {("reached", "subject", hand), ("picked", None, hand)}, c


def test_head_name_names_the_branch_of_a_typed_commit(tmp_path: Path) -> None:
    """What the actions call a HEAD typed as a commit id: the branch whose tip it is, else the
    branch holding it with the fewest commits after it; a name or tag as typed; an id no branch
    holds stays the id."""
    from harness.git.names import head_name

    b = RepoBuilder(tmp_path / "repo")
    b.commit("base", {"a.py": "a = 1\n"})
    b.branch("release/1.x")
    b.commit("main work", {"a.py": "a = 2\n"})
    b.checkout("release/1.x")
    pick = b.commit("pick", {"b.py": "b = 1\n"})
    tip = b.commit("notes", {"NOTES": "1\n"})
    b.branch("release/1.x-later")
    b.checkout("release/1.x-later")
    b.commit("more", {"NOTES": "2\n"})
    b.repo.git.checkout("-q", "--detach", "HEAD")
    lone = b.commit("detached", {"c.py": "c = 1\n"})
    b.checkout("main")
    repo = GitRepo(b.path)
    assert head_name(repo, tip) == "release/1.x"  # its tip (the later branch holds it too)
    assert head_name(repo, pick[:10]) == "release/1.x"  # one commit after it, not two
    assert head_name(repo, "v1.0") == "v1.0" and head_name(repo, "HEAD") == "HEAD"
    assert head_name(repo, lone) == lone
    # A remote-tracking branch at the commit loses to a local branch that holds it further down.
    b.repo.git.update_ref("refs/remotes/origin/fix", pick)
    assert head_name(repo, pick) == "release/1.x"
