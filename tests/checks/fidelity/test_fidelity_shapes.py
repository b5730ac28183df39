"""Fidelity on every history shape (issue #25): release branches merged forward into main, sibling
backports, single-parent merge picks, one pick carrying two PRs, twin bot commits, PR-number
candidates whose content the pick regenerated."""

from __future__ import annotations

import pytest

from harness.checks.fidelity.check import fidelity_section
from harness.git import GitRepo

A = "".join(f"a_{i} = {i}\n" for i in range(12))
B = "".join(f"b_{i} = {i}\n" for i in range(12))


def _picks(builder, base: str, head: str = "release", source: str = "main") -> dict:
    s = fidelity_section(GitRepo(builder.path), base, head, source)
    return s, {p["pick"]: p for p in s.data["picks"]}


def _blocking(section) -> list:
    return [f for f in section.findings if f.severity in ("P1", "P2")]


def test_a_release_merged_forward_keeps_every_pick(builder):
    builder.commit("base", {"a.py": A, "b.py": B})
    builder.branch("release")
    fix = builder.commit("Fix a_2 (#10)", {"a.py": A.replace("a_2 = 2", "a_2 = 22")})
    builder.checkout("release")
    base = builder.rev("HEAD")
    # patchback's style: the origin's short sha in the subject, no -x trailer
    pick = builder.commit(
        f"[PR #10/{fix[:8]} backport][release] Fix a_2 (#11)",
        {"a.py": A.replace("a_2 = 2", "a_2 = 22")},
    )
    own = builder.commit(
        "Fix b_3 on the release only (#12)", {"b.py": B.replace("b_3 = 3", "b_3 = 33")}
    )
    builder.checkout("main")
    builder.merge("release", "Merge branch 'release'")  # every pick is now reachable from main
    builder.checkout("release")
    later = builder.commit(
        "Fix b_9 not merged forward yet (#13)",
        {"b.py": B.replace("b_3 = 3", "b_3 = 33").replace("b_9 = 9", "b_9 = 99")},
    )
    s, picks = _picks(builder, base)
    assert list(picks) == [pick, own, later]
    assert (picks[pick]["source"], picks[pick]["source_via"], picks[pick]["status"]) == (
        fix,
        "trailer",
        "identical",
    )
    # The merge of the release into main is no source of the release's own commit.
    assert (picks[own]["sources"], picks[own]["status"]) == ([], "forward-merged")
    assert (picks[later]["sources"], picks[later]["status"]) == ([], "no-source")
    assert [f.key for f in _blocking(s)] == [f"{later}:no-source"]
    assert any(f.key == "forward-merged" and f.severity == "info" for f in s.findings)
    assert s.summary.startswith("3 pick(s)")


def test_a_sibling_backport_merged_forward_names_its_origin(builder):
    builder.commit("base", {"a.py": A, "b.py": B})
    builder.branch("3.14")
    builder.branch("3.15")
    origin = builder.commit("Fix a_5 (#20)", {"a.py": A.replace("a_5 = 5", "a_5 = 55")})
    other = builder.commit("Fix b_2 (#23)", {"b.py": B.replace("b_2 = 2", "b_2 = 22")})
    builder.checkout("3.15")
    builder.commit(
        f"[PR #20/{origin[:8]} backport][3.15] Fix a_5 (#21)",
        {"a.py": A.replace("a_5 = 5", "a_5 = 55")},
    )
    sibling = builder.cherry_pick(other, "-x")
    builder.checkout("main")
    builder.merge("3.15", "Merge branch '3.15'")
    builder.checkout("3.14")
    base = builder.rev("HEAD")
    # Names only the PR number, which main's commit and the 3.15 backport both carry.
    by_number = builder.commit("Fix a_5 (#20) (#22)", {"a.py": A.replace("a_5 = 5", "a_5 = 55")})
    # A pick of the 3.15 backport: its trailer names the sibling, whose own trailer names main's.
    of_sibling = builder.commit(
        f"Fix b_2 (#24)\n\n(cherry picked from commit {sibling})",
        {"b.py": B.replace("b_2 = 2", "b_2 = 22")},
    )
    s, picks = _picks(builder, base, "3.14")
    assert (picks[by_number]["sources"], picks[by_number]["status"]) == ([origin], "identical")
    p = picks[of_sibling]
    assert (p["sources"], p["status"]) == ([other], "identical")
    assert f"{sibling[:12]} is a backport of {other[:12]}" in p["note"]
    assert not _blocking(s)


