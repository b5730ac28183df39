"""The picks and their sources: the range's picks (HEAD's own non-merge commits, ``_range_picks``),
the source side of a run (``_Sources``: the source's own history, the patch store, the end states
started as sources are found), the search with its per-pick memos (``_resolve``) and each pick
compared with its sources (``_pick_results``); ``compare_picks`` runs them in that order.
"""

from __future__ import annotations

import functools
import hashlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from harness.checks.fidelity.changeid import CHANGE_ID_GREP, landed
from harness.checks.fidelity.compare import (
    FileResult,
    compare_files,
    from_kept,
    is_release_path,
    kept_form,
    pick_status,
    valid_kept,
)
from harness.checks.fidelity.endstate import EndStateJobs, Row, file_paths
from harness.checks.fidelity.followups import GREP
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
from harness.checks.fidelity.patches import PatchStore, read_early
from harness.checks.fidelity.pick import PickResult
from harness.checks.fidelity.release import RELEASE_SUBJECT
from harness.checks.fidelity.source import (
    HistoryFacts,
    Resolution,
    SourceFinder,
    needs_content_search,
)
from harness.errors import UsageError
from harness.git import Commit, GitRepo
from harness.git.history import range_commits, range_parents
from harness.git.picks import ENTRY_SHA, LogEntry, greps_ahead, object_ids
from harness.git.picks import bodies as read_bodies
from harness.git.picks import history as read_history
from harness.infra.futures import Future, ThreadPoolExecutor

if TYPE_CHECKING:
    from harness.infra.history_index import HistoryIndex


# Threads that mostly wait on git: the follow-up and origin greps, the range's log, the history's
# paths and the files a pick lacks at its parent can all be in flight at once.
POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="harness-fidelity")


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


EARLY_DIFFS = 1000  # a range with more non-merge commits reads early only its first-parent line's


def _likely_picks(commits: Sequence[Commit], head: str) -> list[str]:
    """The range's commits (``commits``) that are likely picks, whose diffs are read early: its
    non-merge commits (a merge of the source into the release brings some that are not), or past
    EARLY_DIFFS of them only those on HEAD's first-parent line."""
    singles = [c.sha for c in commits if not c.is_merge]
    if len(singles) <= EARLY_DIFFS:
        return singles
    by_sha = {c.sha: c for c in commits}
    out: list[str] = []
    at = by_sha.get(head)
    while at is not None:
        if not at.is_merge:
            out.append(at.sha)
        at = by_sha.get(at.parents[0]) if at.parents else None
    return out


def _likely_content_search(
    mapping: Mapping[str, str | Sequence[str]] | None, commits: Sequence[Commit]
) -> bool:
    """Whether some non-merge commit of the range names its source neither by trailer nor PR
    number: the picks are among them, so a content search is then likely. Not asked with ``--map``
    (its picks are known only later)."""
    return not mapping and needs_content_search([c for c in commits if not c.is_merge], {})


def _listing(
    repo: GitRepo,
    index: HistoryIndex | None,
    source: str,
    fork: str,
    mapping: Mapping[str, str | Sequence[str]] | None,
    ranged: Future[list[Commit]],
) -> Future[list[LogEntry] | None]:
    """The history with its changed paths, read in a thread beside the plain history once the
    range's commits say a content search is likely (``compare_picks`` uses it only when one is
    needed), else None."""

    def listed() -> list[LogEntry] | None:
        if not _likely_content_search(mapping, ranged.result()):
            return None
        return _history(repo, index, [source], [fork], paths=True)

    return POOL.submit(listed)


