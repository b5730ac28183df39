"""Fidelity on review systems other than GitHub (issue #40): trailers naming commits the source
never had, Gerrit Change-Ids, release notes that look alike, bot twins, two-PR picks."""

from __future__ import annotations

from harness.checks.fidelity.check import fidelity_section
from harness.git import GitRepo

A = "".join(f"a_{i} = {i}\n" for i in range(12))
B = "".join(f"b_{i} = {i}\n" for i in range(12))
T = "".join(f"def test_{i}():\n    assert {i}\n" for i in range(6))
CID = "I" + "0123456789abcdef" * 2 + "01234567"


def _picks(builder, base: str, head: str = "release", source: str = "main"):
    s = fidelity_section(GitRepo(builder.path), base, head, source)
    return s, {p["pick"]: p for p in s.data["picks"]}


def _blocking(section) -> list:
    return [f for f in section.findings if f.severity in ("P1", "P2")]


def test_a_trailer_naming_a_pr_head_the_merge_rewrote_is_compared_with_what_landed(builder):
    builder.commit("base", {"a.py": A, "test_a.py": T, "test_b.py": T})
    builder.branch("release")
    builder.branch("pr")
    # The PR's head as the author pushed it: the fix and its test in test_a.py.
    builder.checkout("pr")
    head = builder.commit(
        "Fix a_4 (#7)",
        {"a.py": A.replace("a_4 = 4", "a_4 = 44"), "test_a.py": T + "def test_a4():\n    pass\n"},
    )
    # What landed on main: the test moved to test_b.py and asserts more; the PR ref is dropped.
    builder.checkout("main")
    landed = builder.commit(
        "Fix a_4 (#7)",
        {
            "a.py": A.replace("a_4 = 4", "a_4 = 44"),
            "test_b.py": T + "def test_a4():\n    assert a_4 == 44\n",
        },
    )
    builder.checkout("release")
    base = builder.rev("HEAD")
    pick = builder.cherry_pick(head, "-x")
    builder.repo.git.branch("-D", "pr")
    s, picks = _picks(builder, base)
    p = picks[pick]
    assert (p["sources"], p["source_via"]) == ([landed], "pr-number")
    assert p["status"] == "adapted"  # not the identical the named head would have said
    assert f"trailer names {head[:12]}, not on the source; landed as {landed[:12]}" in p["note"]
    assert [f.kind for f in _blocking(s)] == ["pick-adapted"]


def test_a_trailer_on_another_branch_with_no_landed_copy_is_no_source(builder):
    builder.commit("base", {"a.py": A, "b.py": B})
    builder.branch("release")
    builder.branch("stable-2")
    builder.checkout("stable-2")
    other = builder.commit("Pin a_1 on the old branch", {"a.py": A.replace("a_1 = 1", "a_1 = 11")})
    tagged = builder.commit("[stable-only] Pin b_1", {"b.py": B.replace("b_1 = 1", "b_1 = 11")})
    builder.checkout("release")
    base = builder.rev("HEAD")
    pick = builder.cherry_pick(other, "-x")
    only = builder.cherry_pick(tagged, "-x")
    s, picks = _picks(builder, base)
    p = picks[pick]
    assert (p["sources"], p["source_via"], p["status"]) == ([], None, "no-source")
    assert f"trailer names {other[:12]}, not on the source; no landed copy found" in p["note"]
    assert [f.key for f in _blocking(s)] == [f"{pick}:no-source"]
    # OpenStack's "[stable-only]": made for the branch alone, info.
    assert picks[only]["status"] == "no-source"
    assert [(f.kind, f.severity) for f in s.findings if f.key.startswith(only)] == [
        ("pick-release-commit", "info")
    ]


def test_gerrit_rebased_the_change_before_it_merged_same_change_id(builder):
    builder.commit("base", {"a.py": A, "b.py": B})
    builder.branch("release")
    builder.branch("review")
    # The change as reviewed (patch set 1): its id is what the stable pick's trailer names.
    builder.checkout("review")
    reviewed = builder.commit(
        f"Fix a_6\n\nChange-Id: {CID}\n", {"a.py": A.replace("a_6 = 6", "a_6 = 66")}
    )
    builder.checkout("main")
    builder.commit(
        "Other change\n\nChange-Id: I" + "f" * 40 + "\n", {"b.py": B.replace("b_1 = 1", "b_1 = 11")}
    )
    # Gerrit rebased it onto the new tip before merging: another id, the same Change-Id.
    merged = builder.commit(
        f"Fix a_6\n\nChange-Id: {CID}\n", {"a.py": A.replace("a_6 = 6", "a_6 = 66")}
    )
    builder.checkout("release")
    base = builder.rev("HEAD")
    pick = builder.commit(
        f"Fix a_6\n\nChange-Id: {CID}\n(cherry picked from commit {reviewed})\n",
        {"a.py": A.replace("a_6 = 6", "a_6 = 66")},
    )
    builder.repo.git.branch("-D", "review")
    builder.repo.git.reflog("expire", "--expire=now", "--all")
    builder.repo.git.gc("--prune=now", "-q")
    s, picks = _picks(builder, base)
    p = picks[pick]
    assert (p["sources"], p["source_via"], p["status"]) == ([merged], "change-id", "identical")
    assert (
        f"trailer names {reviewed[:12]}, not in this repository; landed as {merged[:12]}"
        in p["note"]
    )
    assert not _blocking(s)


