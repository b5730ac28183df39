"""Cherry-pick fidelity: does each pick of BASE..HEAD carry exactly what its source carried?

``fidelity_section`` is the entry point (the ``fidelity`` and ``compare`` commands call it).
Source resolution lives in source.py, per-file comparison in compare.py, end state in
endstate.py and missing PR-branch commits in missing.py; this module builds the Section.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from harness.checks.fidelity.anchors import anchored, judged
from harness.checks.fidelity.changeid import CHANGE_ID_GREP, landed
from harness.checks.fidelity.compare import (
    EMPTY_SHA1,
    PICK_STATUSES,
    FileResult,
    Side,
    checksum,
    compare_files,
    is_release_path,
    pick_status,
)
from harness.checks.fidelity.endstate import (
    EndStateJobs,
    NoEndStates,
    Row,
    end_states,
    file_paths,
)
from harness.checks.fidelity.followups import (
    GREP,
    WORTH_A_LOOK,
    FollowUp,
    find_followups,
    worth_a_look,
)
from harness.checks.fidelity.lines import (
    ORIGIN_GREP,
    copies,
    first_parent_line,
    own_commits,
    release_merges,
    source_own,
)
from harness.checks.fidelity.memo import Memo
from harness.checks.fidelity.merges import brought_by, pr_commits
from harness.checks.fidelity.missing import MissingResult, find_missing, iso
from harness.checks.fidelity.pick import PickResult
from harness.checks.fidelity.release import compile_patterns, moves_versions, release_reason
from harness.checks.fidelity.severity import at_parent, pick_severity
from harness.checks.fidelity.source import (
    HistoryFacts,
    PatchStore,
    Resolution,
    SourceFinder,
    needs_content_search,
)
from harness.checks.fidelity.units import complete_units
from harness.checks.result import Checked, FidelityResult
from harness.errors import UsageError
from harness.git import Commit, GitRepo
from harness.git.evidence import entries_at
from harness.git.history import count_commits, fork_point, range_commits, range_parents
from harness.git.picks import ENTRY_SHA, LogEntry, object_ids
from harness.git.picks import bodies as read_bodies
from harness.git.picks import history as read_history
from harness.report.model import (
    SEVERITY_RANK,
    Cell,
    Code,
    Control,
    Details,
    Finding,
    Section,
    Severity,
    Sha,
    Table,
    bounded,
)
from harness.report.printable import printable
from harness.report.safe import line_shown

if TYPE_CHECKING:
    from harness.infra.history_index import HistoryIndex
    from harness.infra.offload import Worker

_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="harness-fidelity")
OFFLOAD_PICKS = 16  # end states cost ~10 ms a pick on a release range; a worker ~0.1 s to start
SECTION_ID = "fidelity"
_DETAIL_LINES = 20
# Lines of one file's only_in_pick / only_in_source lists the JSON keeps; past it the list stops
# and ``<list>_left_out`` counts the rest (a 20k-file vendoring pick made a 45 MB report.json).
JSON_LINES = 200
PICK_LEGEND = (
    "status: identical (± lines equal per file; context may differ) · whitespace-only "
    "(equal once whitespace is removed) · superset (pick carries all of the source and more) · "
    "subset (pick carries part of the source) · adapted (both sides have lines the other lacks) · "
    "no-source · forward-merged (no other source: made on this branch, the commit itself reached "
    "the source branch through a merge). via: map (--map) · trailer (cherry picked from, "
    "[PR #N/X backport], Backport of X; only a commit on the source) · change-id (the source "
    "commit with the pick's Gerrit Change-Id) · pr-number (#N in the subject, confirmed by content) · "
    "patch-id (same ± lines per file, whitespace ignored) · similarity "
    "(share of signed lines; confidence 0..1) · title (a PR title one merge carries) · authored "
    "(the one source commit with the pick's author date and subject, confirmed by content) · subject "
    "(the one source commit with the pick's subject, PR numbers aside, at least as similar as "
    "similarity asks) · twin (a bot's commit with the pick's subject, made within a day of it, "
    "all of whose lines the pick carries) · merge "
    "(the source is a merge commit: the PR's first-parent diff, found by trailer, PR number or title, "
    "or content; its commits are listed)"
)
FILE_LEGEND = (
    "+/−: added/removed lines; +sha1/−sha1: first 8 hex of sha1 over those lines, each ending "
    "in \\n, prefix and context stripped. status: identical · context-only (± equal, surrounding "
    "lines differ: not a mismatch) · whitespace-only · adapted · extra-in-pick · missing-from-pick "
    "· renamed (paired across paths) · binary (blob ids compared)"
)


def _name_origins(res: Mapping[str, Resolution], copy_of: Mapping[str, str]) -> None:
    """A source that is a backport of another source commit (a sibling release's pick merged
    forward) stands for its origin: the origin is named instead, once."""
    for r in res.values():
        named: list[str] = []
        for s in r.sources:
            o = s
            for _ in range(8):  # a pick of a pick: follow the chain, bounded
                o = copy_of.get(o, o)
            if o != s:
                r.note = "; ".join(
                    x for x in (r.note, f"{s[:12]} is a backport of {o[:12]}: named instead") if x
                )
            if o not in named:
                named.append(o)
        r.sources = named


def _resolve_mapping(
    repo: GitRepo, mapping: Mapping[str, str | Sequence[str]] | None, picks: Sequence[Commit]
) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    known = {p.sha for p in picks}
    for pick_ref, src in (mapping or {}).items():
        pick = repo.resolve(pick_ref)
        if pick not in known:
            raise UsageError(f"--map {pick_ref}: not a non-merge commit of the range")
        out[pick] = [repo.resolve(s) for s in ([src] if isinstance(src, str) else src)]
    return out


def _figures(side: Side | None) -> dict[str, object] | None:
    return side.figures() if side else None


def _signed(lines: Sequence[bytes]) -> str:
    shown = [line_shown(ln) for ln in lines[:_DETAIL_LINES]]
    if len(lines) > _DETAIL_LINES:
        shown.append(f"… {len(lines) - _DETAIL_LINES} more")
    return "\n".join(shown) or "(none)"


def _pick_severity(r: PickResult) -> Severity | None:
    return pick_severity(r.status, r.files, r.absent, r.already)[0]


def _compare(
    repo: GitRepo,
    base: str,
    head: str,
    source: str,
    mapping: Mapping[str, str | Sequence[str]] | None,
    fork: str,
    jobs: EndStateJobs,
    index: HistoryIndex | None = None,
    branch_tip: str | None = None,
) -> tuple[
    list[Commit],
    list[PickResult],
    PatchStore,
    list[LogEntry],
    dict[str, Sequence[str]] | None,
    Counter[str],
]:
    """The picks, their sources and comparisons: the range's picks are ``_range_picks``, the
    source side ``_Sources``, the search ``_resolve`` and each pick's comparison ``_pick_results``."""
    # The source history since the fork point on HEAD's own line (``fork``): what SOURCE has beyond
    # it, even where HEAD later merged it back in (earlier picks' sources are then ancestors of HEAD).
    full_history = _history(repo, index, [source], [fork])
    # Picks: the range's non-merge commits of HEAD's own line, whether or not the source branch
    # reaches them (a release merged forward into main); what a merge of main back into the release
    # brought is main's, not picks (lines.py).
    own, picks, merges, left = _range_picks(repo, base, head, source, full_history)
    forced = _resolve_mapping(repo, mapping, picks)
    # When some pick can only be found by content, the history's changed paths are listed by a
    # second git log that runs in a thread while the named candidates are diffed and confirmed.
    touched = (
        _POOL.submit(_history, repo, index, [source], [fork], paths=True)
        if needs_content_search(picks, forced)
        else None
    )
    # Sources: the source branch's own commits that are not the picks themselves (a release merged
    # forward brings its commits, and the merge that brought them, into main: no source).
    mine = source_own(full_history, source, release_merges(full_history, own))
    history = [c for c in full_history if c.sha in mine and c.sha not in own]
    forwarded = brought_by(full_history, source)
    reached = {c.sha: forwarded.get(c.sha, source) for c in full_history if c.sha in own}
    # PR titles of merges: only picks that name no source (no trailer, no number) are matched by title.
    titles = (
        _bodies(repo, index, [source], [fork], merges=True)
        if touched is not None and any(len(c.parents) > 1 for c in history)
        else {}
    )
    facts = HistoryFacts(history)
    side = _Sources(repo, history, source, index, picks, jobs, facts)
    copied = _POOL.submit(_bodies, repo, index, [source], [fork], grep=ORIGIN_GREP)
    finder = functools.partial(
        SourceFinder, repo, history=history, store=side.store, touched=touched, merge_titles=titles
    )
    finder = functools.partial(
        finder,
        facts=facts,
        by_change=functools.partial(_by_change_id, repo, index, source, fork, facts),
    )
    # A trailer naming a commit of the PR branch (--source-branch) names a source as the source
    # branch's own commits do: the squash's pick is completed by it (``_branch``).
    pr_branch = set(repo.rev_list([branch_tip], [source, base])) if branch_tip else set()
    finder = functools.partial(finder, brought=side.brought, found=side.found, also=pr_branch)
    if forced:  # --map names sources of its own: nothing is kept
        res = finder(picks=picks, mapping=forced).resolve()
    else:
        scope = Memo(index, [source, fork, _history_id(history), branch_tip])
        res = _resolve(picks, finder, side.store, side.found, scope, touched is not None)
    _name_origins(res, copies(repo, history, copied.result()))
    results = side.results(res, reached)
    paths: dict[str, Sequence[str]] | None = facts.paths(touched) if touched is not None else None
    return merges, results, side.store, history, paths, left


