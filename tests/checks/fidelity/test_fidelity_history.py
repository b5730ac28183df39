"""Verdicts on release-branch histories (issue #10): merge-commit sources, sources reachable from
HEAD after a merge-back, completion across the range, follow-ups not picked, release commits."""

from __future__ import annotations

from harness.checks.fidelity.check import fidelity_check, fidelity_section
from harness.git import GitRepo

A = "".join(f"a_{i} = {i}\n" for i in range(10))
B = "".join(f"b_{i} = {i}\n" for i in range(10))


def _merge_pr(
    builder, number: int, title: str, commits: list[tuple[str, dict[str, str]]]
) -> tuple[str, list[str]]:
    """A PR branch with ``commits``, merged into main with a merge commit (GitHub's message)."""
    builder.branch(f"pr{number}", "main")
    builder.checkout(f"pr{number}")
    inner = [builder.commit(msg, files) for msg, files in commits]
    builder.checkout("main")
    merge = builder.merge(
        f"pr{number}", f"Merge pull request #{number} from dev/pr{number}\n\n{title}"
    )
    return merge, inner


def test_a_pr_merged_with_a_merge_commit_is_one_source(builder):
    builder.commit("base", {"a.py": A, "b.py": B, "c.py": "c = 1\n"})
    builder.branch("release")
    builder.commit("unrelated (#1)", {"c.py": "c = 2\n"})
    a1, b1 = A.replace("a_3 = 3", "a_3 = 33"), B.replace("b_4 = 4", "b_4 = 44")
    merge, inner = _merge_pr(
        builder, 10, "Widen the limits", [("Widen a", {"a.py": a1}), ("Widen b", {"b.py": b1})]
    )
    a2 = a1.replace("a_7 = 7", "a_7 = 77")
    merge2, inner2 = _merge_pr(
        builder,
        11,
        "Tune the seven",
        [("Tune a_7 first", {"a.py": a2.replace("77", "70")}), ("Tune a_7 again", {"a.py": a2})],
    )
    builder.checkout("release")
    base = builder.rev("HEAD")
    by_number = builder.commit(
        "Widen the limits (#10)", {"a.py": a1, "b.py": b1}
    )  # the whole PR, squashed
    by_content = builder.commit("Tune a_7 on the release", {"a.py": a2})  # no number, no trailer
    s = fidelity_section(GitRepo(builder.path), base, "release", "main")
    picks = {p["pick"]: p for p in s.data["picks"]}
    p = picks[by_number]
    assert (p["source"], p["source_via"], p["status"]) == (merge, "merge", "identical")
    assert "pr-number" in p["note"]
    assert [c["sha"] for c in p["pr_commits"]] == inner
    q = picks[by_content]
    assert (q["source"], q["source_via"], q["status"]) == (merge2, "merge", "identical")
    assert [c["subject"] for c in q["pr_commits"]] == ["Tune a_7 first", "Tune a_7 again"]
    assert not [f for f in s.findings if f.severity in ("P1", "P2")]
    assert any("the PR behind merge" in d.summary and inner[0][:12] in d.body for d in s.details)


def test_sources_reachable_from_head_after_a_merge_back(builder):
    builder.commit("base", {"a.py": A, "b.py": B})
    builder.branch("release")
    s20 = builder.commit("Fix a_2 (#20)", {"a.py": A.replace("a_2 = 2", "a_2 = 22")})
    builder.commit("Main only (#21)", {"b.py": B.replace("b_1 = 1", "b_1 = 11")})
    builder.checkout("release")
    base = builder.rev("HEAD")
    p20 = builder.commit(
        "[release] Fix a_2 (#20) (#30)", {"a.py": A.replace("a_2 = 2", "a_2 = 22")}
    )
    builder.merge(
        "main", "Merge branch 'main' into release"
    )  # s20 and #21 are now ancestors of HEAD
    builder.checkout("main")
    s22 = builder.commit(
        "Fix b_5 (#22)", {"b.py": B.replace("b_1 = 1", "b_1 = 11").replace("b_5 = 5", "b_5 = 55")}
    )
    builder.checkout("release")
    p22 = builder.cherry_pick(s22, "-x")
    repo = GitRepo(builder.path)
    for b in (base, "main"):
        s = fidelity_section(repo, b, "release", "main")
        # Main's commits that the merge brought in are not picks; both picks find their source.
        got = [(p["pick"], p["source"], p["status"]) for p in s.data["picks"]]
        assert got == [(p20, s20, "identical"), (p22, s22, "identical")], b
        assert not [f for f in s.findings if f.severity in ("P1", "P2")], b