def test_a_change_id_alone_names_the_source(builder):
    builder.commit("base", {"a.py": A})
    builder.branch("release")
    # Main's commit differs from the pick by one more line: no patch id, no subject, no number.
    merged = builder.commit(
        f"Fix a_2 and a_3\n\nChange-Id: {CID}\n",
        {"a.py": A.replace("a_2 = 2", "a_2 = 22").replace("a_3 = 3", "a_3 = 33")},
    )
    builder.checkout("release")
    base = builder.rev("HEAD")
    pick = builder.commit(
        f"Fix a_2 on the release\n\nChange-Id: {CID.lower()}\n",
        {"a.py": A.replace("a_2 = 2", "a_2 = 22")},
    )
    s, picks = _picks(builder, base)
    p = picks[pick]
    assert (p["sources"], p["source_via"], p["status"]) == ([merged], "change-id", "subset")


def test_another_releases_notes_are_no_source_of_this_ones(builder):
    intro = "".join(f"Highlight line {i} of the usual release notes.\n" for i in range(10))
    index = "1.1.0\n1.2.0\n"
    builder.commit("base", {"a.py": A, "doc/release/index.rst": index})
    builder.branch("release")
    # main's notes for its own next release: the same boilerplate in another file, and the same
    # index page.
    builder.commit(
        "Prepare release notes for v1.3.0",
        {
            "doc/release/1.3.0-notes.rst": "v1.3.0\n" + intro + "Fixed #12.\n",
            "doc/release/index.rst": index + "1.3.0\n",
        },
    )
    builder.checkout("release")
    base = builder.rev("HEAD")
    pick = builder.commit(
        "Prepare release notes for v1.2.1",
        {
            "doc/release/1.2.1-notes.rst": "v1.2.1\n" + intro + "Fixed #11.\n",
            "doc/release/index.rst": index + "1.2.1\n",
        },
    )
    s, picks = _picks(builder, base)
    p = picks[pick]
    assert (p["sources"], p["source_via"], p["status"]) == ([], None, "no-source")
    assert [(f.kind, f.severity) for f in s.findings if f.key.startswith(pick)] == [
        ("pick-release-commit", "info")
    ]
    assert not _blocking(s)


def test_a_release_commit_that_only_moves_versions_is_release_only(builder):
    make = "RELEASE_VERSION=v0.13.4\nIMAGE ?= kueue\n"
    chart = 'version: "0.13.4"\nappVersion: "v0.13.4"\nname: kueue\n'
    builder.commit("base", {"Makefile": make, "charts/Chart.yaml": chart, "a.go": "package a\n"})
    builder.branch("release")
    builder.checkout("release")
    base = builder.rev("HEAD")
    bump = builder.commit(
        "Prepare release v0.13.5 (#7087)",
        {
            "Makefile": make.replace("0.13.4", "0.13.5"),
            "charts/Chart.yaml": chart.replace("0.13.4", "0.13.5"),
            "CHANGELOG/CHANGELOG-0.13.md": "## v0.13.5\n- Fixed the scheduler.\n",
        },
    )
    over_code = builder.commit(
        "Prepare release v0.13.6 (#7088)",
        {"Makefile": make.replace("0.13.4", "0.13.6"), "a.go": "package a\n\nvar x = 1\n"},
    )
    s, picks = _picks(builder, base)
    assert [(f.kind, f.severity) for f in s.findings if f.key.startswith(bump)] == [
        ("pick-release-commit", "info")
    ]
    assert [f.key for f in _blocking(s)] == [f"{over_code}:no-source"]


