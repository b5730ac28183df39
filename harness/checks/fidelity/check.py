"""Cherry-pick fidelity: does each pick of BASE..HEAD carry exactly what its source carried?

``fidelity_check`` is the entry point (the ``fidelity``, ``tests`` and ``compare`` commands call
it; ``fidelity_section`` returns its section alone, ``picks_and_sources`` the picks without end
states for the release matrix). This module runs the stages in order: the picks and their sources
(resolve.py, searching with source.py and comparing with compare.py), the PR branch (missing.py),
units, follow-ups, end states (endstate.py, in a thread or a worker interpreter) and the section
(section.py, its findings from findings.py); the answer is kept whole in the history index.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from harness.checks.fidelity.endstate import EndStateJobs, NoEndStates, end_states
from harness.checks.fidelity.followups import GREP, find_followups
from harness.checks.fidelity.memo import Memo
from harness.checks.fidelity.missing import MissingResult, find_missing
from harness.checks.fidelity.patches import PatchStore
from harness.checks.fidelity.pick import PickResult
from harness.checks.fidelity.release import compile_patterns
from harness.checks.fidelity.resolve import POOL, compare_picks, history_id, source_bodies
from harness.checks.fidelity.section import build_section
from harness.checks.fidelity.severity import at_parent
from harness.checks.fidelity.units import complete_units
from harness.checks.result import Checked, FidelityResult
from harness.git import GitRepo
from harness.git.history import count_commits, fork_point
from harness.git.picks import entries_at
from harness.infra.futures import Future
from harness.report.model import Finding, Section
from harness.report.printable import printable

if TYPE_CHECKING:
    from harness.infra.history_index import HistoryIndex
    from harness.infra.offload import Worker

OFFLOAD_PICKS = 16  # end states cost ~10 ms a pick on a release range; a worker ~0.1 s to start


def picks_and_sources(
    repo: GitRepo, base: str, head: str, source: str, index: HistoryIndex | None = None
) -> list[PickResult]:
    """Each pick of base..head (resolved shas) with its sources and status: fidelity's own source
    finding, without end states, units or follow-ups (the backports matrix joins these per
    release), through the history index where there is one (the same answer; the caller saves
    it, once for every release)."""
    fork = fork_point(repo, base, head)
    jobs = NoEndStates(repo, fork, head)
    return compare_picks(repo, base, head, source, None, fork, jobs, index)[1]


def fidelity_section(
    repo: GitRepo,
    base: str,
    head: str,
    source: str,
    source_branch: str | None = None,
    mapping: Mapping[str, str | Sequence[str]] | None = None,
    release_paths: Sequence[str] = (),
    index: HistoryIndex | None = None,
    escaped: bool = True,
) -> Section:
    """The section of ``fidelity_check``."""
    return fidelity_check(
        repo,
        base,
        head,
        source,
        source_branch,
        mapping,
        release_paths=release_paths,
        index=index,
        escaped=escaped,
    ).section


def fidelity_check(
    repo: GitRepo,
    base: str,
    head: str,
    source: str,
    source_branch: str | None = None,
    mapping: Mapping[str, str | Sequence[str]] | None = None,
    *,
    release_paths: Sequence[str] = (),
    index: HistoryIndex | None = None,
    escaped: bool = True,
) -> Checked[FidelityResult]:
    """Compare every non-merge commit of base..head with its source on ``source``;
    ``release_paths``: the policy's extra release-only path patterns (release.py).

    With ``index`` (the history index of ``repo``), what the source history holds is read from it
    and what this run learned is kept in it; a whole answer is kept by the resolved commits it was
    computed from. The answer is the same with and without it.

    ``escaped``: text that is not UTF-8 (paths, subjects) shown as ``\\xNN`` in the section
    (``report.printable``), as findings matched against a policy or a previous report must be.
    Without it a section computed now may hold surrogate escapes, for a caller whose renderer
    escapes as it writes (every renderer does: the JSON writer in its one scan), which spares a
    walk of the whole section (~6 ms on a report of 40 picks); a kept answer is escaped."""
    source_name = source
    base, head, source = repo.resolve(base), repo.resolve(head), repo.resolve(source)
    branch_tip = repo.resolve(source_branch) if source_branch else None
    named = (source_name, source_branch, branch_tip)
    release = tuple(release_paths)
    if index is None:
        return _fidelity(repo, base, head, source, named, mapping, release, escaped=escaped)
    index.prime_range(base, head)
    try:
        if mapping:  # --map names refs of its own: not kept whole
            return _fidelity(
                repo, base, head, source, named, mapping, release, index, escaped=escaped
            )
        return _answer(index, repo, base, head, source, named, release, escaped)
    finally:
        index.keep_range(base, head)
        index.save()


def _answer(
    index: HistoryIndex,
    repo: GitRepo,
    base: str,
    head: str,
    source: str,
    named: tuple[str, str | None, str | None],
    release_paths: tuple[str, ...],
    escaped: bool = True,
) -> Checked[FidelityResult]:
    """The whole answer, from the index where it keeps one for these very commits."""
    from harness.infra.history_answers import fidelity_parts, keep_fidelity, kept_fidelity

    parts = fidelity_parts(base, head, source, *named, release_paths)
    kept = kept_fidelity(index, parts)
    if kept is not None:
        return kept
    index.served["built"] += 1
    checked = _fidelity(repo, base, head, source, named, None, release_paths, index, escaped)
    index.later(keep_fidelity, index, parts, checked, escaped)
    return checked


def _fidelity(
    repo: GitRepo,
    base: str,
    head: str,
    source: str,
    named: tuple[str, str | None, str | None],  # the source as named, the source branch, its tip
    mapping: Mapping[str, str | Sequence[str]] | None,
    release_paths: tuple[str, ...] = (),
    index: HistoryIndex | None = None,
    escaped: bool = True,
) -> Checked[FidelityResult]:
    source_name, source_branch, branch_tip = named
    # Where the range starts on HEAD's line: SOURCE ^fork is SOURCE ^merge-base(SOURCE, fork).
    fork = fork_point(repo, base, head)
    # From OFFLOAD_PICKS picks on, end states run in a second interpreter, started now so that its
    # start-up overlaps git's work: they no longer share this one's GIL with the source search.
    # Where the index keeps end-state rows, only once OFFLOAD_PICKS picks' rows must be computed.
    workers = _Workers(count_commits(repo, base, head)[1] >= OFFLOAD_PICKS and _cores() > 1)
    if workers.wanted and not (index is not None and index.holds("end-state")):
        workers.start()
    try:
        checked = _check(
            repo,
            base,
            head,
            source,
            (source_branch, branch_tip),
            mapping,
            source_name,
            fork,
            workers,
            compile_patterns(release_paths),
            index,
        )
    finally:
        workers.close()
    if escaped:
        printable(checked.section)  # (a dataclass: escaped in place)
    return checked


class _Workers:
    """The end-state worker interpreter of one run: started at most once, when ``wanted``."""

    def __init__(self, wanted: bool) -> None:
        self.wanted = wanted
        self.worker: Worker | None = None

    def start(self) -> Worker | None:
        if self.wanted and self.worker is None:
            from harness.infra.offload import Worker  # a small range never pays for its import

            self.worker = Worker(end_states.__module__, end_states.__name__)
        return self.worker

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()


def _cores() -> int:
    """The cores this process may run on (its affinity, where the platform tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _check(
    repo: GitRepo,
    base: str,
    head: str,
    source: str,
    source_branch_at: tuple[str | None, str | None],
    mapping: Mapping[str, str | Sequence[str]] | None,
    source_name: str,
    fork: str,
    workers: _Workers,
    release_paths: Sequence[re.Pattern[str]] = (),
    index: HistoryIndex | None = None,
) -> Checked[FidelityResult]:
    source_branch, branch_tip = source_branch_at  # as the user named it, and resolved
    # The follow-up log does not depend on the picks: it runs in the pool while they are resolved,
    # started once the source history is read (the walks the search waits for go first).
    greps: list[Future[dict[str, str]]] = []

    def grep_bodies() -> None:
        greps.append(POOL.submit(source_bodies, repo, index, [source], [fork], grep=GREP))

    # End states read blobs and diff them in Python, in a thread, from the moment a pick's sources
    # are known, while this thread waits on git for the other picks' sources, the PR branch, units
    # and follow-ups (none of which reads an end state).
    jobs = EndStateJobs(
        repo, fork, head, workers.worker, Memo(index, []), workers.start, OFFLOAD_PICKS
    )
    merges, results, store, history, touched, left, facts = compare_picks(
        repo, base, head, source, mapping, fork, jobs, index, branch_tip, grep_bodies
    )
    bodies = greps[0]  # compare_picks reads the history first, and calls grep_bodies then
    # The files a pick lacks at its parent (ls-tree processes) are read beside the follow-ups;
    # only the section reads them.
    marked = POOL.submit(_mark_absent, repo, results, Memo(index, []))
    missing = _branch(repo, branch_tip, source, base, results, store)
    complete_units(results, store)
    units, unit_picks = _units(results)
    picked = {s for r in results for s in r.resolution.sources}
    followups = find_followups(
        repo,
        history,
        bodies.result(),
        units,
        unit_picks,
        picked,
        store,
        touched,
        Memo(index, [source, fork, history_id(history)]),
        facts.numbered,
    )
    if index is not None and not index.deferring:
        # Nothing more is read from the history: written while end states end.
        POOL.submit(index.save)
    states = jobs.result()
    for r in results:
        r.end_state = states.get(r.commit.sha, [])
    marked.result()
    section = build_section(
        results,
        merges,
        missing,
        history,
        store,
        source_branch,
        followups,
        source_name,
        release_paths,
    )
    _account(section, left, len(results))
    gaps = tuple(c.sha for c in missing.missing) if missing is not None else ()
    # A later copy of the branch's own commit (its release notes forwarded) is no source: the
    # section says so (forward_port), and neither do the tests section's source columns take it.
    sources = tuple(
        (r.commit.sha, () if r.copy_of else tuple(r.resolution.sources)) for r in results
    )
    later = tuple(dict.fromkeys(f.sha for f in followups if f.named))
    # What the tests section reads of the picks' files: a forward copy is no source here either.
    files = [f for r in results if not r.copy_of for f in r.files]
    renamed = tuple(
        dict.fromkeys(
            (f.path, f.source.path)
            for f in files
            if f.status == "renamed" and f.same and f.source is not None and f.source.path != f.path
        )
    )
    differ = {f.path for f in files if not (f.same and f.pick is not None and f.source)}
    same = tuple(sorted({f.path for f in files} - differ))
    return Checked(
        FidelityResult(tuple(r.commit.sha for r in results), gaps, sources, later, renamed, same),
        section,
    )


def _branch(
    repo: GitRepo,
    branch_tip: str | None,
    source: str,
    base: str,
    results: Sequence[PickResult],
    store: PatchStore,
) -> MissingResult | None:
    """The source PR branch's commits the picks lack (``--source-branch``); a pick of one of its
    commits completes the squash's pick (its unit becomes the squash's sources)."""
    if not branch_tip:
        return None
    branch = repo.commits([branch_tip], [source, base], no_merges=True)
    store.ensure([c.sha for c in branch])
    on_branch = {c.sha for c in branch}
    missing = find_missing(
        branch,
        store.full,
        {r.commit.sha: store.keys(r.commit.sha) for r in results},
        [r.commit.sha for r in results if on_branch & set(r.resolution.sources)],
    )
    target = next((r for r in results if missing.pick == r.commit.sha), None)
    if target and target.resolution.sources:
        for r in results:
            if on_branch & set(r.resolution.sources):
                r.unit = tuple(target.resolution.sources)
    return missing


def _units(
    results: Sequence[PickResult],
) -> tuple[dict[tuple[str, ...], list[str]], dict[tuple[str, ...], list[str]]]:
    """Each source PR the picks carry → its commits (a merge source's PR commits too), and the
    picks carrying it."""
    units: dict[tuple[str, ...], list[str]] = {}
    unit_picks: dict[tuple[str, ...], list[str]] = {}
    for r in results:
        if r.unit:
            units.setdefault(r.unit, list(r.unit))
            units[r.unit] += [c for c, _ in r.pr_commits if c not in units[r.unit]]
            unit_picks.setdefault(r.unit, []).append(r.commit.sha)
    return units, unit_picks


def _mark_absent(repo: GitRepo, results: Sequence[PickResult], memo: Memo) -> None:
    """The files a pick lacks that its parent does not have, or already holds as the source left
    them (a submodule bump another pick brought): one ls-tree per such pick, whose answers (a
    function of the commit and the path) are kept in ``memo``."""
    wanted = [
        (r.commit.sha, f.path, f.source.new_blob if f.source else None)
        for r in results
        for f in r.files
        if f.only_source or f.status == "missing-from-pick"
    ]
    ids: dict[tuple[str, str], str] = {}
    todo: list[tuple[str, str]] = []
    for pair in dict.fromkeys((f"{pick}^", path) for pick, path, _ in wanted):
        kept = memo.get("entry", pair, lambda v: isinstance(v, str))
        if kept is None:
            todo.append(pair)
        elif kept:  # "": the parent has no such path
            ids[pair] = kept
    got = entries_at(repo, todo)
    for pair in todo:
        memo.put("entry", pair, got.get(pair, ""))
    ids.update(got)
    by_sha = {r.commit.sha: r for r in results}
    absent, already = at_parent(wanted, ids)
    for pick, path in absent:
        by_sha[pick].absent.add(path)
    for pick, path in already:
        by_sha[pick].already.add(path)


def _account(section: Section, left: Counter[str], picks: int) -> None:
    """Every non-merge commit of the range is a pick, the source branch's own (merged back), or
    history only (brought by a merge that changed nothing here): say how many were left out, and
    never let a range of commits with no pick judged pass."""
    if left["merged back"]:
        section.summary += (
            f"; {left['merged back']} commit(s) of the source branch merged back: not picks"
        )
    if left["history only"]:
        section.summary += (
            f"; {left['history only']} commit(s) brought by a merge that changed nothing on this "
            "branch (its tree is its first parent's): not picks"
        )
    if left.total() and not picks:
        section.findings.append(
            Finding(
                "range-unjudged",
                "P1",
                f"none of the range's {left.total()} non-merge commit(s) was judged as a pick",
                "each was brought in by a merge of the source branch or by a merge that changed "
                "nothing; check BASE, HEAD and --source",
                key="range-unjudged",
            )
        )
