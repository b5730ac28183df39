"""The commits a merge commit brought in: a PR merged with a merge commit, as one source."""

from __future__ import annotations

from collections.abc import Sequence

from harness.git.picks import ENTRY_PARENTS, ENTRY_SHA_PARENTS, LogEntry


def brought_by(history: Sequence[LogEntry], tip: str) -> dict[str, str]:
    """Commit → the merge on the source's first-parent line that brought it in (``M^1..M^2``).

    One pass over the history already read (no git): merges are visited oldest first, so whatever
    an earlier merge or the first-parent line holds is reachable from a later merge's first parent.
    """
    if not any(map((1).__lt__, map(len, map(ENTRY_PARENTS, history)))):
        return {}  # no merge brought anything (checked in C: a 20k-commit history, twice a run)
    parents: dict[str, tuple[str, ...]] = dict(map(ENTRY_SHA_PARENTS, history))
    line: list[str] = []
    sha: str | None = tip
    while sha in parents:
        line.append(sha)
        sha = parents[sha][0] if parents[sha] else None
    on_line = set(line)
    out: dict[str, str] = {}
    for m in reversed(line):
        stack = list(parents[m][1:])
        while stack:
            c = stack.pop()
            if c in out or c in on_line or c not in parents:
                continue
            out[c] = m
            stack.extend(parents[c])
    return out


def pr_commits(
    history: Sequence[LogEntry], brought: dict[str, str], merges: set[str]
) -> dict[str, list[str]]:
    """For each merge of ``merges``: the commits it brought in, oldest first."""
    out: dict[str, list[str]] = {m: [] for m in merges}
    for c in history:
        m = brought.get(c.sha)
        if m in out:
            out[m].append(c.sha)
    return out
