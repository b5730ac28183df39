"""fidelity_section on a repository with one pick per status and pitfall (real git)."""

from __future__ import annotations

import hashlib

import pytest
from test_fidelity_repos import Scenario, build

from harness.checks.fidelity.check import fidelity_section
from harness.checks.fidelity.compare import checksum
from harness.checks.fidelity.endstate import NoEndStates
from harness.checks.fidelity.resolve import compare_picks
from harness.checks.fidelity.subjects import numbered, pr_numbers
from harness.errors import UsageError
from harness.git import GitRepo
from harness.git.history import fork_point
from harness.git.picks import LogEntry
from harness.testing.repos import RepoBuilder


@pytest.fixture(scope="module")
def scenario(tmp_path_factory) -> Scenario:
    return build(RepoBuilder(tmp_path_factory.mktemp("fid") / "repo"))


@pytest.fixture(scope="module")
def result(scenario):
    section = fidelity_section(GitRepo(scenario.b.path), scenario.base, "release", "main", "pr")
    by_name = {
        name: next(p for p in section.data["picks"] if p["pick"] == sha)
        for name, sha in scenario.pick.items()
    }
    return section, by_name


def _sha8(*lines: bytes) -> str:
    return hashlib.sha1(b"".join(x + b"\n" for x in lines)).hexdigest()[:8]


def test_pr_numbers_in_parentheses_only():
    assert pr_numbers("Fix x (#3002) (#3100)") == (3002, 3100)
    assert pr_numbers("[release/1.2] Fix x (#3100)") == (3100,)
    assert pr_numbers("Fix a and b (#3002 and #3040)") == (3002, 3040)
    assert pr_numbers("Fix issue #12 in parser") == ()
    assert pr_numbers("Backport PR #14913: Update changelog (#15000)") == (15000, 14913)
    assert pr_numbers("Merge pull request #14913 from someone/branch") == (14913,)


def test_numbered_finds_what_every_subject_would_give() -> None:
    subjects = [
        "Fix x (#3002) (#3100)",
        "Fix issue #3002 in parser",  # a #N outside parentheses names no PR
        "Backport PR #3100: Fix x",
        "Merge pull request #14913 from someone/branch",
        "Docs (#30020)",  # a longer number that starts the same
        "no number at all",
        "Fix a and b (#3002 and #3040)",
    ]
    history = [LogEntry(f"{i:040x}", (), 0, s) for i, s in enumerate(subjects)]
    wanted = {3002, 3100, 14913, 3040}
    every: dict[int, list[str]] = {}
    for c in history:
        for n in pr_numbers(c.subject):
            if n in wanted:
                every.setdefault(n, []).append(c.sha)
    assert numbered(history, wanted) == every
    assert numbered(history, {3002}) == {3002: [history[0].sha, history[6].sha]}
    assert numbered(history, set()) == {}


def test_empty_input_checksum_is_the_sha1_of_nothing():
    assert checksum([]) == "da39a3ee" == hashlib.sha1(b"").hexdigest()[:8]


@pytest.mark.parametrize(
    "name,via,status",
    [
        ("identical", "trailer", "identical"),
        ("context", "pr-number", "identical"),
        ("ws", "patch-id", "whitespace-only"),
        ("subset", "pr-number", "subset"),
        ("superset", "similarity", "superset"),
        ("adapted", "pr-number", "adapted"),
        ("binary", "pr-number", "identical"),
        ("latin", "pr-number", "identical"),
        ("two", "pr-number", "identical"),
        ("rename", "trailer", "identical"),
        ("stray", None, "no-source"),
        ("squash", "pr-number", "subset"),
    ],
)
def test_each_pick_gets_its_source_and_status(scenario, result, name, via, status):
    pick = result[1][name]
    assert pick["source_via"] == via
    assert pick["status"] == status
    if via is None:
        assert pick["source"] is None and pick["sources"] == []
    elif name != "two":
        src_name = {"two": "two_a"}.get(name, name)
        assert pick["source"] == scenario.src[src_name]


