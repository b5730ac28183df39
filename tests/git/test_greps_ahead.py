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