def test_a_source_pr_is_judged_against_the_union_of_its_picks(builder):
    builder.commit("base", {"a.py": A, "b.py": B})
    builder.branch("release")
    a1, b1 = A.replace("a_1 = 1", "a_1 = 10"), B.replace("b_1 = 1", "b_1 = 10")
    src = builder.commit("Fix a and b (#60)", {"a.py": a1, "b.py": b1})
    builder.checkout("release")
    base = builder.rev("HEAD")
    first = builder.commit("Fix a and b (#60) (#61)", {"a.py": a1})  # b.py forgotten
    mid = builder.commit("Release notes", {"NOTES": "notes\n"})
    last = builder.commit("Fix b too (#60) (#62)", {"b.py": b1})  # the rest, in a later pick
    s = fidelity_section(GitRepo(builder.path), base, "release", "main")
    picks = {p["pick"]: p for p in s.data["picks"]}
    assert picks[first]["source"] == picks[last]["source"] == src
    assert picks[first]["status"] == "subset" and picks[first]["completed_by"] == [last]
    assert picks[last]["completed_by"] == [first]
    kinds = {(f.kind, f.severity) for f in s.findings if f.key.startswith((first, last))}
    assert kinds == {("pick-completed", "info")}
    # The control: without the later pick the first one is a P1 subset again.
    s2 = fidelity_section(GitRepo(builder.path), base, mid, "main")
    assert any(f.kind == "pick-subset" and f.severity == "P1" for f in s2.findings)


def test_follow_ups_on_the_source_branch_not_picked(builder):
    code = "def parse(x):\n    return x\n"
    builder.commit(
        "base",
        {
            "parser.py": code,
            "tests/test_parser.py": "def test(): pass\n",
            "docs/p.md": "p\n",
            "other.py": "o = 1\n",
        },
    )
    builder.branch("release")
    fixed = "def parse(x):\n    text = x.strip()\n    return text.lower()\n"
    src = builder.commit(
        "Fix the parser (#50)",
        {
            "parser.py": fixed,
            "tests/test_parser.py": "def test(): pass\ndef test_strip(): assert parse(' a ') == 'a'\n",
        },
    )
    f1 = builder.commit(
        f"Handle None in the parser\n\nFixes: {src[:10]}",
        {"parser.py": fixed.replace("text = x.strip()", "text = (x or '').strip()")},
    )
    f2 = builder.commit("Document the parser (follow-up to #50)", {"docs/p.md": "p strips\n"})
    tighter = "def test(): pass\ndef test_strip(): assert parse(' a ') == 'a' != ''\n"
    f3 = builder.commit("Tighten a test", {"tests/test_parser.py": tighter})
    builder.commit("Unrelated (#52)", {"other.py": "o = 2\n"})
    f5 = builder.commit(
        f"Lower-case only ASCII\n\nFixes: {src}",
        {
            "parser.py": fixed.replace("text = x.strip()", "text = (x or '').strip()").replace(
                "text.lower()", "text.lower()  # ascii"
            )
        },
    )
    builder.checkout("release")
    base = builder.rev("HEAD")
    builder.cherry_pick(src, "-x")
    builder.commit("Lower-case note", {"other.py": "o = 1  # release\n"})
    s = fidelity_section(GitRepo(builder.path), base, "release", "main")
    got = [(f["sha"], f["severity"], f["why"].split(" ")[0]) for f in s.data["follow_ups"]]
    # #26: a commit that names no source (f3 only changes lines the source added) is a candidate,
    # info in a "worth a look" list, no longer a P2 follow-up.
    assert got == [
        (f1, "P1", "Fixes:"),
        (f2, "P2", "follow-up"),
        (f3, "info", "changes"),
        (f5, "P1", "Fixes:"),
    ]
    assert [f.severity for f in s.findings if f.kind == "follow-up-not-picked"] == [
        "P1",
        "P2",
        "P1",
    ]
    (look,) = [f for f in s.findings if f.kind == "follow-up-worth-a-look"]
    assert look.severity == "info" and f3[:12] in look.detail and f1[:12] not in look.detail
    # Picking a follow-up takes it off the list.
    builder.cherry_pick(f1, "-x")
    s = fidelity_section(GitRepo(builder.path), base, "release", "main")
    assert f1 not in [f["sha"] for f in s.data["follow_ups"]]