def test_file_statuses_and_checksums(result):
    picks = result[1]
    f = picks["identical"]["files"][0]
    assert (f["path"], f["status"]) == ("core.py", "identical")
    assert (
        f["pick"]
        == f["source"]
        == {
            "added": 1,
            "removed": 1,
            "added_sha1": _sha8(b"    return x + 3  # fixed"),
            "removed_sha1": _sha8(b"    return x + 3"),
        }
    )
    assert picks["context"]["files"][0]["status"] == "context-only"
    assert picks["ws"]["files"][0]["status"] == "whitespace-only"
    sub = {f["path"]: f for f in picks["subset"]["files"]}
    assert sub["core.py"]["status"] == "identical"
    assert sub["docs.txt"]["status"] == "missing-from-pick" and sub["docs.txt"]["pick"] is None
    assert sub["docs.txt"]["source"]["added_sha1"] == _sha8(b"f7 fixed")
    sup = {f["path"]: f["status"] for f in picks["superset"]["files"]}
    assert sup == {"compat.py": "extra-in-pick", "core.py": "identical"}
    ad = picks["adapted"]["files"][0]
    assert ad["status"] == "adapted"
    assert ad["only_in_pick"] == ["+    return x + 11 + 111"] and ad["only_in_source"] == [
        "+    return x + 11 + 110"
    ]


def test_empty_side_shows_the_control_checksum(result):
    sub = {f["path"]: f for f in result[1]["subset"]["files"]}
    assert sub["docs.txt"]["source"]["removed_sha1"] == "da39a3ee"


def test_binary_and_non_utf8_files(result):
    b = result[1]["binary"]["files"][0]
    assert (b["path"], b["status"], b["same"], b["note"]) == (
        "logo.bin",
        "binary",
        True,
        "same blob",
    )
    lat = result[1]["latin"]["files"][0]
    assert lat["status"] == "identical"
    assert lat["pick"]["added_sha1"] == _sha8(b"na\xefve \xff")  # bytes, never decoded


def test_rename_on_release_pairs_the_file_across_paths(result):
    f = result[1]["rename"]["files"][0]
    assert f["path"] == "pkg/new_name.py" and f["status"] == "renamed"
    assert f["source_path"] == "pkg/old_name.py" and f["pick"] == f["source"]


def test_two_sources_are_compared_as_their_union(scenario, result):
    two = result[1]["two"]
    assert two["sources"] == [scenario.src["two_a"], scenario.src["two_b"]]
    assert two["files"][0]["pick"]["added"] == 2


def test_pr_number_pitfalls(scenario, result):
    # The backport number (#4004) is an unrelated main commit: rejected by content, the original wins.
    sub = result[1]["subset"]
    assert sub["sources"] == [scenario.src["subset"]] and "rejected by content" in sub["note"]
    # A stray (#1) never pairs unrelated commits.
    stray = result[1]["stray"]
    assert stray["source"] is None and "rejected by content" in stray["note"]
    # Original and backport numbers in either order.
    assert result[1]["context"]["source"] == scenario.src["context"]


def test_empty_pick_is_a_subset_of_its_source(scenario, result):
    e = result[1]["empty"]
    assert e["files"][0]["status"] == "missing-from-pick" and e["status"] == "subset"
    assert e["source"] == scenario.src["identical"] and e["confidence"] == 0.0


def test_merge_inside_the_range_is_listed_not_picked(scenario, result):
    section, picks = result
    assert [m["sha"] for m in section.data["merges"]] == [scenario.merge]
    assert scenario.merge not in {p["pick"] for p in section.data["picks"]}
    assert any(f.kind == "merge-in-range" and f.severity == "info" for f in section.findings)


def test_severities(scenario, result):
    section, _ = result
    sev = {f.key.split(":")[0]: f.severity for f in section.findings if f.kind.startswith("pick-")}
    assert sev[scenario.pick["subset"]] == "P1"  # docs.txt (non-test) missing
    assert sev[scenario.pick["adapted"]] == "P2"
    assert sev[scenario.pick["stray"]] == "P2"
    assert sev[scenario.pick["ws"]] == "info"
    assert scenario.pick["identical"] not in sev


