"""Which commits of a range are picks, and which source commits may be sources, whatever way the
release branch and the source branch merged into each other.

- HEAD's own commits: the range's commits reached from HEAD through first parents, and through
  the other parents of a merge unless that parent is on the source branch's first-parent line
  (main merged back into the release: those commits are the source branch's, not picks). A release
  branch merged forward into main keeps every one of its commits: each is a pick, reachable from
  the source branch or not.
- The source's own commits: the source history reached from its tip, not through a merge of the
  release branch itself (its second parent is one of HEAD's own commits, or lies behind the fork
  point): what the release branch brought into main is never a source, and neither is that merge.
- Copies: a source commit whose message names another source commit as its origin (a sibling
  release's backport merged forward: ``cherry picked from commit X``, ``[PR #N/X backport]``,
  ``Backport of X``, ``as merged into main (X)``) stands for that origin.

No git here: the range walk and the source history are already read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet

from harness.git import GitRepo
from harness.git.picks import ENTRY_SHA, ENTRY_SHA_PARENTS, LogEntry, object_ids

# The origin a backport names in its message (the short sha is resolved by the git layer).
ORIGIN = re.compile(
    r"\(cherry picked from commit ([0-9a-fA-F]{7,64})\)"
    r"|\[?PR #\d+/([0-9a-fA-F]{7,64}) backport\]"
    r"|\bBackport of (?:PR #\d+ )?(?:commit )?([0-9a-fA-F]{7,64})\b"
    r"|\bas merged into \S+ \(([0-9a-fA-F]{7,64})\)",
    re.IGNORECASE,
)
# The grep (extended regex) that finds the commits whose body may name an origin in one git log.
ORIGIN_GREP = (
    r"cherry picked from commit",
    r"backport of ",
    r"as merged into ",
    r"backport\]",
)


def origins(message: str) -> list[str]:
    """The commits a message names as its origin, in order, lower-cased (short shas kept short)."""
    out: list[str] = []
    for m in ORIGIN.finditer(message):
        sha = next(g for g in m.groups() if g).lower()
        if sha not in out:
            out.append(sha)
    return out


def first_parent_line(history: Sequence[LogEntry], tip: str) -> set[str]:
    """The source's first-parent line within its history (newest to the fork point)."""
    parents: dict[str, tuple[str, ...]] = dict(map(ENTRY_SHA_PARENTS, history))
    line: set[str] = set()
    at: str | None = tip
    while at is not None and at in parents and at not in line:
        line.add(at)
        at = parents[at][0] if parents[at] else None
    return line


def _reach(
    parents: Mapping[str, Sequence[str]], tip: str, follow: Iterable[str] | None = None
) -> set[str]:
    """Commits of ``parents`` reached from ``tip``; a merge's other parents only when ``follow``
    (the merges whose other side is taken; None: every merge) holds the merge."""
    taken = set(follow) if follow is not None else None
    seen: set[str] = set()
    stack = [tip]
    while stack:
        c = stack.pop()
        if c in seen or c not in parents:
            continue
        seen.add(c)
        ps = parents[c]
        if ps:
            stack.append(ps[0])
        if len(ps) > 1 and (taken is None or c in taken):
            stack.extend(ps[1:])
    return seen


def own_commits(
    walk: Sequence[Sequence[str]],
    head: str,
    source_line: set[str],
    empty: AbstractSet[str] = frozenset(),
) -> set[str]:
    """HEAD's own commits of the range (``walk``: ``[sha, *parents]`` of base..head): what a merge
    whose other parent is on the source's first-parent line brought in is left out, and so is what
    a merge of ``empty`` brought (its tree is its first parent's: history joined, nothing carried)."""
    parents = {c[0]: list(c[1:]) for c in walk}
    keep = {
        sha
        for sha, ps in parents.items()
        if len(ps) > 1 and sha not in empty and not source_line.intersection(ps[1:])
    }
    return _reach(parents, head, keep)


def release_merges(history: Sequence[LogEntry], own: set[str]) -> set[str]:
    """Merges of the source history that merged the release branch in: their second parent is one
    of HEAD's own commits, or is not in the history at all (behind the fork point, on HEAD's line)."""
    shas = set(map(ENTRY_SHA, history))
    return {
        c.sha
        for c in history
        if len(c.parents) > 1 and any(p in own or p not in shas for p in c.parents[1:])
    }


def source_own(history: Sequence[LogEntry], tip: str, release: set[str]) -> set[str]:
    """The source history reached from its tip, except through (and including) a release merge:
    the first parent of such a merge is followed, the merge and its second side are not."""
    parents: dict[str, tuple[str, ...]] = dict(map(ENTRY_SHA_PARENTS, history))
    follow = {c.sha for c in history if len(c.parents) > 1 and c.sha not in release}
    reached = _reach(parents, tip, follow)
    return reached - release


def copies(repo: GitRepo, history: Sequence[LogEntry], bodies: Mapping[str, str]) -> dict[str, str]:
    """Source commit → the other source commit its message names as its origin (``bodies``: the
    messages that may name one, from a grep). Short shas are resolved in one batch."""
    named = {
        c.sha: origins(c.subject + "\n" + bodies.get(c.sha, ""))
        for c in history
        if c.sha in bodies or "backport" in c.subject.lower()
    }
    named = {sha: ns for sha, ns in named.items() if ns}
    specs = sorted({n for ns in named.values() for n in ns})
    ids = dict(zip(specs, object_ids(repo, [f"{n}^{{commit}}" for n in specs]), strict=True))
    shas = set(map(ENTRY_SHA, history))
    out: dict[str, str] = {}
    for sha, ns in named.items():
        found = [o for o in (ids[n] for n in ns) if o is not None and o in shas and o != sha]
        if found:
            out[sha] = found[0]
    return out