def test_content_only_follow_ups_are_a_ranked_info_list(builder):
    """#26: a later commit that rewrites a source's code lines but names nothing (a license-header
    sweep, a re-format) is info, never P1; one with the source's ``Fixes #N`` is an info follow-up
    (#40: it names neither the source nor its PR);
    candidates are ranked (code the pick carries first) and capped in the finding."""
    code = "".join(f"def step_{i}(x):\n    return x + {i}  # step number {i}\n" for i in range(8))
    builder.commit("base", {"core.py": "# core\n", "docs/a.md": "a\n"})
    builder.branch("release")
    src = builder.commit("Add the steps (#40)\n\nFixes #7", {"core.py": code})
    sweep = builder.commit(
        "Update license headers", {"core.py": code.replace("# step number", "# SPDX step")}
    )
    same_issue = builder.commit(
        "Guard step 0\n\nThis fixes #7 for None.",
        {"core.py": code.replace("return x + 0", "return (x or 0) + 0")},
    )
    now = code.replace("return x + 0", "return (x or 0) + 0")
    tweaks = []
    for k in (2, 3, 4, 6, 7):
        now = now.replace(f"return x + {k}  #", f"return x + {k}  # tweaked")
        tweaks.append(builder.commit(f"Tweak step {k}", {"core.py": now}))
    fix = builder.commit(
        "Fix the bound of step 5", {"core.py": now.replace("return x + 5", "return x + 5 + 0")}
    )
    builder.checkout("release")
    base = builder.rev("HEAD")
    builder.cherry_pick(src, "-x")
    s = fidelity_section(GitRepo(builder.path), base, "release", "main")
    named = [
        (f.severity, f.key.rpartition(":")[2])
        for f in s.findings
        if f.kind == "follow-up-not-picked"
    ]
    # #40: naming only the issue the source fixed names neither the source nor its PR: info.
    assert named == [("info", same_issue)]
    (look,) = [f for f in s.findings if f.kind == "follow-up-worth-a-look"]
    assert look.severity == "info" and look.title.startswith("7 later source commit(s)")
    assert look.detail.startswith(fix[:12])  # a subject that says "fix" ranks first
    assert look.detail.index(sweep[:12]) < look.detail.index(tweaks[0][:12])  # then the share/hits
    assert look.detail.endswith("… 2 more in the table")
    rows = {f["sha"]: f for f in s.data["follow_ups"]}
    assert rows[same_issue]["why"] == "fixes the same issue #7"
    assert rows[sweep]["severity"] == "info" and rows[sweep]["names_source"] is False
    assert not [f for f in s.findings if f.severity == "P1" and sweep[:12] in f.title]


def test_a_follow_up_an_adapted_pick_already_carries_is_not_listed(builder):
    """numpy 2.3.x: the pick of "Address SME and FPSR" was adapted with the later "Fix version
    check" already in it; that follow-up (every line it adds is in the pick) is not listed."""
    body = "".join(f"def g_{i}(v):\n    return v * {i}  # scale {i}\n" for i in range(5))
    builder.commit("base", {"blas.c": "/* blas */\n"})
    builder.branch("release")
    check = "    if(major >= 15 && minor >= 4){\n"
    fixed = "    if (major > 15 || (major == 15 && minor >= 4)) {\n"
    src = builder.commit("Address SME (#60)", {"blas.c": body + check})
    later = builder.commit("BUG: Fix version check", {"blas.c": body + fixed})
    builder.checkout("release")
    base = builder.rev("HEAD")
    builder.branch("plain")
    builder.commit(f"Address SME\n\n(cherry picked from commit {src})", {"blas.c": body + fixed})
    s = fidelity_section(GitRepo(builder.path), base, "release", "main")
    assert later not in [f["sha"] for f in s.data["follow_ups"]]
    # The control: a pick without the fix lists it.
    builder.checkout("plain")
    builder.cherry_pick(src, "-x")
    s = fidelity_section(GitRepo(builder.path), base, "plain", "main")
    assert later in [f["sha"] for f in s.data["follow_ups"]]