def _bot_twins(builder, apart: int):
    req = "".join(f"pkg{i}>=1.{i}\n" for i in range(8))
    lock = "".join(f"pkg{i}==1.{i}.0 sha256:{i:040x}\n" for i in range(8))
    builder.commit("base", {"requirements.txt": req, "pixi.lock": lock, "a.py": A})
    builder.branch("release")
    bot = "pre-commit-ci[bot] <bot@example.com>"
    subject = "Update the dependency lock"  # the bot's one subject for every bump
    builder.commit(subject, {"a.py": A + "# 1\n"}, author=bot)
    builder.commit(subject, {"a.py": A + "# 2\n"}, author=bot)
    bumped = req.replace("pkg3>=1.3", "pkg3>=1.4")
    main_lock = lock.replace(f"pkg3==1.3.0 sha256:{3:040x}", f"pkg3==1.4.0 sha256:{99:040x}")
    at = 1_700_100_000
    twin = builder.commit(
        subject, {"requirements.txt": bumped, "pixi.lock": main_lock}, author=bot, author_time=at
    )
    builder.checkout("release")
    base = builder.rev("HEAD")
    # The branch's lock tree is regenerated: main's lines and many more.
    release_lock = "".join(
        ln if ln.startswith("pkg3==") else ln.replace("sha256:", "sha256:f")
        for ln in main_lock.splitlines(keepends=True)
    )
    pick = builder.commit(
        subject,
        {"requirements.txt": bumped, "pixi.lock": release_lock},
        author=bot,
        author_time=at + apart,
    )
    return twin, pick, base


def test_a_bot_twin_with_a_regenerated_lock_is_the_source_superset(builder):
    twin, pick, base = _bot_twins(builder, apart=4)
    s, picks = _picks(builder, base)
    p = picks[pick]
    assert (p["sources"], p["status"], p["copy_of"]) == ([twin], "superset", None)
    assert p["source_via"] == "twin"


def test_a_bot_twin_made_the_same_second_is_the_source_superset(builder):
    twin, pick, base = _bot_twins(builder, apart=0)
    s, picks = _picks(builder, base)
    p = picks[pick]
    assert (p["sources"], p["status"], p["copy_of"]) == ([twin], "superset", None)


def test_backport_of_two_prs_in_one_file_is_compared_with_their_union(builder):
    builder.commit("base", {"a.py": A, "b.py": B})
    builder.branch("release")
    two = builder.commit("Fix a_9 (#41)", {"a.py": A.replace("a_9 = 9", "a_9 = 99")})
    one = builder.commit(
        "Fix a_1 (#40)",
        {"a.py": A.replace("a_9 = 9", "a_9 = 99").replace("a_1 = 1", "a_1 = 11")},
    )
    builder.checkout("release")
    base = builder.rev("HEAD")
    pick = builder.commit(
        "Backport #40 and #41 to the release",
        {"a.py": A.replace("a_1 = 1", "a_1 = 11").replace("a_9 = 9", "a_9 = 99")},
    )
    s, picks = _picks(builder, base)
    p = picks[pick]
    assert (p["sources"], p["status"]) == ([two, one], "identical")
    assert not _blocking(s)


def test_a_pr_named_without_its_hash_in_the_subject_or_the_body(builder):
    builder.commit("base", {"a.py": A, "b.py": B})
    builder.branch("release")
    fix_a = builder.commit("Fix a_7 (#52)", {"a.py": A.replace("a_7 = 7", "a_7 = 77")})
    fix_b = builder.commit("Fix b_2 (#53)", {"b.py": B.replace("b_2 = 2", "b_2 = 22")})
    builder.checkout("release")
    base = builder.rev("HEAD")
    # Each carries its PR's line and two of its own: no patch id, too little for similarity.
    in_subject = builder.commit(
        "Overflow fix for the release (PR 52)",
        {"a.py": A.replace("a_7 = 7", "a_7 = 77").replace("a_8 = 8", "a_8 = 88")},
    )
    in_body = builder.commit(
        "Release-side b fix\n\nBackport PR 53 onto v1.x\n",
        {"b.py": B.replace("b_2 = 2", "b_2 = 22").replace("b_8 = 8", "b_8 = 88")},
    )
    s, picks = _picks(builder, base)
    for pick, source in ((in_subject, fix_a), (in_body, fix_b)):
        p = picks[pick]
        assert (p["sources"], p["source_via"], p["status"]) == ([source], "pr-number", "superset")