class _Sources:
    """The source side of one run: its history, the patch store reading it, and the end states
    started as the picks' sources are found (``found``, called by the source search)."""

    def __init__(
        self,
        repo: GitRepo,
        history: list[LogEntry],
        source: str,
        index: HistoryIndex | None,
        picks: Sequence[Commit],
        jobs: EndStateJobs,
        facts: HistoryFacts,
    ) -> None:
        self.history, self.picks, self.jobs = history, picks, jobs
        self.facts = facts
        self.order, self.merge_shas = facts.order, facts.merges
        first = {c.sha: c.parents[0] for c in history if c.sha in facts.merges}
        self.store = PatchStore(repo, first, index)
        self.brought = brought_by(history, source)
        self._by_merge: dict[str, list[str]] | None = None
        # (pick, its sources in history order) → its files compared, made once for both uses
        self.compared: dict[tuple[str, tuple[str, ...]], list[FileResult]] = {}

    def _pr_commits(self, merges: set[str]) -> dict[str, list[str]]:
        """``pr_commits`` of these merges, from one pass over the history for all of them."""
        if self._by_merge is None:
            self._by_merge = pr_commits(self.history, self.brought, self.merge_shas)
        return {m: self._by_merge.get(m, []) for m in merges}

    def _rows(self, found: Mapping[str, Resolution]) -> list[Row]:
        out: list[Row] = []
        store = self.store
        for sha, r in found.items():
            sources = sorted(r.sources, key=lambda s: self.order.get(s, len(self.order)))
            if not all(s in store.full or s in store.lines for s in sources):
                continue  # not read yet: its end states start with the last job
            # Files pair by path and signed lines: the sources' -U0 diffs pair as their full ones.
            # Which diffs are full is decided once (a prefetch may complete one meanwhile): only a
            # comparison of full diffs is the one ``results`` makes.
            full = [store.full.get(s) for s in sources]
            if all(full):
                theirs = [f for p in full if p is not None for f in p.files]
            else:
                theirs = [f for s in sources for f in store.changed(s)]
            files = compare_files(store.full[sha].files, theirs)
            if all(full):
                self.compared[(sha, tuple(sources))] = files
            out.append((sha, file_paths(files), sources))
        return out

    def found(self, res: dict[str, Resolution]) -> None:
        """Sources found for these picks: their end states start now."""
        if not self.jobs.given:
            self.jobs.picks({p.sha: self.store.full[p.sha].files for p in self.picks})
        self.jobs.add(self._rows(res))
        # Their full diffs (and a merge source's PR commits) are read while the search goes on.
        sources = {s for r in res.values() for s in r.sources}
        inner = self._pr_commits(sources & self.merge_shas)
        self.store.prefetch(sorted(sources) + [c for cs in inner.values() for c in cs])

    def results(
        self, res: Mapping[str, Resolution], reached: Mapping[str, str]
    ) -> list[PickResult]:
        """Each pick compared with its sources; every pick's end states started."""
        history, store, picks = self.history, self.store, self.picks
        merged = {s for r in res.values() if r.via == "merge" for s in r.sources}
        inner = self._pr_commits(merged)
        # The PR commits of merge sources are read with them: the follow-ups need their changes.
        store.ensure(
            [s for r in res.values() for s in r.sources]
            + [p.sha for p in picks]
            + [c for cs in inner.values() for c in cs]
        )
        subjects = {c.sha: c.subject for c in history}
        results = _pick_results(
            picks, res, store, self.order, reached, inner, subjects, self.compared
        )
        _later_copies(
            results,
            {c.sha: c.commit_time for c in history},
            {c.sha: c.author_time for c in history},
        )
        self.jobs.finish(
            [(r.commit.sha, file_paths(r.files), r.resolution.sources) for r in results],
            {p.sha: store.full[p.sha].files for p in picks},
        )
        return results