def test_a_merge_of_main_inside_the_source_pr_is_not_the_prs_lines(builder):
    """#26: ``Merge branch 'main' into feature`` inside a source PR brings main's lines; a later
    commit changing those lines is no follow-up of the PR."""
    other = "".join(f"value_{i} = compute({i})  # other line {i}\n" for i in range(6))
    builder.commit("base", {"feat.py": "f = 0\n", "other.py": "o = 0\n"})
    builder.branch("release")
    builder.branch("feature")
    builder.commit("Other work (#30)", {"other.py": other})
    builder.checkout("feature")
    builder.commit("Start the feature", {"feat.py": "f = 1  # the feature itself\n"})
    builder.merge("main", "Merge branch 'main' into feature")
    builder.commit("Finish the feature", {"feat.py": "f = 2  # the feature itself, done\n"})
    builder.checkout("main")
    pr = builder.merge("feature", "Merge pull request #31 from me/feature\n\nThe feature")
    later = builder.commit("Rework other", {"other.py": other.replace("compute(", "compute_fast(")})
    builder.checkout("release")
    base = builder.rev("HEAD")
    builder.cherry_pick(pr, "-m1", "-x")
    s = fidelity_section(GitRepo(builder.path), base, "release", "main")
    assert later not in [f["sha"] for f in s.data["follow_ups"]]


def test_a_later_copy_of_the_branchs_own_release_commit_is_info(builder):
    log = "# Changes\n"
    builder.commit(
        "base", {"version.py": '__version__ = "2.0.0"\n', "CHANGELOG.md": log, "a.py": A}
    )
    builder.branch("release")
    builder.commit(
        "Start 2.1 (#70)",
        {"version.py": '__version__ = "2.1.0.dev0"\n', "a.py": A.replace("a_1", "a_one")},
    )
    builder.checkout("release")
    base = builder.rev("HEAD")
    entry = "".join(f"- fixed problem number {i} in the widget\n" for i in range(5))
    rel = builder.commit(
        "Release 2.0.1",
        {"version.py": '__version__ = "2.0.1"\n', "CHANGELOG.md": log + "\n## 2.0.1\n" + entry},
    )
    builder.checkout("main")  # main copies the release notes afterwards (its own version stays)
    builder.commit(
        "Release notes for 2.0.1 (#71)",
        {
            "CHANGELOG.md": log + "\n## 2.0.1\n" + entry,
            "version.py": '__version__ = "2.1.0.dev1"\n',
        },
    )
    s = fidelity_section(GitRepo(builder.path), base, "release", "main")
    (p,) = s.data["picks"]
    assert p["pick"] == rel and p["copy_of"] == rel
    # #40: the copy is named as such, never as the pick's source or its status.
    assert (p["source"], p["sources"], p["source_via"], p["status"]) == (
        None,
        [],
        None,
        "no-source",
    )
    assert p["forward_port"] == {"sha": builder.rev("main"), "of": rel, "status": "adapted"}
    assert [(f.kind, f.severity) for f in s.findings] == [("pick-release-commit", "info")]
    # what fidelity hands on names no source either: tornado 6.4.2's "Copy 6.4.2 release notes to
    # master" was the tests section's newest source, so master's later tests ran as the source's
    result = fidelity_check(GitRepo(builder.path), base, "release", "main").result
    assert result.sources == ((rel, ()),)