def test_a_single_parent_merge_pick_names_the_pr_it_backports(builder):
    builder.commit("base", {"a.py": A, "b.py": B})
    builder.branch("release")
    source = builder.commit("Speed up the loader (#30)", {"a.py": A.replace("a_1 = 1", "a_1 = 11")})
    builder.commit("Unrelated (#31)", {"b.py": B.replace("b_1 = 1", "b_1 = 11")})
    builder.checkout("release")
    base = builder.rev("HEAD")
    squashed = builder.commit(
        "Merge pull request #35 from bot/auto-backport-of-pr-30-on-release",
        {"a.py": A.replace("a_1 = 1", "a_1 = 11")},
    )
    in_body = builder.commit(
        "Loader speed-up on the release\n\nBackport PR #31 on branch release (Unrelated)",
        {"b.py": B.replace("b_1 = 1", "b_1 = 11").replace("b_2 = 2", "b_2 = 22")},
    )
    s, picks = _picks(builder, base)
    assert (picks[squashed]["sources"], picks[squashed]["source_via"]) == ([source], "pr-number")
    assert picks[squashed]["status"] == "identical"
    unrelated = builder.rev("main")
    assert (picks[in_body]["sources"], picks[in_body]["status"]) == ([unrelated], "superset")


def test_one_pick_carrying_two_prs_names_both(builder):
    builder.commit("base", {"a.py": A, "b.py": B})
    builder.branch("release")
    one = builder.commit("Fix a_3 (#40)", {"a.py": A.replace("a_3 = 3", "a_3 = 33")})
    two = builder.commit("Fix b_4 (#41)", {"b.py": B.replace("b_4 = 4", "b_4 = 44")})
    builder.checkout("release")
    base = builder.rev("HEAD")
    pick = builder.commit(
        "Backport #40 and #41",
        {"a.py": A.replace("a_3 = 3", "a_3 = 33"), "b.py": B.replace("b_4 = 4", "b_4 = 44")},
    )
    s, picks = _picks(builder, base)
    assert (picks[pick]["sources"], picks[pick]["status"]) == ([one, two], "identical")
    assert not _blocking(s)


def test_twin_bot_commits_name_mains_commit(builder):
    req = "".join(f"pkg{i}==1.{i}\n" for i in range(8))
    builder.commit("base", {"requirements.txt": req, "a.py": A})
    builder.branch("release")
    bumped = req.replace("pkg3==1.3", "pkg3==1.4")
    builder.commit("Unrelated (#49)", {"a.py": A.replace("a_1 = 1", "a_1 = 11")})
    twin = builder.commit("Bump pkg3 from 1.3 to 1.4 (#50)", {"requirements.txt": bumped})
    builder.checkout("release")
    base = builder.rev("HEAD")
    pick = builder.commit("Bump pkg3 from 1.3 to 1.4 (#51)", {"requirements.txt": bumped})
    builder.checkout("main")
    builder.merge("release", "Merge branch 'release'")  # the twin and the pick both on main now
    s, picks = _picks(builder, base)
    assert (picks[pick]["sources"], picks[pick]["status"]) == ([twin], "identical")