def _by_change_id(
    repo: GitRepo, index: HistoryIndex | None, source: str, fork: str, facts: HistoryFacts
) -> dict[str, list[str]]:
    """Gerrit's Change-Ids on the source history (the finder asks only for a pick that carries
    one and whose trailer names no source commit)."""
    return landed(_bodies(repo, index, [source], [fork], grep=CHANGE_ID_GREP), facts.order)


def _history_id(history: Sequence[LogEntry]) -> str:
    """The source's own history as the memos' scope: besides the source tip and the fork point it
    depends on which of HEAD's own commits the source reached (a release merged forward)."""
    return hashlib.sha1("\n".join(map(ENTRY_SHA, history)).encode("ascii")).hexdigest()


def _resolve(
    picks: Sequence[Commit],
    finder: Callable[..., SourceFinder],
    store: PatchStore,
    found: Callable[[dict[str, Resolution]], None],
    memo: Memo,
    listed: bool,
) -> dict[str, Resolution]:
    """Each pick's source: kept answers from ``memo`` (scoped by the source history), the rest
    from a ``SourceFinder`` (``finder(picks=..., mapping=...)``). A pick searched by content was
    searched with or without the history's paths and PR titles (``listed``): its answer holds only
    for the same. A pick's answer depends on the other picks only through the similarity search
    (``SourceFinder.similar``): answers found there are used only when this run's similarity
    search is over the same picks, else searched again."""
    known: dict[str, Resolution] = {}
    similar: dict[str, list[str]] = {}
    for p in picks:
        v = memo.get("resolution", [p.sha], _valid_resolution)
        if v is not None and v[6] in (None, listed):
            known[p.sha] = Resolution(list(v[0]), v[1], v[2], v[3], v[4])
            if v[5] is not None:
                similar[p.sha] = v[5]
    if known:  # the kept picks' end states start now (their diffs read with the picks')
        store.ensure(
            [p.sha for p in picks] + sorted({s for r in known.values() for s in r.sources})
        )
        found({k: r for k, r in known.items() if r != Resolution()})
    todo = [p for p in picks if p.sha not in known]
    search = finder(picks=todo, mapping={})
    res = search.resolve() if todo else {}
    if similar and (search.similar or any(set(v) != set(similar) for v in similar.values())):
        for sha in similar:
            del known[sha]
        search = finder(picks=[p for p in picks if p.sha not in known], mapping={})
        res = search.resolve()
        todo = [p for p in picks if p.sha not in known]
    near = sorted(search.similar)
    for p in todo:
        r = res.get(p.sha) or Resolution()
        memo.put(
            "resolution",
            [p.sha],
            [
                list(r.sources),
                r.via,
                r.confidence,
                r.note,
                r.found_by,
                near if p.sha in near else None,
                listed if p.sha in search.searched else None,
            ],
        )
    return {**{k: r for k, r in known.items() if r != Resolution()}, **res}


def _valid_resolution(v: Any) -> bool:
    return (
        isinstance(v, list)
        and len(v) == 7
        and isinstance(v[0], list)
        and all(isinstance(x, str) for x in v[0])
        and (v[1] is None or isinstance(v[1], str))
        and (v[2] is None or type(v[2]) in (int, float))
        and isinstance(v[3], str)
        and (v[4] is None or isinstance(v[4], str))
        and (v[5] is None or (isinstance(v[5], list) and all(isinstance(x, str) for x in v[5])))
        and v[6] in (None, True, False)
    )


def _range_picks(
    repo: GitRepo, base: str, head: str, source: str, full_history: list[LogEntry]
) -> tuple[set[str], list[Commit], list[Commit], Counter[str]]:
    """HEAD's own commits of the range (what it made or picked, not what a merge of the source
    brought), its picks (the non-merge ones) and merges, and a count of the commits left out."""
    walk, line = range_parents(repo, base, head), first_parent_line(full_history, source)
    every = range_commits(repo, base, head)
    # A merge whose tree is its first parent's ("-s ours", an old release branch joined in)
    # carried nothing here: the commits it brought are history only.
    joined = [c.sha for c in every if c.is_merge]
    trees = object_ids(repo, [f"{m}^1^{{tree}}" for m in joined])
    tree_of = {c.sha: c.tree for c in every}
    empty = {m for m, t in zip(joined, trees, strict=True) if t == tree_of[m]}
    own = own_commits(walk, head, line, empty)
    by_line = own_commits(walk, head, line)  # without the empty merges
    left = Counter(
        "merged back" if c.sha not in by_line else "history only"
        for c in every
        if not c.is_merge and c.sha not in own
    )
    in_range = [c for c in every if c.sha in own]
    picks = [c for c in in_range if not c.is_merge]
    merges = [c for c in in_range if c.is_merge]
    return own, picks, merges, left