def test_a_pr_title_and_an_author_date_name_the_source(builder):
    builder.commit("base", {"a.py": A, "b.py": B})
    builder.branch("release")
    a1 = A.replace("a_4 = 4", "a_4 = 44").replace("a_5 = 5", "a_5 = 55")
    steps = [
        ("Loader: a_4", {"a.py": A.replace("a_4 = 4", "a_4 = 44")}),
        ("Loader: a_5", {"a.py": a1}),
    ]
    merge, inner = _merge_pr(builder, 12, "Speed up the loader", steps)
    b1 = B.replace("b_2 = 2", "b_2 = 22").replace("b_3 = 3", "b_3 = 33")
    authored = builder.commit("Tune b (#13)", {"b.py": b1}, author_time=1_700_500_000)
    builder.checkout("release")
    base = builder.rev("HEAD")
    # Adapted, so no patch id matches: the PR title and the author date are what name the sources.
    by_title = builder.commit("Speed up the loader", {"a.py": a1.replace("a_9 = 9", "a_9 = 99")})
    by_date = builder.commit(
        "Tune b", {"b.py": B.replace("b_2 = 2", "b_2 = 22")}, author_time=1_700_500_000
    )
    s = fidelity_section(GitRepo(builder.path), base, "release", "main")
    picks = {p["pick"]: p for p in s.data["picks"]}
    t = picks[by_title]
    assert (t["source"], t["source_via"], t["found_by"], t["status"]) == (
        merge,
        "merge",
        "title",
        "superset",
    )
    assert [c["sha"] for c in t["pr_commits"]] == inner
    d = picks[by_date]
    assert (d["source"], d["source_via"], d["status"]) == (authored, "authored", "subset")


def test_the_one_source_commit_with_the_picks_subject_names_it(builder):
    """A PR landed on main as several commits (no PR number in their subjects) and was squashed
    onto the release branch with an adapted line: its title finds the commit that carries it,
    when exactly one source commit has that subject and the content is similar enough."""
    builder.commit("base", {"a.py": A, "b.py": B, "c.py": "c = 1\n"})
    builder.branch("release")
    a1 = (
        A.replace("a_1 = 1", "a_1 = 11")
        .replace("a_2 = 2", "a_2 = 22")
        .replace("a_3 = 3", "a_3 = 33")
    )
    titled = builder.commit("Move the loader to the new API", {"a.py": a1})
    builder.commit("Unrelated cleanup", {"c.py": "c = 2\n"})
    b1 = (
        B.replace("b_1 = 1", "b_1 = 11")
        .replace("b_2 = 2", "b_2 = 22")
        .replace("b_3 = 3", "b_3 = 33")
    )
    builder.commit("Fix test", {"b.py": b1})
    builder.commit("Fix test", {"b.py": b1.replace("b_9 = 9", "b_9 = 99")})
    builder.commit("Drop the old flag", {"c.py": "c = 3\n"})
    builder.checkout("release")
    base = builder.rev("HEAD")
    adapted = builder.commit(
        "[release] Move the loader to the new API (#20)",
        {"a.py": a1.replace("a_3 = 33", "a_3 = 30")},
    )
    ambiguous = builder.commit("Fix test (#21)", {"b.py": b1.replace("b_3 = 33", "b_3 = 30")})
    unlike = builder.commit("Drop the old flag (#22)", {"a.py": a1.replace("a_8 = 8", "a_8 = 88")})
    s = fidelity_section(GitRepo(builder.path), base, "release", "main")
    picks = {p["pick"]: p for p in s.data["picks"]}
    t = picks[adapted]
    assert (t["source"], t["source_via"], t["found_by"], t["status"]) == (
        titled,
        "subject",
        "subject",
        "adapted",
    )
    assert 0.7 <= t["confidence"] < 1.0
    # Two "Fix test" commits: the subject names neither; similarity still finds the closer one.
    assert picks[ambiguous]["source_via"] == "similarity"
    # The one "Drop the old flag" changed another file: the subject alone is no source.
    assert picks[unlike]["source_via"] != "subject"
    assert picks[unlike]["source"] != builder.rev("main")