def compare_picks(
    repo: GitRepo,
    base: str,
    head: str,
    source: str,
    mapping: Mapping[str, str | Sequence[str]] | None,
    fork: str,
    jobs: EndStateJobs,
    index: HistoryIndex | None = None,
    branch_tip: str | None = None,
    on_history: Callable[[], object] | None = None,
) -> tuple[
    list[Commit],
    list[PickResult],
    PatchStore,
    list[LogEntry],
    dict[str, Sequence[str]] | None,
    Counter[str],
    HistoryFacts,
]:
    """The picks, their sources and comparisons: the range's picks are ``_range_picks``, the
    source side ``_Sources``, the search ``_resolve`` and each pick's comparison ``_pick_results``.
    ``on_history``: called once the source history is read (it starts what needs none of it but
    should not compete with its walk for the cores, e.g. the follow-ups' grep)."""
    # The range's commits are read in a thread while this one reads the source history.
    ranged = POOL.submit(range_commits, repo, base, head)
    if on_history is not None:
        # The follow-ups' grep (``on_history``) and the origins' read together: the commits
        # either may match are listed once (git/picks.greps_ahead), by the listing of paths
        # where one reads the history's messages anyway, else by one walk.
        greps_ahead(repo, [source], [fork], [GREP, ORIGIN_GREP])
    listing = _listing(repo, index, source, fork, mapping, ranged)
    # The picks are among the range's non-merge commits: their full diffs (the first the search
    # reads) are read while the history is walked.
    early = read_early(repo, index, lambda: _likely_picks(ranged.result(), head))
    jobs.ahead(early)  # the end states' HEAD ids of those diffs' paths, once they are read
    # The source history since the fork point on HEAD's own line (``fork``): what SOURCE has beyond
    # it, even where HEAD later merged it back in (earlier picks' sources are then ancestors of HEAD).
    full_history = _history(repo, index, [source], [fork])
    if on_history is not None:
        on_history()
    # Picks: the range's non-merge commits of HEAD's own line, whether or not the source branch
    # reaches them (a release merged forward into main); what a merge of main back into the release
    # brought is main's, not picks (lines.py).
    likely = _likely_content_search(mapping, ranged.result())
    # PR titles of merges (read below only for a content search) start now, beside the picks.
    titled = (
        POOL.submit(source_bodies, repo, index, [source], [fork], merges=True)
        if likely and any(len(c.parents) > 1 for c in full_history)
        else None
    )
    own, picks, merges, left = _range_picks(repo, base, head, source, full_history)
    forced = _resolve_mapping(repo, mapping, picks)
    # When some pick can only be found by content, the history's changed paths are listed by a
    # second git log, started beside the first one (``_listing``) while the named candidates are
    # diffed and confirmed.
    touched: Future[list[LogEntry]] | None = None
    if needs_content_search(picks, forced):
        touched = (
            cast("Future[list[LogEntry]]", listing)
            if likely
            else POOL.submit(_history, repo, index, [source], [fork], paths=True)
        )
    # Sources: the source branch's own commits that are not the picks themselves (a release merged
    # forward brings its commits, and the merge that brought them, into main: no source).
    mine = source_own(full_history, source, release_merges(full_history, own))
    history = [c for c in full_history if c.sha in mine and c.sha not in own]
    forwarded = brought_by(full_history, source)
    reached = {c.sha: forwarded.get(c.sha, source) for c in full_history if c.sha in own}
    # PR titles of merges: only picks that name no source (no trailer, no number) are matched by title.
    titles: dict[str, str] = {}
    if touched is not None and any(len(c.parents) > 1 for c in history):
        titles = (
            titled.result()
            if titled is not None
            else source_bodies(repo, index, [source], [fork], merges=True)
        )
    facts = HistoryFacts(history)
    side = _Sources(repo, history, source, index, picks, jobs, facts)
    side.store.adopt(_likely_picks(ranged.result(), head), early)
    copied = POOL.submit(source_bodies, repo, index, [source], [fork], grep=ORIGIN_GREP)
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
        scope = Memo(index, [source, fork, history_id(history), branch_tip])
        res = _resolve(
            picks, finder, side.store, side.found, scope, touched is not None, side.unkept
        )
    _name_origins(res, copies(repo, history, copied.result()))
    results = side.results(res, reached)
    paths: dict[str, Sequence[str]] | None = facts.paths(touched) if touched is not None else None
    return merges, results, side.store, history, paths, left, facts


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
        # (pick, its sources in history order) → its files compared, made once for both uses, and
        # its status where the comparison was kept by an earlier run (``_kept``)
        self.compared: dict[tuple[str, tuple[str, ...]], list[FileResult]] = {}
        self.statuses: dict[tuple[str, tuple[str, ...]], str] = {}
        self.memo = Memo(index, [])

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
            files = self._kept(sha, sources)
            if files is None:
                if not all(s in store.full or s in store.lines for s in sources):
                    continue  # not read yet: its end states start with the last job
                # Files pair by path and signed lines: the sources' -U0 diffs pair as their full
                # ones. Which diffs are full is decided once (a prefetch may complete one
                # meanwhile): only a comparison of full diffs is the one ``results`` makes.
                full = [store.full.get(s) for s in sources]
                if all(full):
                    theirs = [f for p in full if p is not None for f in p.files]
                else:
                    theirs = [f for s in sources for f in store.changed(s)]
                files = compare_files(store.full[sha].files, theirs)
                if all(full):
                    self.compared[(sha, tuple(sources))] = files
                    self._keep(sha, sources, files)
            out.append((sha, file_paths(files), sources))
        return out

    def _kept(self, sha: str, sources: Sequence[str]) -> list[FileResult] | None:
        """The pick's files compared with these sources (in history order): made in this run, or
        kept by an earlier one (a function of the two diffs alone: kept by the commits; the
        sources' lines are not kept, nor read again), else None."""
        key = (sha, tuple(sources))
        files = self.compared.get(key)
        if files is not None or not sources or not self.memo:
            return files
        value = self.memo.get("compared", self._compared_key(sha, sources), valid_kept)
        if value is None:
            return None
        try:
            files, status = from_kept(value, self.store.full[sha].files)
        except KeyError:  # (the pick's diff has no file it names: compared again)
            return None
        self.compared[key], self.statuses[key] = files, status
        return files

    def _keep(
        self, sha: str, sources: Sequence[str], files: list[FileResult], status: str | None = None
    ) -> None:
        """Keep the comparison of full diffs for the next run, with its status."""
        if self.memo and sources:
            if status is None:
                status = pick_status(files, True)
            self.statuses[(sha, tuple(sources))] = status
            self.memo.put("compared", self._compared_key(sha, sources), kept_form(files, status))

    def _compared_key(self, sha: str, sources: Sequence[str]) -> list[str]:
        return compared_key(self.store.merge_parents, sha, sources)

    def unkept(self, res: Mapping[str, Resolution]) -> list[str]:
        """The sources whose diffs these picks' comparisons still need (none where kept)."""
        out: set[str] = set()
        for sha, r in res.items():
            sources = sorted(r.sources, key=lambda s: self.order.get(s, len(self.order)))
            if sources and self._kept(sha, sources) is None:
                out.update(sources)
        return sorted(out)

    def found(self, res: dict[str, Resolution]) -> None:
        """Sources found for these picks: their end states start now."""
        if not self.jobs.given:
            self.jobs.picks({p.sha: self.store.full[p.sha].files for p in self.picks})
        self.jobs.add(self._rows(res))
        # Their full diffs (and a merge source's PR commits) are read while the search goes on:
        # a comparison kept by an earlier run reads none of its sources.
        sources = {s for r in res.values() for s in r.sources}
        inner = self._pr_commits(sources & self.merge_shas)
        self.store.prefetch(self.unkept(res) + [c for cs in inner.values() for c in cs])

    def results(
        self, res: Mapping[str, Resolution], reached: Mapping[str, str]
    ) -> list[PickResult]:
        """Each pick compared with its sources; every pick's end states started."""
        store, picks = self.store, self.picks
        merged = {s for r in res.values() if r.via == "merge" for s in r.sources}
        inner = self._pr_commits(merged)
        # The PR commits of merge sources are read with them: the follow-ups need their changes.
        store.ensure([p.sha for p in picks])
        store.ensure(self.unkept(res) + [c for cs in inner.values() for c in cs])
        facts = self.facts  # the history's maps, built once in C
        results = _pick_results(
            picks,
            res,
            store,
            self.order,
            reached,
            inner,
            facts.subjects,
            self.compared,
            self.statuses,
        )
        for r in results:  # (compared here, of full diffs: kept as the ones ``_rows`` made)
            if (
                r.resolution.sources
                and (r.commit.sha, tuple(r.resolution.sources)) not in self.statuses
            ):
                self._keep(r.commit.sha, r.resolution.sources, r.files, r.status)
        _later_copies(results, facts.committed, facts.authored)
        self.jobs.finish(
            [(r.commit.sha, file_paths(r.files), r.resolution.sources) for r in results],
            {p.sha: store.full[p.sha].files for p in picks},
        )
        return results