def _pick_results(
    picks: Sequence[Commit],
    res: Mapping[str, Resolution],
    store: PatchStore,
    order: Mapping[str, int],
    reached: Mapping[str, str],
    inner: Mapping[str, Sequence[str]],
    subjects: Mapping[str, str],
    compared: Mapping[tuple[str, tuple[str, ...]], list[FileResult]] | None = None,
) -> list[PickResult]:
    """Each pick compared file by file with its sources (ordered as the history is; ``compared``:
    comparisons already made, by pick and sources)."""
    results, compared = [], compared or {}
    for p in picks:
        r = res.get(p.sha) or Resolution()
        r.sources = sorted(r.sources, key=lambda s: order.get(s, len(order)))
        files = compared.get((p.sha, tuple(r.sources)))
        if files is None:
            files = compare_files(store.full[p.sha].files, store.files(r.sources))
        status = pick_status(files, bool(r.sources))
        if status == "no-source" and p.sha in reached:
            status = "forward-merged"  # made on this branch; the commit itself reached the source
        results.append(
            PickResult(
                p,
                r,
                files,
                status,
                pr_commits=[(c, subjects[c]) for s in r.sources for c in inner.get(s, [])],
                merged_into=reached.get(p.sha),
            )
        )
    return results


def _history(
    repo: GitRepo,
    index: HistoryIndex | None,
    include: Sequence[str],
    exclude: Sequence[str],
    *,
    paths: bool = False,
) -> list[LogEntry]:
    """The source history, from the history index where there is one (the same answer)."""
    if index is not None:
        return index.history(include, exclude, paths=paths)
    return read_history(repo, include, exclude, paths=paths)


def _bodies(
    repo: GitRepo,
    index: HistoryIndex | None,
    include: Sequence[str],
    exclude: Sequence[str],
    *,
    merges: bool = False,
    grep: Sequence[str] = (),
) -> dict[str, str]:
    """Message bodies of the source history, from the history index where there is one."""
    if index is not None:
        return index.bodies(include, exclude, merges=merges, grep=grep)
    return read_bodies(repo, include, exclude, merges=merges, grep=grep)


_BY_CONTENT = ("patch-id", "similarity", "title", "authored", "subject")
_RELEASE_SUBJECT = re.compile(
    # After a "[tag] " or a "MAINT: " / "chore(release): " prefix. "Prepare … for further
    # development" is numpy's "back to dev".
    r"^(?:\[[^\]\n]*\]\s*|[a-z]+(?:\([^)\n]*\))?!?:\s*)?"
    r"(REL\b|release\b|prepare\b.*\b(release|further development)\b|bump (the )?version\b|"
    r"back to dev)",
    re.IGNORECASE,
)


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


def _later_copies(
    results: Sequence[PickResult], committed: dict[str, int], authored: dict[str, int]
) -> None:
    """A release commit whose source, found by content, was committed after it is no source: the
    source branch copied this branch's own commit (version bump, changelog). A pick paired with
    such a copy of an earlier pick's commit is the same case."""
    copies: dict[str, str] = {}
    for r in results:
        srcs = r.resolution.sources
        # Only a release commit (its subject says so, or it touches only docs, changelog, version and
        # packaging metadata): a fix backported from its PR before the PR landed also predates its
        # source, and is judged as usual.
        release = _RELEASE_SUBJECT.search(r.commit.subject) or all(
            is_release_path(f.path) for f in r.files
        )
        if r.resolution.found_by not in _BY_CONTENT or len(srcs) != 1 or not release:
            continue
        # A copy keeps the author date; a bot's twin commit on the source branch (the same bump,
        # its own PR, made seconds apart) does not, and is the source.
        subject = _RELEASE_SUBJECT.search(r.commit.subject)
        if not subject and authored.get(srcs[0]) != r.commit.author_time:
            continue
        if committed.get(srcs[0], 0) > r.commit.committer_time:
            copies.setdefault(srcs[0], r.commit.sha)
            r.copy_of = r.commit.sha
        elif srcs[0] in copies:
            r.copy_of = copies[srcs[0]]


def picks_and_sources(
    repo: GitRepo, base: str, head: str, source: str, index: HistoryIndex | None = None
) -> list[PickResult]:
    """Each pick of base..head (resolved shas) with its sources and status: fidelity's own source
    finding, without end states, units or follow-ups (the backports matrix joins these per
    release), through the history index where there is one (the same answer; the caller saves
    it, once for every release)."""
    fork = fork_point(repo, base, head)
    jobs = NoEndStates(repo, fork, head)
    return _compare(repo, base, head, source, None, fork, jobs, index)[1]


