"""The commits a merge commit brought in: a PR merged with a merge commit, as one source."""

from __future__ import annotations

from typing import Iterable, Sequence

from harness.git.picks import LogEntry


def _reach(starts: Iterable[str], parents: dict[str, tuple[str, ...]], stop: set[str]) -> set[str]:
    seen: set[str] = set()
    stack = [s for s in starts if s in parents]
    while stack:
        sha = stack.pop()
        if sha in seen or sha in stop:
            continue
        seen.add(sha)
        stack.extend(p for p in parents[sha] if p in parents)
    return seen


def pr_commits(history: Sequence[LogEntry], merges: Iterable[str]) -> dict[str, list[str]]:
    """For each merge of ``merges``: the history commits of ``M^1..M^2`` (what the merge brought in),
    oldest first, computed on the history already read (no git process)."""
    parents = {c.sha: c.parents for c in history}
    index = {c.sha: i for i, c in enumerate(history)}
    out: dict[str, list[str]] = {}
    for m in merges:
        ps = parents.get(m, ())
        if len(ps) < 2:
            continue
        first = _reach(ps[:1], parents, set())
        out[m] = sorted(_reach(ps[1:], parents, first), key=lambda s: index[s])
    return out
