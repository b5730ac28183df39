"""The release matrix (``harness backports``): source-branch fixes × release branches.

``fidelity`` turned sideways: each release's picks and their sources come from fidelity's own
source finding (``picks_with_sources``, an adapter over fidelity's ``picks_and_sources``, which
skips end states, units and follow-ups); this module only joins them on the source commit, adds the
candidates (a file of shas / PR numbers, and the candidate rule over the source history since the
oldest release's fork point) and classifies each (source, release) cell:

- ``picked``: a pick on the release has this commit as its source (or the merge whose PR holds it);
  a merge's row also where every commit it brought is picked, reached or in the fork there;
- ``in-fork``: an ancestor of the release's fork point with the source;
- ``reached``: on the release another way: merged into it, or a release commit with the same
  ``git patch-id --stable``, or a release commit fidelity found no source for with the same subject
  (PR numbers and a leading tag aside; no other source commit has it) that changes one of its
  files, or the change itself in
  place at the release tip (``in place``: each file is the commit's after-image, or the commit's
  diff of it reverse-applies there and does not apply forward; lines found elsewhere in a file
  never count);
- ``n/a``: every file the commit changes (that existed before it) is absent at the release tip;
- ``missing``: the rest, with ``applies``: would a cherry-pick apply without a conflict (a trial
  merge in a temporary object directory, never the user's repository).

Releases are ordered by the committer date of their fork point (older fork = older release), then
by the version numbers in their names. A commit fixed (picked, reached or in-fork) on a release and
missing on a newer one is P1; a configured candidate (candidates file or policy list) missing on a
release is P2; the rest is info.

This module runs the stages in order: the releases and rows (backports_rows.py, the inputs from
backports_candidates.py), the cells (backports_cells.py), one row per change
(backports_changes.py) and the section (backports_section.py); the types are in
backports_matrix.py.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from harness.checks.backports_candidates import CandidateSpec, compile_rule
from harness.checks.backports_cells import (
    ancestry_cells,
    by_content,
    merges_by_commits,
    try_missing,
)
from harness.checks.backports_changes import one_row_per_change
from harness.checks.backports_matrix import BackportsResult, MatrixCell, MatrixRow, ReleaseInfo
from harness.checks.backports_rows import (
    ReleasePicks,
    explicit_candidates,
    picks_with_sources,
    release_forks,
    row_order,
    row_reasons,
    since_scope,
)
from harness.checks.backports_section import backports_section
from harness.checks.result import Checked
from harness.errors import UsageError
from harness.git import GitRepo
from harness.git.backports import SourceCommit, TrialPick, brought_commits, source_log, trial_picks

if TYPE_CHECKING:
    from harness.infra.history_index import HistoryIndex


def backports_check(
    repo: GitRepo,
    source: str,
    releases: Sequence[str],
    candidates: Sequence[CandidateSpec] = (),
    rule: re.Pattern[str] | None = None,
    since: tuple[str, str] | None = None,
    *,
    trial: bool = True,
    index: HistoryIndex | None = None,
) -> Checked[BackportsResult]:
    """The matrix of ``source``'s fixes × ``releases`` (refs as given; resolved here, so an unknown
    one is a usage error before any work); ``index``: the history index the releases' source
    finding reads through (``picks_with_sources``)."""
    src = repo.resolve(source)
    names = list(dict.fromkeys(releases))
    if not names:
        raise UsageError("give at least one --release REF")
    tips = {n: repo.resolve(n) for n in names}
    for n in names:
        if n == source or tips[n] == src:
            what = (
                f"is the source branch (--source {source})"
                if n == source
                else f"is the same commit as --source {source} ({src[:12]})"
            )
            raise UsageError(
                f"--release {n} {what}: a release is a branch that forked from the source, "
                "so there is nothing to judge on it; name the release branches only"
            )
    repeated = tuple(
        f"--release {n} given {releases.count(n)} times: listed once"
        for n in names
        if releases.count(n) > 1
    )
    explicit = explicit_candidates(repo, candidates)
    pattern = rule if rule is not None else compile_rule(None)

    forks, times, order, oldest = release_forks(repo, src, names, tips)

    picked: dict[str, ReleasePicks] = {}
    try:
        for n in order:
            picked[n] = (
                picks_with_sources(repo, src, tips[n], forks[n], index)
                if tips[n] != forks[n]
                else ReleasePicks()
            )
    finally:
        if index is not None:  # what every release read, written once
            index.save()

    # One pass over the source history since the oldest fork point.
    history = source_log(repo, [src], [oldest])
    by_sha: dict[str, SourceCommit] = {c.sha: c for c in history}
    in_scope = since_scope(repo, src, oldest, since)
    reasons, prs, unmatched = row_reasons(
        history, by_sha, picked, order, candidates, explicit, pattern, in_scope
    )
    position = {c.sha: i for i, c in enumerate(history)}
    row_shas, extra = row_order(repo, reasons, position)

    def subject(s: str) -> str:
        return by_sha[s].subject if s in by_sha else (extra[s].subject if s in extra else "")

    def parents(s: str) -> tuple[str, ...]:
        return by_sha[s].parents if s in by_sha else (extra[s].parents if s in extra else ())

    def body(s: str) -> str:
        return by_sha[s].body if s in by_sha else (extra[s].body if s in extra else "")

    rows = [
        MatrixRow(s, subject(s), tuple(reasons[s]), tuple(dict.fromkeys(prs.get(s, []))))
        for s in row_shas
    ]

    # A merge's row is judged by the commits it brought too: they get cells of their own, not shown.
    brought = brought_commits(repo, [s for s in row_shas if len(parents(s)) > 1])
    hidden = list(dict.fromkeys(c for cs in brought.values() for c in cs if c not in reasons))
    fork_sets, cells, undecided = ancestry_cells(
        repo, row_shas + hidden, order, position, forks, tips, oldest, picked
    )

    missing, patches = by_content(
        repo, undecided, cells, order, forks, tips, picked, history, subject, parents
    )
    unseen = set(hidden)
    for s, n in missing:
        if s in unseen:
            cells[(s, n)] = MatrixCell(s, n, "missing")
    shown = [(s, n) for s, n in missing if s not in unseen]
    fast_path = try_missing(repo, shown, cells, patches, tips, parents, trial)
    merges_by_commits(cells, brought, order)
    rows = one_row_per_change(repo, src, oldest, rows, cells, order, position, body, parents)
    controls = _controls(repo, order, forks, tips, fork_sets, picked) + fast_path
    result = BackportsResult(
        source,
        tuple(
            ReleaseInfo(n, tips[n], forks[n], times.get(forks[n], 0), picked[n].count)
            for n in order
        ),
        tuple(rows),
        tuple(cells[(r.sha, n)] for r in rows for n in order),
        tuple(unmatched),
        controls,
        repeated,
    )
    return Checked(result, backports_section(result))


def _controls(
    repo: GitRepo,
    order: Sequence[str],
    forks: dict[str, str],
    tips: dict[str, str],
    fork_sets: dict[str, set[str]],
    picked: dict[str, ReleasePicks],
) -> tuple[tuple[str, str, bool | None], ...]:
    out: list[tuple[str, str, bool | None]] = []
    # A row known in-fork: each release's fork point's first parent is an ancestor of its fork.
    known = []
    for n in order:
        parent = repo.try_resolve(f"{forks[n]}^")
        if parent:
            known.append((n, parent, parent in fork_sets[n] or repo.is_ancestor(parent, forks[n])))
    if known:
        out.append(
            (
                "in-fork control",
                ", ".join(
                    f"{n}: {p[:12]} (fork point's parent) → {'in-fork' if ok else 'NOT in-fork'}"
                    for n, p, ok in known
                ),
                all(ok for _, _, ok in known),
            )
        )
    # The trial pick answers yes when it must: a picked source re-applied onto its own parent.
    sample = next(
        ((n, s) for n in order for s in picked[n].sources if repo.try_resolve(f"{s}^")), None
    )
    if sample is not None:
        s = sample[1]
        parent = repo.resolve(f"{s}^")
        ok = trial_picks(repo, [TrialPick(s, parent, parent)])[0]
        out.append(
            (
                "trial-pick control",
                f"source {s[:12]} onto its own parent → "
                f"{'applies' if ok else 'conflicts' if ok is False else 'unknown'}",
                ok is True,
            )
        )
    return tuple(out)
