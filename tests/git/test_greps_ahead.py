"""``greps_ahead``: greps announced over one walk are read from the commits matching any of them
(one walk), with the very answer (bodies, order) each grep gives alone."""

from __future__ import annotations

from harness.git import GitRepo
from harness.git.picks import bodies, greps_ahead

FIXES = ("fixes:", "follow.?up")
ORIGIN = ("cherry picked from commit", "backport\\]")


def test_each_grep_as_alone(builder) -> None:
    base = builder.commit("base", {"a.txt": "0\n"})
    messages = [
        "plain change",
        "Fix a thing\n\nFixes: 1234567",
        "[backport] Port it\n\n(cherry picked from commit abcdef0)",
        "Both\n\nFollow-up to the fix\n(cherry picked from commit 1234abc)",
        "FIXES: shouted\n\n\x01 odd bytes",
        "nothing here either",
    ]
    for i, message in enumerate(messages):
        builder.commit(message, {f"f{i}.txt": f"{i}\n"})
    alone = GitRepo(builder.path)
    expected = {g: bodies(alone, ["HEAD"], [base], grep=g) for g in (FIXES, ORIGIN, ("odd",))}
    assert len(expected[FIXES]) == 3 and len(expected[ORIGIN]) == 2
    repo = GitRepo(builder.path)
    greps_ahead(repo, ["HEAD"], [base], [FIXES, ORIGIN])
    for g, want in expected.items():  # ("odd",) was not announced: read by its own walk
        got = bodies(repo, ["HEAD"], [base], grep=g)
        assert list(got.items()) == list(want.items())
    assert bodies(repo, ["HEAD"], [base], merges=True) == bodies(
        alone, ["HEAD"], [base], merges=True
    )


def test_patterns_as_one_alternation_match_what_each_matches(builder) -> None:
    """Git is given one ``-E`` alternation of the patterns (git matches each line against every
    ``--grep`` in turn: half the walk's time on a 20k-commit history): the commits are those that
    plain git lists for the patterns given one by one, on each of the harness's own greps."""
    import subprocess

    from harness.checks.fidelity.changeid import CHANGE_ID_GREP
    from harness.checks.fidelity.followups import GREP
    from harness.checks.fidelity.lines import ORIGIN_GREP
    from harness.git.picks import _one_pattern

    base = builder.commit("base", {"a.txt": "0\n"})
    messages = [
        "plain change",
        "Fix a thing\n\nFixes: 1234567",
        "Closes #12 and more",
        "fixed:   gh-77",
        "Resolve #3 (no colon, one space)",
        "resolves: # 4 (not a number after the hash)",
        "A FOLLOWUP to #9",
        "follow up on that",
        "This reverts commit 0123456789abcdef.",
        "[backport] 2.x\n\n(cherry picked from commit abcdef0)",
        "Backport of #55",
        "as merged into main",
        "Change\n\nChange-Id: I" + "a" * 40,
        "Change-Id: I" + "b" * 39 + " too short",
        "nothing here either",
    ]
    for i, message in enumerate(messages):
        builder.commit(message, {f"f{i}.txt": f"{i}\n"})
    repo = GitRepo(builder.path)
    for patterns in (GREP, ORIGIN_GREP, CHANGE_ID_GREP, GREP + ORIGIN_GREP):
        plain = subprocess.run(
            ["git", "log", "--format=%H", "-E", "-i", *(f"--grep={p}" for p in patterns)]
            + ["HEAD", f"^{base}"],
            cwd=builder.path,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        got = bodies(repo, ["HEAD"], [base], grep=patterns)
        assert sorted(got) == sorted(plain) and plain, patterns
        assert len(_one_pattern(patterns)) == 1
    assert _one_pattern(["(a)\\1", "b"]) == ["(a)\\1", "b"]  # a back-reference: kept apart


def test_the_listing_of_paths_names_the_union_s_candidates(builder) -> None:
    """A listing of paths over the announced walk reads every message: the commits the union may
    match come from it (git's own grep then runs over those alone), the same bodies as a walk of
    their own gives; a walk where no message matches gives none (an empty list of candidates fed
    to git would have read HEAD's whole history)."""
    from harness.git.picks import history

    base = builder.commit("base", {"a.txt": "0\n"})
    builder.branch("topic")
    builder.commit("On HEAD, not in the walk\n\nFixes: 7654321", {"z.txt": "0\n"})
    builder.checkout("topic")
    for i, message in enumerate(["plain", "nothing", "still nothing"]):
        builder.commit(message, {f"f{i}.txt": f"{i}\n"})
    builder.checkout("main")
    repo = GitRepo(builder.path)
    greps_ahead(repo, ["topic"], [base], [FIXES, ORIGIN])
    listed = history(repo, ["topic"], [base], paths=True)
    assert [e.paths for e in listed] == [("f0.txt",), ("f1.txt",), ("f2.txt",)]
    assert bodies(repo, ["topic"], [base], grep=FIXES) == {}  # fed: no candidate at all
    builder.checkout("topic")
    builder.commit("Fix it\n\nFixes: 1234567", {"g.txt": "1\n"})
    builder.commit("[backport] it\n\n(cherry picked from commit abcdef0)", {"h.txt": "1\n"})
    builder.commit("Follow-up\n\nmore", {"i.txt": "1\n"})
    alone = GitRepo(builder.path)
    expected = {g: bodies(alone, ["HEAD"], [base], grep=g) for g in (FIXES, ORIGIN)}
    assert len(expected[FIXES]) == 2 and len(expected[ORIGIN]) == 1
    repo = GitRepo(builder.path)
    greps_ahead(repo, ["HEAD"], [base], [FIXES, ORIGIN])
    history(repo, ["HEAD"], [base], paths=True)
    union = repo.grep_unions[(("HEAD",), (base,))]
    assert union._fed is not None and union._fed.done()  # the listing fed it
    for g, want in expected.items():
        assert list(bodies(repo, ["HEAD"], [base], grep=g).items()) == list(want.items())


def test_patterns_python_reads_otherwise_are_walked_by_git(builder) -> None:
    """A pattern with what Python's ``re`` reads otherwise than git's extended regex (a bracket
    class, a word boundary, a back-reference) is never prefiltered in Python: the union walks
    the history itself, and the answer is git's."""
    import pytest as _pytest

    from harness.git.picks import _prefilter, history

    for pattern in ("fix[[:space:]]+it", "\\<fix\\>", "(a)\\1"):
        with _pytest.raises(ValueError):
            _prefilter([pattern])
    base = builder.commit("base", {"a.txt": "0\n"})
    builder.commit("fix  it now", {"b.txt": "1\n"})
    builder.commit("unrelated", {"c.txt": "1\n"})
    grep = ("fix[[:space:]]+it",)
    alone = bodies(GitRepo(builder.path), ["HEAD"], [base], grep=grep)
    assert len(alone) == 1
    repo = GitRepo(builder.path)
    greps_ahead(repo, ["HEAD"], [base], [grep])
    history(repo, ["HEAD"], [base], paths=True)
    assert repo.grep_unions[(("HEAD",), (base,))]._fed is None  # not fed: walked by git
    assert bodies(repo, ["HEAD"], [base], grep=grep) == alone