def test_similarity_pairs_a_fix_whose_main_file_has_another_name_on_the_branch(builder):
    ctl = "".join(f"    step_{i}()\n" for i in range(10))
    cache = "".join(f"cache_{i} = {i}\n" for i in range(6))
    builder.commit("base", {"cache.py": cache, "usage.py": "def run():\n" + ctl})
    builder.branch("release")
    builder.move("usage.py", "pod_usage.py")
    builder.commit("Rename the usage controller")
    fixed_cache = cache.replace("cache_2 = 2", "cache_2 = 22").replace(
        "cache_4 = 4", "cache_4 = 44"
    )
    extra = "".join(f"    requeue_{i}(pod)\n" for i in range(8))
    src = builder.commit(
        "Requeue inadmissible workloads after a pod finishes (#90)",
        {"cache.py": fixed_cache, "pod_usage.py": "def run():\n" + ctl + extra},
    )
    builder.checkout("release")
    base = builder.rev("HEAD")
    pick = builder.commit(
        "Requeue workloads after a pod finishes (#95)",
        {"cache.py": fixed_cache, "usage.py": "def run():\n" + ctl + extra},
    )
    s, picks = _picks(builder, base)
    p = picks[pick]
    assert (p["sources"], p["source_via"]) == ([src], "similarity")


def test_prows_cherry_pick_of_two_prs_names_both(builder):
    builder.commit("base", {"a.py": A, "b.py": B})
    builder.branch("release-0.16")
    one = builder.commit("Increase a timeout (#11011)", {"a.py": A.replace("a_3 = 3", "a_3 = 30")})
    two = builder.commit("Improve formatting (#11081)", {"b.py": B.replace("b_5 = 5", "b_5 = 50")})
    builder.checkout("release-0.16")
    base = builder.rev("HEAD")
    pick = builder.commit(
        "Automated cherry pick of #11011: Increase a timeout. #11081: Improve formatting (#11118)",
        {"a.py": A.replace("a_3 = 3", "a_3 = 30"), "b.py": B.replace("b_5 = 5", "b_5 = 50")},
    )
    s, picks = _picks(builder, base, "release-0.16")
    p = picks[pick]
    assert (p["sources"], p["source_via"], p["status"]) == ([one, two], "pr-number", "identical")


def test_a_revert_pick_names_the_sources_revert_not_the_change_it_reverts(builder):
    moved = "".join(f"conf_{i} = {i}\n" for i in range(8))
    builder.commit("base", {"a.py": A + moved, "conf.py": ""})
    builder.branch("release")
    change = builder.commit("Move the configs to conf.py (#6356)", {"a.py": A, "conf.py": moved})
    revert = builder.commit(
        'Revert "Move the configs to conf.py (#6356)" (#6398)', {"a.py": A + moved, "conf.py": ""}
    )
    builder.checkout("release")
    builder.cherry_pick(change)
    base = builder.rev("HEAD")
    pick = builder.commit(
        'Revert "Move the configs to conf.py (#6356)" (#6402)', {"a.py": A + moved, "conf.py": ""}
    )
    s, picks = _picks(builder, base)
    p = picks[pick]
    assert (p["sources"], p["source_via"], p["status"]) == ([revert], "pr-number", "identical")
    assert change not in p["sources"]


def test_a_hand_made_cherry_pick_of_two_prs_names_both(builder):
    builder.commit("base", {"a.py": A, "b.py": B})
    builder.branch("release-0.13")
    one = builder.commit("Fix a_6 (#7024)", {"a.py": A.replace("a_6 = 6", "a_6 = 60")})
    two = builder.commit("Fix b_6 (#7040)", {"b.py": B.replace("b_6 = 6", "b_6 = 60")})
    builder.checkout("release-0.13")
    base = builder.rev("HEAD")
    pick = builder.commit(
        "[release-0.13] Cherry Pick #7024, #7040 (#7042)",
        {"a.py": A.replace("a_6 = 6", "a_6 = 60"), "b.py": B.replace("b_6 = 6", "b_6 = 60")},
    )
    s, picks = _picks(builder, base, "release-0.13")
    assert picks[pick]["sources"] == [one, two]


def test_two_prs_where_the_second_rewrites_the_first_are_compared_by_net_change(builder):
    builder.commit("base", {"a.py": A})
    builder.branch("release")
    first = builder.commit("Parallel verify (#8731)", {"a.py": A.replace("a_2 = 2", "a_2 = 20")})
    second = builder.commit(
        "Re-enable parallel verify (#8988)", {"a.py": A.replace("a_2 = 2", "a_2 = 200")}
    )
    builder.checkout("release")
    base = builder.rev("HEAD")
    pick = builder.commit(
        "Automated cherry pick of #8731: Parallel verify #8988: Re-enable (#9203)",
        {"a.py": A.replace("a_2 = 2", "a_2 = 200")},
    )
    s, picks = _picks(builder, base)
    p = picks[pick]
    assert (p["sources"], p["status"]) == ([first, second], "identical")
