"""The range BASE..HEAD in the history index: between two commit ids it is a function of them, so
its walk (``[sha, *parents]``), its merge base and its commits are kept as memos of the index
(``range``, ``range-heads``); a warm run asks git none of them, and a range one line of commits
longer than a kept one (a PR gained a commit) asks git only for those."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol

from harness.git import GitError
from harness.infra.history_rows import FULL_ID, commit_fields, commit_of, shas, valid_range

if TYPE_CHECKING:
    from collections.abc import Callable

    from harness.git import GitRepo

MAX_RANGE = 5_000  # commits of a range kept


class Memos(Protocol):
    """What of the history index a range needs: its repository, its memos and its counters."""

    repo: GitRepo
    served: dict[str, int]

    def recall(self, kind: str, key: str, valid: Callable[[Any], bool]) -> Any | None: ...

    def remember(self, kind: str, key: str, value: Any) -> None: ...


def prime_range(index: Memos, base: str, head: str) -> None:
    """Seed the repository's caches of ``base..head`` (``git/history.py``) from the index."""
    repo = index.repo
    if not (FULL_ID.match(base) and FULL_ID.match(head)) or (base, head) in repo.walks:
        return
    kept = index.recall("range", json.dumps([base, head]), valid_range)
    if kept is None:
        kept = _extended(index, base, head)
    if kept is not None:
        walk, merge_base, commits = kept
        repo.walks[(base, head)] = walk
        if merge_base != "":  # ("": not asked when it was kept)
            repo.bases[(base, head)] = merge_base
        if commits is not None:
            repo.ranges[(base, head)] = [commit_of(c) for c in commits]


def _extended(index: Memos, base: str, head: str) -> list[Any] | None:
    """``base..head`` from a kept ``base..H`` where the commits of ``head ^base ^H`` are one
    line on H (each one's only parent the next, the oldest's H): the walk is theirs then H's
    (git walks that line before H), the merge base is H's (none of them is BASE's), the commits
    H's then theirs, oldest first. None where no kept range is such an H."""
    from harness.git.repo import Commit

    for h in reversed((index.recall("range-heads", base, shas) or [])[-3:]):  # the latest
        kept = index.recall("range", json.dumps([base, h]), valid_range)
        if kept is None or kept[2] is None:
            continue
        try:  # one log: the new commits, newest first, with their parents
            got: list[Commit] = index.repo.commits([head], [base, h], reverse=False)
        except GitError:
            continue  # (a commit no longer there)
        new = [[c.sha, *c.parents] for c in got]
        parents = [c[1:] for c in new]
        if not new or new[0][0] != head or parents[-1] != [h]:
            continue
        if any(ps != [new[i + 1][0]] for i, ps in enumerate(parents[:-1])):
            continue
        # Dated before what the range holds (a skewed clock): git's date-ordered walk could
        # stop or order otherwise there; walked by git.
        if min(c.committer_time for c in got) < max((c[9] for c in kept[2]), default=0):
            continue
        commits = got[::-1]
        index.served["ranges extended"] = index.served.get("ranges extended", 0) + 1
        return [new + kept[0], kept[1], kept[2] + [commit_fields(c) for c in commits]]
    return None


def keep_range(index: Memos, base: str, head: str) -> bool:
    """Remember what the repository's caches hold of ``base..head`` (a range of at most
    MAX_RANGE commits; its merge base once asked, its commits once a check read them),
    merged with what is kept; whether anything was new."""
    repo = index.repo
    walk = repo.walks.get((base, head))
    if walk is None or len(walk) > MAX_RANGE:
        return False
    key = json.dumps([base, head])
    kept = index.recall("range", key, valid_range) or [walk, "", None]
    merge_base = repo.bases.get((base, head), kept[1])
    read = repo.ranges.get((base, head))
    commits = kept[2] if read is None else [commit_fields(c) for c in read]
    value = [walk, merge_base, commits]
    if value == kept:
        return False
    index.remember("range", key, value)
    heads = [h for h in index.recall("range-heads", base, shas) or [] if h != head]
    index.remember("range-heads", base, [*heads[-7:], head])
    return True