def fidelity_section(
    repo: GitRepo,
    base: str,
    head: str,
    source: str,
    source_branch: str | None = None,
    mapping: Mapping[str, str | Sequence[str]] | None = None,
    release_paths: Sequence[str] = (),
    index: HistoryIndex | None = None,
) -> Section:
    """The section of ``fidelity_check``."""
    return fidelity_check(
        repo, base, head, source, source_branch, mapping, release_paths=release_paths, index=index
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
) -> Checked[FidelityResult]:
    """Compare every non-merge commit of base..head with its source on ``source``;
    ``release_paths``: the policy's extra release-only path patterns (release.py).

    With ``index`` (the history index of ``repo``), what the source history holds is read from it
    and what this run learned is kept in it; a whole answer is kept by the resolved commits it was
    computed from. The answer is the same with and without it."""
    source_name = source
    base, head, source = repo.resolve(base), repo.resolve(head), repo.resolve(source)
    branch_tip = repo.resolve(source_branch) if source_branch else None
    named = (source_name, source_branch, branch_tip)
    release = tuple(release_paths)
    if index is None:
        return _fidelity(repo, base, head, source, named, mapping, release)
    index.prime_range(base, head)
    try:
        if mapping:  # --map names refs of its own: not kept whole
            return _fidelity(repo, base, head, source, named, mapping, release, index)
        return _answer(index, repo, base, head, source, named, release)
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
) -> Checked[FidelityResult]:
    """The whole answer, from the index where it keeps one for these very commits."""
    from harness.infra.history_index import fidelity_parts, keep_fidelity, kept_fidelity

    parts = fidelity_parts(base, head, source, *named, release_paths)
    kept = kept_fidelity(index, parts)
    if kept is not None:
        return kept
    index.served["built"] += 1
    checked = _fidelity(repo, base, head, source, named, None, release_paths, index)
    keep_fidelity(index, parts, checked)
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
        return _check(
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
    # The follow-up log does not depend on the picks: it runs in the pool while they are resolved.
    bodies = _POOL.submit(_bodies, repo, index, [source], [fork], grep=GREP)
    # End states read blobs and diff them in Python, in a thread, from the moment a pick's sources
    # are known, while this thread waits on git for the other picks' sources, the PR branch, units
    # and follow-ups (none of which reads an end state).
    jobs = EndStateJobs(
        repo, fork, head, workers.worker, Memo(index, []), workers.start, OFFLOAD_PICKS
    )
    merges, results, store, history, touched, left = _compare(
        repo, base, head, source, mapping, fork, jobs, index, branch_tip
    )
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
        Memo(index, [source, fork, _history_id(history)]),
    )
    if index is not None:  # nothing more is read from the history: written while end states end
        _POOL.submit(index.save)
    states = jobs.result()
    for r in results:
        r.end_state = states.get(r.commit.sha, [])
    _mark_absent(repo, results, Memo(index, []))
    section = _section(
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
    sources = tuple((r.commit.sha, tuple(r.resolution.sources)) for r in results)
    later = tuple(dict.fromkeys(f.sha for f in followups if f.named))
    return Checked(
        FidelityResult(tuple(r.commit.sha for r in results), gaps, sources, later), section
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


def _pick_row(i: int, r: PickResult) -> list[Cell]:
    pa = sum(len(f.pick.added) for f in r.files if f.pick)
    pr = sum(len(f.pick.removed) for f in r.files if f.pick)
    sa = sum(len(f.source.added) for f in r.files if f.source)
    sr = sum(len(f.source.removed) for f in r.files if f.source)
    src: Cell = (
        Sha(r.resolution.sources[0])
        if len(r.resolution.sources) == 1
        else Code(" + ".join(s[:12] for s in r.resolution.sources))
        if r.resolution.sources
        else "—"
    )
    conf = f"{r.resolution.confidence:.2f}" if r.resolution.confidence is not None else "—"
    return [
        i,
        Sha(r.commit.sha),
        r.commit.subject,
        src,
        r.resolution.via or "—",
        conf,
        r.status,
        len(r.files),
        f"+{pa} −{pr}",
        f"+{sa} −{sr}" if r.resolution.sources else "—",
    ]


def _weigh(tables: list[Table], results: Sequence[PickResult], findings: list[Finding]) -> None:
    """Each pick's table and the follow-up table weigh as much as the findings they back, so a
    comment cut to fit keeps them before the tables of release commits and info-only picks."""
    rank: dict[str, int] = {}
    for f in findings:
        anchor = "follow-ups" if f.kind == "follow-up-not-picked" else f.key.partition(":")[0]
        rank[anchor] = max(rank.get(anchor, 0), SEVERITY_RANK[f.severity])
    titles = {_pick_title(i, r): r.commit.sha for i, r in enumerate(results, 1)}
    for t in tables:
        if t.title in titles:
            t.weight = rank.get(titles[t.title], 0)
        elif t.title.startswith("Follow-ups on "):
            t.weight = rank.get("follow-ups", 0)


def _pick_title(i: int, r: PickResult) -> str:
    src = ", ".join(s[:12] for s in r.resolution.sources) or "no source"
    return f"{i}. {r.commit.sha[:12]} ← {src}: {r.commit.subject} ({r.status})"


def _file_table(i: int, r: PickResult) -> Table:
    rows: list[list[Cell]] = []
    for f in r.files:
        p = f.pick.figures() if f.pick else None
        s = f.source.figures() if f.source else None

        def cells(x: dict[str, Any] | None) -> list[Cell]:
            return (
                [x["added"], x["removed"], Code(str(x["added_sha1"])), Code(str(x["removed_sha1"]))]
                if x
                else ["—", "—", "—", "—"]
            )

        rows.append([Code(f.path), f.status, *cells(p), *cells(s), f.note])
    return Table(
        _pick_title(i, r),
        [
            "file",
            "status",
            "pick +",
            "pick −",
            "pick +sha1",
            "pick −sha1",
            "source +",
            "source −",
            "source +sha1",
            "source −sha1",
            "note",
        ],
        rows,
        legend=FILE_LEGEND,
        control=f"checksum of empty input = {EMPTY_SHA1} (sha1 of nothing); a side with no ± "
        f"lines shows it",
        collapsed=r.status == "identical",
    )


def _capped(name: str, lines: Sequence[bytes]) -> dict[str, object]:
    """``name``: the first JSON_LINES lines as a report shows them; ``<name>_left_out``: how many
    more there are, only when some are left out."""
    out: dict[str, object] = {name: [line_shown(x) for x in lines[:JSON_LINES]]}
    if len(lines) > JSON_LINES:
        out[f"{name}_left_out"] = len(lines) - JSON_LINES
    return out


def _pick_data(r: PickResult) -> dict[str, object]:
    res = r.resolution
    # A later copy of this branch's own commit on the source (its release notes forwarded) is no
    # source: named as ``forward_port`` with the status against it, never as ``source``/``status``.
    copy = bool(r.copy_of and res.sources)
    sources = [] if copy else res.sources
    return {
        "pick": r.commit.sha,
        "source": sources[0] if sources else None,
        "sources": sources,
        "source_via": None if copy else res.via,
        "confidence": None if copy else res.confidence,
        "status": "no-source" if copy else r.status,
        "forward_port": {"sha": res.sources[0], "of": r.copy_of, "status": r.status}
        if copy
        else None,
        "subject": r.commit.subject,
        "note": res.note,
        "files": [
            {
                "path": f.path,
                "status": f.status,
                "same": f.same,
                "note": f.note,
                "pick": _figures(f.pick),
                "source": _figures(f.source),
                "source_path": f.source.path if f.source else None,
                **_capped("only_in_pick", f.only_pick),
                **_capped("only_in_source", f.only_source),
            }
            for f in r.files
        ],
        "end_state": [e.as_dict() for e in r.end_state],
        "pr_commits": [{"sha": c, "subject": subj} for c, subj in r.pr_commits],
        "found_by": res.found_by,
        "unit": list(r.unit),
        "completed_by": r.completed_by,
        "copy_of": r.copy_of,
    }


def _numbers(picks: Sequence[int], most: int = 12) -> str:
    """Pick numbers, the first ``most`` of them and how many more."""
    shown = ", ".join(map(str, picks[:most]))
    return shown + (f" and {len(picks) - most} more" if len(picks) > most else "")


def _findings(
    results: Sequence[PickResult],
    merges: Sequence[Commit],
    history_shas: set[str],
    missing: MissingResult | None,
    followups: Sequence[FollowUp] = (),
    release_paths: Sequence[re.Pattern[str]] = (),
) -> list[Finding]:
    out = []
    for i, r in enumerate(results, 1):
        verdict = _pick_verdict(i, r, results, release_paths)
        if verdict is not None:
            out.append(verdict)
        out += _pick_notes(i, r, history_shas)
    out += _range_findings(results, merges)
    if missing:
        out += _missing_findings(missing)
    out += _followup_findings(followups)
    return anchored(out, results, missing)


def _pick_verdict(
    i: int,
    r: PickResult,
    results: Sequence[PickResult],
    release_paths: Sequence[re.Pattern[str]],
) -> Finding | None:
    """The finding that judges pick ``i``: release-only, a later copy, completed by other picks,
    or its status with what differs; None for a pick that needs none."""
    sha, subj = r.commit.sha, r.commit.subject
    sev = _pick_severity(r)
    why_release = (
        release_reason(
            subj,
            [f.path for f in r.files],
            bool(_RELEASE_SUBJECT.search(subj)),
            release_paths,
            moves_versions([(f.path, f.pick.added, f.pick.removed) for f in r.files if f.pick]),
        )
        if sev and r.status != "identical"
        else None
    )
    if why_release:
        return Finding(
            "pick-release-commit",
            "info",
            f"pick {i} {sha[:12]}: release-only commit ({r.status}), no source expected: {subj}",
            why_release,
            key=f"{sha}:own-release",
        )
    elif sev and r.copy_of:
        own = "this pick" if r.copy_of == sha else f"pick {r.copy_of[:12]}"
        return Finding(
            "pick-release-commit",
            "info",
            f"pick {i} {sha[:12]}: its only candidate source "
            f"{r.resolution.sources[0][:12]} is a later copy of this branch's own commit "
            f"({own}): {subj}",
            f"status against the copy: {r.status}",
            key=f"{sha}:copy",
        )
    elif sev and r.completed_by:
        nums = [str(n) for n, o in enumerate(results, 1) if o.commit.sha in r.completed_by]
        return Finding(
            "pick-completed",
            "info",
            f"pick {i} {sha[:12]} is {r.status} on its own, complete "
            f"with pick(s) {', '.join(nums)}: {subj}",
            "together they carry the source's net change in every file",
            key=f"{sha}:completed",
        )
    elif sev:
        lacking = [f.path for f in r.files if f.only_source or f.status == "missing-from-pick"]
        detail = {
            "no-source": "no source found on the source branch"
            + (f" ({r.resolution.note})" if r.resolution.note else ""),
            "subset": f"source lines missing from the pick in {', '.join(lacking)}",
            "superset": "the pick carries changes its source does not",
            "adapted": f"files that differ: {', '.join(f.path for f in r.files if not f.same)}",
            "whitespace-only": "re-indented relative to its source",
        }[r.status]
        set_aside = pick_severity(r.status, r.files, r.absent, r.already)[1]
        if set_aside:
            detail += f" ({set_aside})"
        return Finding(
            f"pick-{r.status}",
            sev,
            f"pick {i} {sha[:12]} is {r.status}: {subj}",
            detail,
            key=f"{sha}:{r.status}",
        )
    return None


def _pick_notes(i: int, r: PickResult, history_shas: set[str]) -> list[Finding]:
    """A source off the source branch; an identical pick whose end state still differs."""
    sha = r.commit.sha
    out = []
    for s in r.resolution.sources:
        # A PR-branch commit picked to complete a squash's pick belongs to that PR: not off-branch.
        if s not in history_shas and r.unit == tuple(r.resolution.sources):
            out.append(
                Finding(
                    "source-off-branch",
                    "info",
                    f"pick {i} {sha[:12]}: source {s[:12]} is not "
                    "on the source branch since the fork point",
                    key=f"{sha}:{s}",
                )
            )
    if r.status == "identical":  # otherwise the pick's own difference already explains it
        intro = [e.path for e in r.end_state if e.status in ("introduced", "binary-differs")]
        if intro:
            out.append(
                Finding(
                    "end-state-introduced",
                    "P2",
                    f"pick {i} {sha[:12]}: end state differs from "
                    "the source beyond pre-existing differences",
                    ", ".join(intro),
                    key=f"{sha}:end",
                )
            )
    return out


def _range_findings(results: Sequence[PickResult], merges: Sequence[Commit]) -> list[Finding]:
    """Picks merged forward, picks sharing one source, merges inside the range."""
    out = []
    forward = [i for i, r in enumerate(results, 1) if r.status == "forward-merged"]
    if forward:
        out.append(
            Finding(
                "pick-forward-merged",
                "info",
                f"{len(forward)} pick(s) made on this branch reached the source branch through a "
                "merge of it, with no other source: " + _numbers(forward),
                "the commit itself is on the source branch (a release branch merged forward)",
                key="forward-merged",
            )
        )
    by_source: dict[tuple[str, ...], list[int]] = {}
    for i, r in enumerate(results, 1):
        if r.resolution.sources:
            by_source.setdefault(tuple(r.resolution.sources), []).append(i)
    for sources, picks in by_source.items():
        if (
            len(picks) > 1
        ):  # e.g. two version bumps with equal ± lines: the pairing is content-true but suspect
            out.append(
                Finding(
                    "shared-source",
                    "info",
                    f"picks {', '.join(map(str, picks))} resolve to the same "
                    f"source {', '.join(x[:12] for x in sources)}",
                    "check that each pick really backports that commit",
                    key=":".join(sources),
                )
            )
    for m in merges:
        out.append(
            Finding(
                "merge-in-range",
                "info",
                f"merge commit {m.sha[:12]} inside the range is not compared: {m.subject}",
                key=m.sha,
            )
        )
    return out


def _missing_findings(missing: MissingResult) -> list[Finding]:
    out = []
    for c in missing.missing:
        msev: Severity = "P2" if c.test_only else "P1"
        out.append(
            Finding(
                "missing-commit",
                msev,
                f"PR-branch commit {c.sha[:12]} is not in the pick: {c.subject}",
                ", ".join(f"{f['path']} +{f['added']} −{f['removed']}" for f in c.files),
                key=f"{missing.pick}:{c.sha}",
            )
        )
    return out


def _followup_findings(followups: Sequence[FollowUp]) -> list[Finding]:
    out = []
    for fu in followups:
        if fu.named:
            out.append(
                Finding(
                    "follow-up-not-picked",
                    fu.severity,
                    f"follow-up {fu.sha[:12]} of source {fu.unit[0][:12]} is not picked: {fu.subject}",
                    f"{fu.why}; {bounded(fu.paths)}",
                    key=f"{fu.unit[0]}:{fu.sha}",
                )
            )
    ranked = worth_a_look(followups)
    if ranked:
        # Named nothing: one info list, best first, capped (all of them in the follow-up table).
        out.append(
            Finding(
                "follow-up-worth-a-look",
                "info",
                f"{len(ranked)} later source commit(s) change lines a picked source added but name "
                f"no source: worth a look, not gated",
                "; ".join(
                    f"{fu.sha[:12]} ({fu.why.partition(' (')[2].rstrip(')') or fu.why}) "
                    f"after {fu.unit[0][:12]}: {fu.subject}"
                    for fu in ranked[:WORTH_A_LOOK]
                )
                + (
                    f"; … {len(ranked) - WORTH_A_LOOK} more in the table"
                    if len(ranked) > WORTH_A_LOOK
                    else ""
                ),
                key="worth-a-look:" + ",".join(sorted(f.sha for f in ranked)),
            )
        )
    return out


def _section(
    results: list[PickResult],
    merges: list[Commit],
    missing: MissingResult | None,
    history: list[LogEntry],
    store: PatchStore,
    source_branch: str | None,
    followups: Sequence[FollowUp] = (),
    source_name: str = "the source branch",
    release_paths: Sequence[re.Pattern[str]] = (),
) -> Section:
    counts = Counter(r.status for r in results)
    summary = f"{len(results)} pick(s): " + (
        ", ".join(f"{counts[s]} {s}" for s in PICK_STATUSES if counts[s]) or "none"
    )
    if merges:
        summary += f"; {len(merges)} merge commit(s) in the range not compared"
    tables = [_picks_table(results)]
    tables += [
        _file_table(i, r) for i, r in enumerate(results, 1) if r.files or r.resolution.sources
    ]
    tables.append(_end_state_table(results))
    details = _details(results)
    data: dict[str, object] = {
        "picks": [_pick_data(r) for r in results],
        "merges": [{"sha": m.sha, "subject": m.subject} for m in merges],
        "missing_commits": [],
        "cut_point": None,
        "source_branch_pick": None,
    }
    not_verified = _not_verified(store, merges, missing)
    if missing is not None:
        data["missing_commits"] = [c.as_dict() for c in missing.missing]
        data["branch_commits"] = [c.as_dict() for c in missing.commits]
        data["cut_point"], data["source_branch_pick"] = missing.cut_point, missing.pick
        tables.append(_branch_table(missing, source_branch))
    data["follow_ups"] = [f.as_dict() for f in followups]
    tables.append(_followups_table(followups, source_name, history))
    controls = _controls(results, store)
    findings = _findings(
        results, merges, set(map(ENTRY_SHA, history)), missing, followups, release_paths
    )
    _weigh(tables, results, findings)
    section = Section(
        SECTION_ID,
        "Cherry-pick fidelity",
        summary,
        tables,
        findings,
        controls,
        not_verified,
        details,
        data,
        judged=judged(results, findings),
    )
    # Paths and subjects that are not UTF-8 reach us with surrogate escapes: each byte is shown
    # as ``\xNN`` before the section is cached or rendered.
    return printable(section)


def _picks_table(results: Sequence[PickResult]) -> Table:
    return Table(
        "Picks",
        [
            "#",
            "pick",
            "subject",
            "source",
            "via",
            "confidence",
            "status",
            "files",
            "pick ±",
            "source ±",
        ],
        [_pick_row(i, r) for i, r in enumerate(results, 1)],
        legend=PICK_LEGEND,
        control=f"checksum of empty input = {EMPTY_SHA1}; self-comparison "
        "of the first pick is listed under Controls",
    )


def _end_state_table(results: Sequence[PickResult]) -> Table:
    end_rows: list[list[Cell]] = [
        [i, Sha(r.commit.sha), Code(e.path), e.status, e.pre_existing, e.other_picks, e.introduced]
        for i, r in enumerate(results, 1)
        for e in r.end_state
    ]
    return Table(
        "End state: each touched file at HEAD vs right after the source",
        ["#", "pick", "file", "end state", "pre-existing", "other picks", "introduced"],
        end_rows,
        legend="differing lines of an ordered diff (a moved line counts): pre-existing (the fork "
        "point already differed from the source's parent) · "
        "other picks (changed by another pick of the range) · introduced (the rest); a binary "
        "file, or one over the size limit (git diffs it as binary), compares blob ids: "
        "binary-differs, or other-picks when another pick left HEAD's blob",
        control="'same' rows: the blob at HEAD has the same object id as after the source",
        collapsed=len(end_rows) > 20,
    )


def _details(results: Sequence[PickResult]) -> list[Details]:
    """Folded evidence: the lines only one side has, a merge's PR commits, end-state lines."""
    details = []
    for i, r in enumerate(results, 1):
        for f in r.files:
            if f.only_pick or f.only_source:
                details.append(
                    Details(
                        f"pick {i} {r.commit.sha[:12]} {f.path} ({f.status}): lines only in one "
                        "side",
                        f"only in pick:\n{_signed(f.only_pick)}\n\nonly in source:\n"
                        f"{_signed(f.only_source)}",
                    )
                )
    for i, r in enumerate(results, 1):
        if r.pr_commits:
            details.append(
                Details(
                    f"pick {i} {r.commit.sha[:12]}: the PR behind merge {r.resolution.sources[0][:12]} "
                    f"({len(r.pr_commits)} commit(s))",
                    "\n".join(f"{c[:12]} {subj}" for c, subj in r.pr_commits),
                )
            )
        for e in r.end_state:
            if e.status != "same":
                more = e.pre_existing + e.other_picks + e.introduced - len(e.lines)
                details.append(
                    Details(
                        f"pick {i} {r.commit.sha[:12]} {e.path}: end state {e.status} (HEAD vs "
                        "after the source, in file order)",
                        "\n".join(f"{c}: {ln}" for c, ln in e.lines)
                        + (f"\n… {more} more" if more > 0 else "")
                        or "(no line differs: end of line or final newline only)",
                    )
                )
    return details


def _not_verified(
    store: PatchStore, merges: Sequence[Commit], missing: MissingResult | None
) -> list[str]:
    not_verified = [
        "whether the picks build or pass tests: content only here (compare's tests section, or "
        "`harness tests`, runs them)",
        "file mode changes (only ± lines and blob ids are compared)",
        f"the lines of a file over {store.repo.big_file >> 20} MiB (git diffs it as binary: blob "
        "ids are compared)",
        "similarity search reads only source commits that touch the unresolved picks' paths and "
        "were committed within a year of the pick",
        "end state: which commit introduced a line (lines are classed by content, in file order)",
        "follow-ups found only by content (a change to the source's lines within 30 days) are a "
        "heuristic, listed as info (worth a look): a refactor that rewrites those lines is listed too",
    ]
    if merges:
        not_verified.append("merge commits inside the range (listed, not compared)")
    if missing is None:
        not_verified.append(
            "commits added to the source PR after the pick was cut (no --source-branch)"
        )
    return not_verified


def _branch_table(missing: MissingResult, source_branch: str | None) -> Table:
    return Table(
        f"PR branch {source_branch}: commits vs pick "
        f"{missing.pick[:12] if missing.pick else '(none matched)'}",
        ["commit", "author date", "subject", "files ±", "carried", "state"],
        [
            [
                Sha(c.sha),
                iso(c.author_time),
                c.subject,
                ", ".join(f"{f['path']} +{f['added']} −{f['removed']}" for f in c.files),
                f"{c.contained:.2f}",
                c.state + (" (cut point)" if c.sha == missing.cut_point else ""),
            ]
            for c in missing.commits
        ],
        legend="carried: share of the commit's signed lines found in the pick; cut point: "
        "the last commit the pick carries (≥ 0.80); later commits are missing",
        control="the cut-point row itself is carried (≥ 0.80): it shows the match works",
    )


def _followups_table(
    followups: Sequence[FollowUp], source_name: str, history: Sequence[LogEntry]
) -> Table:
    return Table(
        f"Follow-ups on {source_name} not picked",
        ["source", "follow-up", "subject", "why", "files", "severity"],
        [
            [
                Sha(f.unit[0]),
                Sha(f.sha),
                f.subject,
                f.why,
                bounded(f.paths),
                f.severity if f.named else "info (worth a look)",
            ]
            for f in [*(f for f in followups if f.named), *worth_a_look(followups)]
        ],
        legend="later commits on the source branch that name a source: Fixes: trailer, "
        "revert, follow-up to #N, the same PR number or the same Fixes #N issue (P1 when "
        "they touch non-test files the pick carries; info when only the issue names them); "
        "then, ranked, candidates that only "
        "change (within 30 days) lines the source added (info: worth a look); ones a pick "
        "carries (≥ 0.80 of their lines) are left out",
        control=f"{len(history)} source commit(s) after the fork point searched; a pick's own "
        "source never lists itself",
    )


def _controls(results: Sequence[PickResult], store: PatchStore) -> list[Control]:
    self_files = next((r for r in results if r.files), None)
    controls = [
        Control(
            "empty-input checksum", f"sha1 of no lines → {checksum([])}", checksum([]) == "da39a3ee"
        )
    ]
    if self_files:
        own = [f.pick for f in self_files.files if f.pick]
        # A pick compared with itself must come out identical: the comparator is not blind.
        st = pick_status(
            [
                f
                for f in compare_files(
                    store.full[self_files.commit.sha].files, store.full[self_files.commit.sha].files
                )
            ],
            True,
        )
        controls.append(
            Control(
                "self-comparison",
                f"pick {self_files.commit.sha[:12]} ({len(own)} file(s)) vs itself → {st}",
                st == "identical",
            )
        )
    # How many diff-tree processes a run started is not reported: with the history index it
    # depends on what earlier runs kept, and the same inputs must give the same report.
    return controls