def test_pr_number_and_subject_name_a_source_whose_lock_file_was_regenerated(builder):
    lock = "".join(f"dep{i}==2.{i} --hash=sha256:{i:064x}\n" for i in range(10))
    builder.commit("base", {"requirements.in": "dep3\n", "requirements.lock": lock, "a.py": A})
    builder.branch("release")
    main_lock = "".join(f"dep{i}==3.{i} --hash=sha256:{i + 100:064x}\n" for i in range(10))
    source = builder.commit(
        "Update dependencies (#60)",
        {"requirements.in": "dep3>=3\n", "requirements.lock": main_lock},
    )
    builder.checkout("release")
    old_lock = "".join(f"dep{i}==1.{i} --hash=sha256:{i + 900:064x}\n" for i in range(10))
    base = builder.commit("Pin the release's own lock (#59)", {"requirements.lock": old_lock})
    release_lock = "".join(f"dep{i}==3.{i} --hash=sha256:{i + 500:064x}\n" for i in range(10))
    pick = builder.commit(
        "Update dependencies (#60) (#61)",
        {"requirements.in": "dep3>=3\n", "requirements.lock": release_lock},
    )
    s, picks = _picks(builder, base)
    p = picks[pick]
    assert (p["sources"], p["source_via"], p["status"]) == ([source], "pr-number", "adapted")
    assert "confirmed by PR number and subject" in p["note"]


def test_compare_without_source_is_a_usage_gap_not_a_pass(builder, run_cli, tmp_path):
    builder.commit("base", {"a.py": A})
    builder.branch("release")
    builder.commit("Fix a_1 (#70)", {"a.py": A.replace("a_1 = 1", "a_1 = 11")})
    builder.checkout("release")
    builder.commit("Fix a_1 (#70) (#71)", {"a.py": A.replace("a_1 = 1", "a_1 = 11")})
    before = builder.snapshot()
    out = tmp_path / "out"
    args = ("compare", "main", "release", "--repo", str(builder.path), "--output-dir", str(out))
    code, stdout, stderr = run_cli(*args, "--format", "none")
    assert code == 2
    assert stderr.count("\n") == 1 and "--source" in stderr and "--no-fidelity" in stderr
    assert not out.exists() and builder.snapshot() == before
    code, stdout, _ = run_cli(*args, "--no-fidelity", "--format", "md")
    assert code == 0
    verdict = next(ln for ln in stdout.splitlines() if ln.startswith("**Verdict:**"))
    assert "Not judged: no pick of the range was judged (--no-fidelity)" in verdict


def test_a_range_of_only_merged_back_commits_is_never_a_silent_pass(builder):
    builder.commit("base", {"a.py": A})
    builder.branch("release")
    builder.commit("Main work (#80)", {"a.py": A.replace("a_1 = 1", "a_1 = 11")})
    builder.checkout("release")
    base = builder.rev("HEAD")
    builder.merge("main", "Merge branch 'main' into release")
    s, picks = _picks(builder, base)
    assert picks == {}
    assert "1 commit(s) of the source branch merged back: not picks" in s.summary
    assert [(f.kind, f.severity) for f in s.findings if f.severity != "info"] == [
        ("range-unjudged", "P1")
    ]


def test_a_twin_made_seconds_after_the_pick_is_its_source_not_a_later_copy(builder):
    req = "".join(f"pkg{i}==1.{i}\n" for i in range(8))
    builder.commit("base", {"requirements.txt": req, "a.py": A})
    builder.branch("release")
    builder.checkout("release")
    base = builder.rev("HEAD")
    bumped = req.replace("pkg5==1.5", "pkg5==1.6")
    bot = "dependabot[bot] <support@github.com>"
    pick = builder.commit(
        "Bump pkg5 from 1.5 to 1.6 (#90)", {"requirements.txt": bumped}, author=bot
    )
    builder.checkout("main")
    # The bot's own PR on main, a few minutes later: a different author date, not a copy of the pick.
    twin = builder.commit(
        "Bump pkg5 from 1.5 to 1.6 (#91)", {"requirements.txt": bumped}, author=bot
    )
    s, picks = _picks(builder, base)
    p = picks[pick]
    assert (p["sources"], p["status"], p["copy_of"]) == ([twin], "identical", None)
    assert not _blocking(s)