def test_a_fix_backported_before_its_pr_landed_is_judged_as_usual(builder):
    builder.commit("base", {"a.py": A})
    builder.branch("release")
    builder.checkout("release")
    base = builder.rev("HEAD")
    fixed = (
        A.replace("a_1 = 1", "a_1 = 10")
        .replace("a_2 = 2", "a_2 = 20")
        .replace("a_3 = 3", "a_3 = 30")
    )
    early = builder.commit("Fix a_1 to a_3 early", {"a.py": fixed})  # taken from the open PR
    builder.checkout("main")  # the PR lands later, with one more line
    src = builder.commit("Fix a_1 to a_4 (#72)", {"a.py": fixed.replace("a_4 = 4", "a_4 = 40")})
    s = fidelity_section(GitRepo(builder.path), base, "release", "main")
    (p,) = s.data["picks"]
    assert (p["pick"], p["source"], p["status"], p["copy_of"]) == (early, src, "subset", None)
    assert [(f.kind, f.severity) for f in s.findings] == [("pick-subset", "P1")]


def test_the_branchs_own_release_commits_are_info_only_when_they_touch_release_files(builder):
    """ipython 8.x: "release 8.39.0" and "back to dev" edit only the version file and have no source
    on main — info, not a P2 each; the same subject over code stays a P2 no-source (the control)."""
    builder.commit("base", {"pkg/release.py": "version = '1.0'\n", "pkg/core.py": "x = 1\n"})
    builder.branch("release")
    builder.commit("main moves on", {"pkg/core.py": "x = 2\n"})
    builder.checkout("release")
    base = builder.repo.git.rev_parse("HEAD")
    own = builder.commit("release 1.0.1", {"pkg/release.py": "version = '1.0.1'\n"})
    dev = builder.commit("back to dev", {"pkg/release.py": "version = '1.0.2.dev0'\n"})
    code = builder.commit("release 1.0.2", {"pkg/core.py": "x = 3\n"})
    s = fidelity_section(GitRepo(builder.path), base, "release", "main")
    kinds = {f.key.split(":")[0]: (f.kind, f.severity) for f in s.findings if ":" in f.key}
    assert kinds[own] == ("pick-release-commit", "info")
    assert kinds[dev] == ("pick-release-commit", "info")
    nosource = [f for f in s.findings if f.kind == "pick-no-source"]
    assert [f.severity for f in nosource] == ["P2"] and code[:12] in nosource[0].title


def test_numpys_prepare_for_further_development_is_the_branchs_own_release_commit(builder):
    """numpy 2.3.x: "MAINT: Prepare 2.3.x for further development" after each release bumps
    pyproject.toml and pavement.py and starts the next notes (or drops tools/write_release.py):
    info. The same subject over code stays a P2 no-source."""
    builder.commit("base", {"pyproject.toml": 'version = "2.3.0"\n', "pavement.py": "V = '2.3.0'\n",
                            "tools/write_release.py": "print()\n", "numpy/core.py": "x = 1\n"})  # fmt: skip
    builder.branch("release")
    builder.commit("main moves on", {"numpy/core.py": "x = 2\n"})
    builder.checkout("release")
    base = builder.rev("HEAD")
    bump = builder.commit(
        "MAINT: Prepare 2.3.x for further development",
        {"pyproject.toml": 'version = "2.3.1"\n', "pavement.py": "V = '2.3.1'\n",
         "doc/source/release/2.3.1-notes.rst": "2.3.1\n"},
    )  # fmt: skip
    tooling = builder.commit(
        "MAINT: Prepare 2.3.x for further development.", {"tools/write_release.py": "pass\n"}
    )
    code = builder.commit(
        "MAINT: Prepare 2.3.x for further development", {"numpy/core.py": "x = 3\n"}
    )
    s = fidelity_section(GitRepo(builder.path), base, "release", "main")
    kinds = {f.key.split(":")[0]: (f.kind, f.severity) for f in s.findings if ":" in f.key}
    assert kinds[bump] == ("pick-release-commit", "info")
    assert kinds[tooling] == ("pick-release-commit", "info")
    assert kinds[code] == ("pick-no-source", "P2")