def test_end_state_separates_pre_existing_from_introduced(scenario, result):
    picks = result[1]
    ctx = picks["context"]["end_state"][0]
    # util.py at release lacks main's header line: a pre-existing difference, nothing introduced.
    assert (ctx["status"], ctx["pre_existing"], ctx["introduced"]) == ("pre-existing", 1, 0)
    sub = {e["path"]: e for e in picks["subset"]["end_state"]}
    assert sub["docs.txt"]["status"] == "introduced" and sub["docs.txt"]["introduced"] == 1
    assert picks["latin"]["end_state"][0]["status"] == "same"


def test_missing_pr_commits_after_the_cut_point(scenario, result):
    section, _ = result
    assert section.data["cut_point"] == scenario.pr[1]
    assert section.data["source_branch_pick"] == scenario.pick["squash"]
    missing = section.data["missing_commits"]
    assert [c["sha"] for c in missing] == [scenario.pr[2]]
    assert missing[0]["files"] == [{"path": "feature.py", "added": 2, "removed": 0}]
    assert any(f.kind == "missing-commit" and f.severity == "P1" for f in section.findings)


def test_map_overrides_every_other_way(scenario):
    repo = GitRepo(scenario.b.path)
    s = fidelity_section(
        repo,
        scenario.base,
        "release",
        "main",
        mapping={scenario.pick["stray"]: scenario.src["latin"]},
    )
    stray = next(p for p in s.data["picks"] if p["pick"] == scenario.pick["stray"])
    assert (stray["source_via"], stray["source"], stray["status"]) == (
        "map",
        scenario.src["latin"],
        "adapted",
    )
    with pytest.raises(UsageError):
        fidelity_section(
            repo, scenario.base, "release", "main", mapping={scenario.src["latin"]: "main"}
        )


def test_git_work_is_batched(scenario, result):
    section, _ = result
    repo = GitRepo(scenario.b.path)
    base, head, source = (repo.resolve(x) for x in (scenario.base, "release", "main"))
    fork = fork_point(repo, base, head)
    # The picks' sources alone (no end states, units or follow-ups): one process per phase,
    # whatever the count: the range's non-merge commits (the picks, read beside the history
    # walk); the named candidates; the patch paths of the commits changing a
    # pick's paths (--raw); ± lines of those naming the same paths (patch id) and of the ones named
    # by subject; full diffs of the sources found by patch id (read while the search goes on), then
    # of the rest (here no pick is left for similarity, which would read its candidates' ± lines
    # in one more).
    store = compare_picks(repo, base, head, source, None, fork, NoEndStates(repo, fork, head))[2]
    assert store.batches == 6
    # Not in the report: with the history index it depends on what earlier runs kept.
    assert not any(c.name == "batched git" for c in section.controls)
    assert all(c.ok is not False for c in section.controls)


def test_controls_and_not_verified(result):
    section, _ = result
    assert all(t.control for t in section.tables)
    assert section.not_verified
    names = {c.name: c for c in section.controls}
    assert names["self-comparison"].ok and names["empty-input checksum"].ok


def test_rejected_pr_number_falls_back_to_content(builder):
    """Every pick carries a number, but the only candidate is unrelated: patch-id still finds the source."""
    builder.commit("base", {"a.py": "x = 1\ny = 2\n", "b.py": "b = 1\n"})
    builder.branch("release")
    builder.commit("unrelated (#1)", {"b.py": "b = 2  # unrelated change\n"})
    real = builder.commit("Real fix", {"a.py": "x = 10\ny = 2\n"})
    builder.checkout("release")
    base = builder.rev("HEAD")
    pick = builder.commit("Real fix (#1)", {"a.py": "x = 10\ny = 2\n"})
    s = fidelity_section(GitRepo(builder.path), base, "release", "main")
    (p,) = s.data["picks"]
    assert (p["pick"], p["source"], p["source_via"], p["status"]) == (
        pick,
        real,
        "patch-id",
        "identical",
    )
    assert "rejected by content" in p["note"]