def test_a_release_merged_both_ways_judges_only_its_own_line(builder):
    builder.commit("base", {"a.py": A, "b.py": B})
    builder.branch("release")
    fix = builder.commit("Fix a_4 (#100)", {"a.py": A.replace("a_4 = 4", "a_4 = 44")})
    builder.checkout("release")
    base = builder.rev("HEAD")
    pick = builder.cherry_pick(fix, "-x")
    builder.checkout("main")
    mains = builder.commit("Main only (#101)", {"b.py": B.replace("b_7 = 7", "b_7 = 77")})
    builder.checkout("release")
    builder.merge("main", "Merge branch 'main' into release")  # main's commit: not a pick
    own = builder.commit("Release-only tweak (#102)", {"b.py": B.replace("b_7 = 7", "b_7 = 70")})
    builder.checkout("main")
    builder.merge("release", "Merge branch 'release'")  # and the release merged forward
    s, picks = _picks(builder, base)
    assert mains not in picks
    assert [(p, picks[p]["sources"], picks[p]["status"]) for p in picks] == [
        (pick, [fix], "identical"),
        (own, [], "forward-merged"),
    ]
    # main's two commits came in with the merge-back: the fix and the main-only one
    assert "2 commit(s) of the source branch merged back: not picks" in s.summary
    assert not _blocking(s)


@pytest.mark.parametrize("pick_first", [True, False], ids=["merge-after-pick", "merge-on-base"])
def test_an_old_release_joined_with_an_ours_merge_brings_no_picks(builder, pick_first):
    """Whether the merge's first parent is in the range (its tree read from the range) or is the
    range's base (its tree asked of git), the commits the empty merge brought are no picks."""
    builder.commit("base", {"a.py": A, "b.py": B})
    builder.branch("old")
    builder.branch("release")
    fix = builder.commit("Fix a_6 (#110)", {"a.py": A.replace("a_6 = 6", "a_6 = 66")})
    builder.checkout("old")
    old_pick = builder.commit("Old fix of b_8 (#111)", {"b.py": B.replace("b_8 = 8", "b_8 = 88")})
    builder.checkout("release")
    base = builder.rev("HEAD")
    pick = builder.cherry_pick(fix, "-x") if pick_first else None
    builder.repo.git.merge(
        "-s", "ours", "--no-ff", "-q", "-m", "Merge branch 'old' into release", "old"
    )
    pick = pick or builder.cherry_pick(fix, "-x")
    s, picks = _picks(builder, base)
    assert list(picks) == [pick] and old_pick not in picks
    assert "1 commit(s) brought by a merge that changed nothing on this branch" in s.summary
    assert not _blocking(s)


def test_the_subject_names_a_source_the_pick_squashed_with_another(builder):
    builder.commit("base", {"a.py": A, "b.py": B, "docs.txt": "old git:// url\n"})
    builder.branch("release")
    builder.commit("GitHub no longer supports git://", {"docs.txt": "new https:// url\n"})
    named = builder.commit(
        "Fix git installation instructions (#2587)", {"a.py": A + "install = 'https'\n"}
    )
    builder.checkout("release")
    base = builder.rev("HEAD")
    # Both main commits in one release commit, with main's second subject and its own PR number.
    pick = builder.commit(
        "Fix git installation instructions (#2586)",
        {"docs.txt": "new https:// url\n", "a.py": A + "install = 'https'\n"},
    )
    s, picks = _picks(builder, base)
    p = picks[pick]
    assert (p["sources"], p["source_via"], p["status"]) == ([named], "subject", "superset")


def test_a_unique_subject_names_a_source_backported_more_than_a_year_later(builder):
    builder.commit("base", {"a.py": A, "b.py": B})
    builder.branch("release")
    source = builder.commit(
        "Switch to the C bindings (#2099)", {"a.py": A.replace("a_9 = 9", "a_9 = 99")}
    )
    builder._tick += 500 * 86400  # fifteen months on
    builder.commit("Later work on main (#2300)", {"b.py": B.replace("b_1 = 1", "b_1 = 11")})
    builder.checkout("release")
    base = builder.rev("HEAD")
    pick = builder.commit(
        "[1.26] Switch to the C bindings",
        {"a.py": A.replace("a_9 = 9", "a_9 = 99").replace("a_10 = 10", "a_10 = 100")},
    )
    s, picks = _picks(builder, base)
    p = picks[pick]
    assert (p["sources"], p["source_via"], p["status"]) == ([source], "subject", "superset")
