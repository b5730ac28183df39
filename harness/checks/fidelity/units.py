"""Completion across the range: each source PR judged against the union of the picks that carry it.

A pick that lacks part of its source is complete once later picks of the range carry the rest
(e.g. the PR-branch commits a reviewer asked for, cherry-picked with -x, or the commits of a PR
merged with a merge commit, picked one by one). The union is compared by net effect per file: a
line added then moved by a later pick counts once, as in the source's squash.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from harness.checks.fidelity.patches import PatchStore
from harness.checks.fidelity.pick import PickResult
from harness.git.patch import FilePatch


def net(files: Sequence[FilePatch]) -> dict[str, Counter[bytes]]:
    """Per path, each line's count added minus removed (zero counts dropped)."""
    out: dict[str, Counter[bytes]] = {}
    for f in files:
        c = out.setdefault(f.path, Counter())
        for ln in f.added:
            c[ln] += 1
        for ln in f.removed:
            c[ln] -= 1
    return {
        p: Counter({k: n for k, n in c.items() if n}) for p, c in out.items() if any(c.values())
    }


def complete_units(results: Sequence[PickResult], store: PatchStore) -> None:
    """Set each pick's ``unit`` and, where the union of a unit's picks equals its source by net effect,
    the ``completed_by`` of the members that are not identical on their own."""
    inner = {c: tuple(r.resolution.sources) for r in results for c, _ in r.pr_commits}
    groups: dict[tuple[str, ...], list[PickResult]] = {}
    for r in results:
        sources = tuple(r.resolution.sources)
        if not sources:
            continue
        if not r.unit:
            r.unit = inner.get(sources[0], sources) if len(sources) == 1 else sources
        groups.setdefault(r.unit, []).append(r)
    for unit, members in groups.items():
        if len(members) < 2 or all(m.status == "identical" for m in members):
            continue
        store.ensure(list(unit))
        picked = net([f for m in members for f in store.full[m.commit.sha].files])
        if picked != net(store.files(list(unit))):
            continue
        for m in members:
            if m.status != "identical":
                m.completed_by = [o.commit.sha for o in members if o is not m]