def compared_key(parents: Mapping[str, str], sha: str, sources: Sequence[str]) -> list[str]:
    """What a pick's comparison reads, as its memo names it: the pick, its sources and what each
    source's diff is against (``parents``: a merge's first parent where the history names it;
    else its own parent, "")."""
    return [sha, *sources, *(parents.get(s, "") for s in sources)]


def _by_change_id(
    repo: GitRepo, index: HistoryIndex | None, source: str, fork: str, facts: HistoryFacts
) -> dict[str, list[str]]:
    """Gerrit's Change-Ids on the source history (the finder asks only for a pick that carries
    one and whose trailer names no source commit)."""
    return landed(source_bodies(repo, index, [source], [fork], grep=CHANGE_ID_GREP), facts.order)


def history_id(history: Sequence[LogEntry]) -> str:
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
    unkept: Callable[[Mapping[str, Resolution]], list[str]] | None = None,
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
        store.ensure([p.sha for p in picks])
        store.ensure(
            unkept(known) if unkept else sorted({s for r in known.values() for s in r.sources})
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
    tree_of = {c.sha: c.tree for c in every}
    # A first parent's tree: read from the range where the parent is in it (HEAD's own line,
    # nearly always), else asked of git.
    firsts = {c.sha: c.parents[0] for c in every if c.is_merge}
    asked = [m for m, p in firsts.items() if p not in tree_of]
    trees = dict(zip(asked, object_ids(repo, [f"{m}^1^{{tree}}" for m in asked]), strict=True))
    empty = {
        m for m, p in firsts.items() if (tree_of[p] if p in tree_of else trees[m]) == tree_of[m]
    }
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
    statuses: Mapping[tuple[str, tuple[str, ...]], str] | None = None,
) -> list[PickResult]:
    """Each pick compared file by file with its sources (ordered as the history is; ``compared``:
    comparisons already made, by pick and sources, ``statuses`` their statuses where known)."""
    results, compared, statuses = [], compared or {}, statuses or {}
    for p in picks:
        r = res.get(p.sha) or Resolution()
        r.sources = sorted(r.sources, key=lambda s: order.get(s, len(order)))
        key = (p.sha, tuple(r.sources))
        files = compared.get(key)
        if files is None:
            files = compare_files(store.full[p.sha].files, store.files(r.sources))
        status = statuses.get(key) or pick_status(files, bool(r.sources))
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


def source_bodies(
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
        release = RELEASE_SUBJECT.search(r.commit.subject) or all(
            is_release_path(f.path) for f in r.files
        )
        if r.resolution.found_by not in _BY_CONTENT or len(srcs) != 1 or not release:
            continue
        # A copy keeps the author date; a bot's twin commit on the source branch (the same bump,
        # its own PR, made seconds apart) does not, and is the source.
        subject = RELEASE_SUBJECT.search(r.commit.subject)
        if not subject and authored.get(srcs[0]) != r.commit.author_time:
            continue
        if committed.get(srcs[0], 0) > r.commit.committer_time:
            copies.setdefault(srcs[0], r.commit.sha)
            r.copy_of = r.commit.sha
        elif srcs[0] in copies:
            r.copy_of = copies[srcs[0]]
