"""Find each pick's source on the source branch: map, trailer, PR number, patch-id, similarity.

Metadata of the whole source history comes from one ``git log``; diffs are fetched lazily and in
batches (one ``diff-tree --stdin`` per phase, a constant number of phases): only candidates named
by map/trailer/PR number first, and the rest of the history only when some pick is still unresolved.
The diffs are read and kept by the patch store (patches.py); the PR numbers a subject names come
from subjects.py.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import operator
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from harness.checks.fidelity.changeid import change_ids
from harness.checks.fidelity.compare import dice, overlap, signed_keys
from harness.checks.fidelity.lines import origins
from harness.checks.fidelity.patches import PatchStore, keys_of, patch_id
from harness.checks.fidelity.subjects import BACKPORT, named_prs, numbered, strip_numbers
from harness.git import Commit, GitRepo
from harness.git.patch import FilePatch
from harness.git.picks import (
    ENTRY_COMMITTED,
    ENTRY_PARENTS,
    ENTRY_SHA,
    ENTRY_SUBJECT,
    LogEntry,
    object_ids,
    patch_paths,
    paths_per_commit,
)
from harness.infra.futures import Future

CONFIRM_OVERLAP = 0.5  # PR-number candidates must share this fraction of signed lines
# Below this a similarity match is not reported as a source: on real release branches, version bumps
# ("back to dev") share ~2/3 of their lines with unrelated bumps on main; a wrong source is worse than none.
SIMILARITY_MIN = 0.7
_MENTION = 0.2  # a rejected best candidate at least this similar is named in the note
_DAY = 86400
# Similarity looks only at source commits committed in a window around the pick (patch id, PR
# numbers and trailers look at the whole history): on real ranges similar sources were committed
# from 65 days before to 31 days after their picks, and the best rejected candidate (named in a
# note) up to 162 days after.
WINDOW_BEFORE = WINDOW_AFTER = 365 * _DAY
_TWIN = _DAY  # a bot's twin commits on two branches are made minutes apart
_COMMON_LINE = 500  # a line carried by more source commits than this is not evidence


def needs_content_search(picks: Sequence[Commit], mapping: dict[str, list[str]]) -> bool:
    """Whether some pick names its source neither by --map, trailer nor PR number."""
    return any(p.sha not in mapping and not origins(p.message) and not named_prs(p) for p in picks)


@dataclass
class Resolution:
    """How a pick's source was found."""

    sources: list[str] = field(default_factory=list)
    via: str | None = None  # map, trailer, pr-number, patch-id, similarity, merge, or None
    confidence: float | None = None
    note: str = ""
    found_by: str | None = (
        None  # how it was found (via itself, or what found the merge when via is merge)
    )


def _paths(files: Sequence[FilePatch]) -> set[str]:
    """Every path a change names, old and new (a rename names both)."""
    return {x for f in files for x in (f.old_path, f.new_path) if x}


def _in_same_paths(
    pick: Sequence[FilePatch], cand: Sequence[FilePatch], shared: Callable[[], int]
) -> bool:
    """Whether at least a quarter of the lines two changes share (``shared()``, any path) are
    shared within the same path (old or new name): similarity never pairs commits that change
    different paths (another release's notes share their boilerplate with this one's in another
    file, and may touch the same index page); a fix whose main file has another name on the
    branch still shares its other files' lines (kueue's ``non_tas_usage_controller.go`` /
    ``pod_usage_controller.go``)."""
    by_path: dict[str, list[FilePatch]] = {}
    for f in cand:
        for x in dict.fromkeys((f.old_path, f.new_path)):
            if x:
                by_path.setdefault(x, []).append(f)
    if all(f.old_path in by_path or f.new_path in by_path for f in pick):
        return True  # every file of the pick is one of the candidate's: the common case
    same = 0
    for f in pick:
        theirs = [
            g for x in dict.fromkeys((f.old_path, f.new_path)) if x for g in by_path.get(x, ())
        ]
        if theirs:
            same += sum((signed_keys(f.added, f.removed) & keys_of(theirs)).values())
    return 4 * same >= shared()


def _joined(spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted closed intervals, overlapping ones joined (each commit time is tested once each)."""
    out: list[tuple[int, int]] = []
    for lo, hi in spans:
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _within(
    shas: Sequence[str], committed: Mapping[str, int], spans: Sequence[tuple[int, int]]
) -> set[str]:
    """The commits of ``shas`` committed within one of ``spans`` (sorted, disjoint)."""
    if len(spans) == 1:
        lo, hi = spans[0]
        return {s for s in shas if lo <= committed[s] <= hi}
    starts = [lo for lo, _ in spans]
    out = set()
    for s in shas:
        t = committed[s]
        i = bisect.bisect_right(starts, t) - 1
        if i >= 0 and t <= spans[i][1]:
            out.add(s)
    return out


_AUTHORED = operator.itemgetter(2)  # a LogEntry's author time


class HistoryFacts:
    """What the source search reads of one source history, computed once for every search over
    it (a run may search twice: a new pick in the similarity search makes the others search again)."""

    def __init__(self, history: Sequence[LogEntry]) -> None:
        # Built with C-level maps over the history's columns: a 20k-commit history, every run.
        shas = list(map(ENTRY_SHA, history))
        sizes = list(map(len, map(ENTRY_PARENTS, history)))
        self.merges = set(itertools.compress(shas, map((1).__lt__, sizes)))
        self.order = dict(zip(shas, range(len(shas)), strict=True))
        self.subjects = dict(zip(shas, map(ENTRY_SUBJECT, history), strict=True))
        self.committed = dict(zip(shas, map(ENTRY_COMMITTED, history), strict=True))
        self.plain = list(itertools.compress(shas, map((2).__gt__, sizes)))  # non-merge commits
        self._paths: tuple[object, dict[str, Sequence[str]]] | None = None
        self._history = history
        self._numbered: tuple[set[int], dict[int, list[str]]] = (set(), {})
        self._text: tuple[Sequence[str], tuple[str, list[int]]] | None = None

    @functools.cached_property
    def authored(self) -> dict[str, int]:
        """Each commit's author time."""
        return dict(zip(map(ENTRY_SHA, self._history), map(_AUTHORED, self._history), strict=True))

    @functools.cached_property
    def by_authored(self) -> dict[int, list[LogEntry]]:
        """The non-merge commits by author time."""
        out: dict[int, list[LogEntry]] = {}
        for c in self._history:
            if len(c.parents) < 2:
                out.setdefault(c.author_time, []).append(c)
        return out

    def numbered(self, wanted: set[int]) -> dict[int, list[str]]:
        """``numbered(history, wanted)``, kept for every number asked so far (a second search
        asking no new number scans nothing)."""
        known, found = self._numbered
        if not wanted <= known:
            known = known | wanted
            self._numbered = known, (found := numbered(self._history, known))
        return {n: found[n] for n in wanted if n in found}

    def paths(self, touched: Future[list[LogEntry]]) -> dict[str, Sequence[str]]:
        """Each commit's changed paths, from the history listed with them."""
        if self._paths is None or self._paths[0] is not touched:
            self._paths = (touched, {c.sha: c.paths or () for c in touched.result()})
        return self._paths[1]

    def subject_text(self, shas: Sequence[str]) -> tuple[str, list[int]]:
        """The lower-cased subjects of ``shas``, one per line, and where each line starts."""
        if self._text is None or self._text[0] is not shas:
            lowered = [self.subjects[s].lower() for s in shas]
            sizes = map((1).__add__, map(len, lowered[:-1]))  # each line and its newline
            starts = list(itertools.accumulate(sizes, initial=0))
            self._text = (shas, ("\n".join(lowered), starts))
        return self._text[1]


class SourceFinder:
    """Resolves the picks of a range against the source history (oldest first)."""

    def __init__(
        self,
        repo: GitRepo,
        picks: Sequence[Commit],
        history: Sequence[LogEntry],
        mapping: dict[str, list[str]],
        store: PatchStore,
        touched: Future[list[LogEntry]] | None = None,
        merge_titles: dict[str, str] | None = None,
        brought: dict[str, str] | None = None,
        found: Callable[[dict[str, Resolution]], None] | None = None,
        facts: HistoryFacts | None = None,
        by_change: Callable[[], Mapping[str, Sequence[str]]] | None = None,
        also: AbstractSet[str] = frozenset(),
    ) -> None:
        self.also = also  # commits a trailer may name besides the source's (the PR branch's)
        # Change-Id -> the source commits carrying it, newest first (changeid.landed): read on the
        # first pick that needs it (one whose trailer names no source commit, or none at all).
        self.by_change = functools.cache(by_change or dict)
        # pick -> (what its trailers name, the existing commits among them): none on the source.
        self.off_source: dict[str, tuple[list[str], list[str]]] = {}
        self.brought = brought or {}  # commit -> the merge that brought it into the source branch
        # Told of sources as they are found (with the picks' full diffs and the named sources'
        # diffs read), before the slower steps: what only needs a pick's sources starts then.
        self.found = found or (lambda _: None)
        self.touched = touched  # the history again, with changed paths (started early, in a thread)
        self.repo, self.picks, self.history, self.mapping, self.store = (
            repo,
            picks,
            history,
            mapping,
            store,
        )
        facts = facts or HistoryFacts(history)
        self.facts, self.merges = facts, facts.merges
        # A merge's PR title (first line of its body, "Merge pull request #N from …" keeps it there).
        self.by_title: dict[str, list[str]] = {}
        for sha, title in (merge_titles or {}).items():
            if title and sha in self.merges:
                self.by_title.setdefault(strip_numbers(title.splitlines()[0]), []).append(sha)
        self.order, self.subjects, self.committed = facts.order, facts.subjects, facts.committed
        self.by_number = facts.numbered({n for p in picks for n in named_prs(p)})
        self.pick_of = {p.sha: p for p in picks}
        # A cherry-pick keeps the author date and the subject: a pick without -x that git could not
        # apply as it was (adapted) still carries that signature.
        self.rejected: dict[
            str, str
        ] = {}  # pick -> PR-number candidates its content did not confirm
        self.title_cands: dict[str, list[str]] = {}  # pick -> merges whose PR title is its subject
        self.siblings: dict[str, list[str]] = {}  # pick -> other releases' backports of its PR
        # pick -> the source commits sharing its subject, where more than one does (``_twins``)
        self.same_subject: dict[str, set[str]] = {}
        # The picks searched by similarity: each one's answer depends on the others' (the
        # candidates are the commits near any of them, and a line too common among them is no
        # evidence), so a kept answer holds only for the same set (check.py's memo).
        self.similar: list[str] = []
        # The picks searched by content (after the named sources): their answers also depend on
        # whether the history's paths and the merges' PR titles were read (check.py's memo).
        self.searched: set[str] = set()
        self._authors: dict[str, str | None] = {}  # commit -> its author's email, lower-cased

    def resolve(self) -> dict[str, Resolution]:
        res: dict[str, Resolution] = {}
        pr_cands: dict[str, list[str]] = {}
        trailers = self._trailers()

        for pick in self.picks:
            if pick.sha in self.mapping:
                res[pick.sha] = Resolution(self.mapping[pick.sha], "map", 1.0)
            elif trailers.get(pick.sha):
                res[pick.sha] = Resolution(trailers[pick.sha], "trailer", 1.0)
            elif (by_id := self._by_change_id(pick)) is not None:
                res[pick.sha] = by_id
            else:
                cands = sorted(
                    {s for n in named_prs(pick) for s in self.by_number.get(n, [])},
                    key=lambda s: self.order[s],
                )
                # A revert's source is the source branch's revert of the same PR, not the change
                # it reverts (which carries the PR number too).
                if pick.subject.startswith('Revert "'):
                    cands = [s for s in cands if self.subjects[s].startswith('Revert "')] or cands
                # Another release's backport of the same PR (merged forward) is a copy: the PR's
                # own commit is looked for first, by number and then by content.
                siblings = [s for s in cands if BACKPORT.search(self.subjects[s])]
                pr_cands[pick.sha] = [s for s in cands if s not in siblings]
                if siblings:
                    self.siblings[pick.sha] = siblings
                titled = self.by_title.get(strip_numbers(pick.subject), [])
                # A title many merges share ("pre-commit autoupdate") names no PR in particular.
                self.title_cands[pick.sha] = titled if len(titled) == 1 else []
        # Phase A: the picks and every named candidate, in one diff-tree process.
        self.store.ensure(
            [p.sha for p in self.picks]
            + [s for r in res.values() for s in r.sources]
            + [s for c in pr_cands.values() for s in c]
            + [s for c in self.title_cands.values() for s in c]
            + [s for c in self.siblings.values() for s in c]
        )
        for sha, cands in pr_cands.items():
            r = self._confirm(sha, cands)
            if r is not None:
                res[sha] = r
        self.found(dict(res))
        unresolved = [p.sha for p in self.picks if p.sha not in res]
        self.searched = set(unresolved)
        res.update(self._search(unresolved))
        for sha, cands in self.siblings.items():
            if not res.get(sha, Resolution()).sources:  # only a sibling carries it: name that
                r = self._confirm(sha, cands)
                if r is not None:
                    res[sha] = r
        for picked, note in self.rejected.items():
            r = res.setdefault(picked, Resolution())
            r.note = "; ".join(x for x in (r.note, note) if x)
        self._landed(res)
        for r in res.values():
            if r.via != "map" and r.sources and all(s in self.merges for s in r.sources):
                # The PR was merged with a merge commit: its first-parent diff is the source.
                r.note = "; ".join(x for x in (f"merge commit found by {r.via}", r.note) if x)
                r.found_by, r.via = r.via, "merge"
            else:
                r.found_by = r.via
        return res

    def _trailers(self) -> dict[str, list[str]]:
        """Trailer shas per pick, resolved in one batch; ones on the source history preferred."""
        named = {p.sha: origins(p.message) for p in self.picks if p.sha not in self.mapping}
        specs = sorted({t for ts in named.values() for t in ts})
        ids = dict(
            zip(specs, object_ids(self.repo, [f"{t}^{{commit}}" for t in specs]), strict=False)
        )
        out: dict[str, list[str]] = {}
        for pick, ts in named.items():
            found = [x for t in ts if (x := ids.get(t))]
            on_source = [f for f in found if f in self.order or f in self.also]
            # A pick of a pick carries several trailers: the one on the source branch is the source.
            # One naming no commit of the source (a change the review system rebased before it
            # merged, a PR head the merge rewrote, another branch's pick) is not: the landed copy
            # is looked for like any other pick's source (``_landed``).
            if on_source:
                out[pick] = on_source[:1]
            elif ts:
                self.off_source[pick] = (ts, list(dict.fromkeys(found)))
        return out

    def _by_change_id(self, pick: Commit) -> Resolution | None:
        """The source commit carrying the pick's Gerrit ``Change-Id:`` (the newest, when several)."""
        for cid in change_ids(pick.message):
            cands = [s for s in self.by_change().get(cid, ()) if s in self.order]
            if cands:
                return Resolution(cands[:1], "change-id", 1.0)
        return None

    def _landed(self, res: dict[str, Resolution]) -> None:
        """Picks whose trailer names no source commit: the landed copy found otherwise is the
        source, and the note says so; without one the pick has no source (the named commit is on
        another branch, or a review's patch set that never landed)."""
        for pick, (named, found) in self.off_source.items():
            r = res.setdefault(pick, Resolution())
            where = "not on the source" if found else "not in this repository"
            said = f"trailer names {', '.join(t[:12] for t in named)}, {where}"
            if r.sources:
                said += f"; landed as {', '.join(s[:12] for s in r.sources)}"
            else:
                said += "; no landed copy found"
            r.note = "; ".join(x for x in (said, r.note) if x)

    def _confirm(self, pick: str, cands: Sequence[str]) -> Resolution | None:
        """PR-number candidates confirmed by content (or, for an empty pick, by subject)."""
        if not cands:
            return None
        pk = self.store.keys(pick)
        if not pk:
            subject = strip_numbers(next(p.subject for p in self.picks if p.sha == pick))
            same = [c for c in cands if strip_numbers(self.subjects[c]) == subject]
            return (
                Resolution(same, "pr-number", 0.0, "empty pick: confirmed by subject only")
                if same
                else None
            )
        scores = {c: overlap(pk, self.store.keys(c)) for c in cands}
        confirmed = [c for c in cands if scores[c] >= CONFIRM_OVERLAP]
        note = (
            ""
            if len(confirmed) == len(cands)
            else "PR-number candidates rejected by content: "
            + ", ".join(f"{c[:12]} ({scores[c]:.2f})" for c in cands if c not in confirmed)
        )
        if not confirmed:
            # The PR number and the subject agree: the PR's commit is the source, whatever the pick
            # had to change (a regenerated lock file shares no line with the original).
            subject = strip_numbers(self.pick_of[pick].subject)
            same = [c for c in cands if strip_numbers(self.subjects[c]) == subject]
            if subject and same:
                union = keys_of(self.store.files(same))
                return Resolution(
                    same,
                    "pr-number",
                    round(overlap(pk, union), 3),
                    "confirmed by PR number and subject; content differs",
                )
            self.rejected[pick] = note
            return None
        union = keys_of(self.store.files(confirmed))
        return Resolution(confirmed, "pr-number", round(overlap(pk, union), 3), note)

    def _by_title(self, pick: str) -> Resolution | None:
        """A merge whose PR title is the pick's subject, confirmed by content (after patch-id)."""
        pk = self.store.keys(pick)
        scored = [(overlap(pk, self.store.keys(m)), m) for m in self.title_cands.get(pick, [])]
        ok = [(sc, m) for sc, m in scored if sc >= CONFIRM_OVERLAP]
        if not ok:
            return None
        sc, m = max(ok, key=lambda t: (t[0], -self.order[t[1]]))
        return Resolution([m], "title", round(sc, 3))

    def _by_authored(self, pick: str, *, strong: bool = True) -> Resolution | None:
        """The one source commit with the pick's author (email) and author date to the second —
        what a rebase or a cherry-pick keeps, and two unrelated commits almost never share — and
        either the pick's subject or at least one changed line in common: a fix rebased by hand
        (reworded, adapted) still names its source. The note says how much the two share.
        ``strong``: only the same subject with half the lines (asked before the subject and
        similarity rules); the rest is asked of the picks they leave without a source (a PR
        squashed onto the release keeps its first commit's date: its merge is the better source)."""
        c = self.pick_of[pick]
        same_time = self.facts.by_authored.get(c.author_time, [])
        if not same_time:
            return None
        cands = self._same_author(pick)
        if not cands:
            return None
        subject = strip_numbers(c.subject)
        self.store.ensure([x.sha for x in cands])
        pk = self.store.keys(pick)
        shared = {x.sha: overlap(pk, self.store.keys(x.sha)) for x in cands}
        titled = [x.sha for x in cands if subject and strip_numbers(x.subject) == subject]
        lined = [x.sha for x in cands if shared[x.sha] > 0]
        found = titled if len(titled) == 1 else lined if len(lined) == 1 else []
        if not found:
            return None
        sc = shared[found[0]]
        if strong and (found != titled or sc < CONFIRM_OVERLAP):
            return None
        why = "the same subject" if found == titled else "another subject"
        return Resolution(
            found,
            "authored",
            round(sc, 3),
            f"same author and author date, {why}; shares {sc:.0%} of the changed lines "
            "(of the smaller side)",
        )

    def _same_author(self, pick: str) -> list[LogEntry]:
        """The source commits with the pick's author date and author (email, any case)."""
        c = self.pick_of[pick]
        same_time = self.facts.by_authored.get(c.author_time, [])
        self._read_authors([x.sha for x in same_time])
        email = c.author_email.lower()
        return [x for x in same_time if self._authors.get(x.sha) == email]

    def _read_authors(self, shas: Sequence[str]) -> None:
        """The author emails of these commits, read in one ``log --no-walk`` where not yet read."""
        todo = [s for s in dict.fromkeys(shas) if s not in self._authors]
        if todo:
            got = {x.sha: x.author_email.lower() for x in self.repo.commits(todo, no_walk=True)}
            self._authors.update((s, got.get(s)) for s in todo)

    def _prefetch_authored(self, picks: Sequence[str]) -> None:
        """What ``_by_authored`` reads for these picks, in one process each for all of them (the
        authors of the commits sharing an author date, the diffs of those by the same author)
        instead of two per pick."""
        same = [
            x.sha
            for p in picks
            for x in self.facts.by_authored.get(self.pick_of[p].author_time, [])
        ]
        self._read_authors(same)
        self.store.ensure([x.sha for p in picks for x in self._same_author(p)])

    def _touched(self, history: Sequence[str]) -> dict[str, Sequence[str]]:
        """Paths each source commit changes (the log started early in a thread, else one
        ``diff-tree --name-only`` process): no diff is read to list them."""
        if self.touched is not None:
            return self.facts.paths(self.touched)
        self.store.batches += 1
        return dict(paths_per_commit(self.repo, history))

    def _window(self, pick: str) -> tuple[int, int]:
        """Commit times a similar source may have: from WINDOW_BEFORE before the pick was authored
        (a backport re-authored months later) to WINDOW_AFTER after it was committed (a backport
        from a PR that landed later, a release commit copied back)."""
        c = self.pick_of[pick]
        return min(c.author_time, c.committer_time) - WINDOW_BEFORE, c.committer_time + WINDOW_AFTER

    def _subject_named(self, picks: Sequence[str], history: Sequence[str]) -> dict[str, str]:
        """Per pick: the one non-merge source commit with its subject (PR numbers and leading tags
        removed), whenever it was committed. A squashed backport of a PR merged as several commits
        keeps the title: this names the source without the similarity search's candidate diffs."""
        keys = {p: strip_numbers(self.pick_of[p].subject) for p in picks}
        keys = {p: k for p, k in keys.items() if k}
        if not keys:
            return {}
        # One lower-cased text of all subjects, searched in C for each key's longest word; only
        # the subjects it occurs in are stripped and compared.
        text, starts = self.facts.subject_text(history)
        found: dict[str, str] = {}
        for p, key in keys.items():
            word = max(key.split(), key=len)
            same: set[str] = set()
            at = text.find(word)
            while at >= 0:
                i = bisect.bisect_right(starts, at) - 1
                if strip_numbers(self.subjects[history[i]]) == key:
                    same.add(history[i])
                at = text.find(word, starts[i + 1] if i + 1 < len(starts) else len(text))
            # One commit in the whole history carries the subject: no time window (urllib3 backported
            # "Switch to Brotli C bindings …" to 1.26.x fifteen months after main had it).
            if len(same) == 1:
                found[p] = next(iter(same))
            elif same:
                self.same_subject[p] = same
        return found

    def _twins(self, picks: Sequence[str]) -> dict[str, Resolution]:
        """A bot's twin: among the source commits sharing the pick's subject (a subject the bot
        gives every bump), the one committed within ``_TWIN`` of the pick whose lines the pick
        all carries (the branch regenerated more of its lock tree): the source, a superset."""
        near = {p: [c for c in self.same_subject.get(p, ()) if self._near(p, c)] for p in picks}
        self.store.ensure_lines(sorted({c for cs in near.values() for c in cs}))
        out: dict[str, Resolution] = {}
        for p, cands in near.items():
            pk = self.store.keys(p)
            held = [c for c in cands if self.store.keys(c) and not self.store.keys(c) - pk]
            if held:
                t = self.pick_of[p].committer_time
                best = min(held, key=lambda c: (abs(self.committed[c] - t), self.order[c]))
                share = overlap(pk, self.store.keys(best))
                out[p] = Resolution(
                    [best], "twin", round(share, 3), "same subject, made beside the pick"
                )
        return out

    def _near(self, pick: str, cand: str) -> bool:
        c = self.pick_of[pick]
        return abs(self.committed[cand] - c.committer_time) <= _TWIN

    def _by_subject(self, found: dict[str, str]) -> dict[str, tuple[float, str]]:
        """The commits ``_subject_named`` found, with their similarity, where that is at least
        SIMILARITY_MIN, or where they share at least CONFIRM_OVERLAP of the smaller side's lines
        (the subject names it, as a PR number would: a pick that squashed it with another commit,
        or carries part of it)."""
        self.store.ensure_lines(sorted(set(found.values())))
        out: dict[str, tuple[float, str]] = {}
        for p, c in found.items():
            pk, ck = self.store.keys(p), self.store.keys(c)
            sc = dice(pk, ck)
            if sc >= SIMILARITY_MIN or overlap(pk, ck) >= CONFIRM_OVERLAP:
                out[p] = (sc, c)
        return out

    def _similar(
        self,
        picks: Sequence[str],
        history: Sequence[str],
        touched: dict[str, Sequence[str]],
        names: dict[str, set[str]],
    ) -> dict[str, list[tuple[float, str]]]:
        """The three best candidates per pick by shared signed lines: an inverted index over the
        ± lines of the source commits that touch one of these picks' paths (one -U0 process)."""
        if not picks:
            return {}
        paths = {x for p in picks for x in names[p]}
        windows = {p: self._window(p) for p in picks}
        within = _within(history, self.committed, _joined(sorted(windows.values())))
        candidates = [
            s for s in history if s in within and not paths.isdisjoint(touched.get(s, ()))
        ]
        self.store.ensure_lines(candidates)
        index: dict[tuple[str, bytes], list[str]] = {}
        size: dict[str, int] = {}
        for sha in candidates:
            keys = self.store.keys(sha)
            size[sha] = sum(keys.values())
            for key in keys:
                index.setdefault(key, []).append(sha)
        scored: dict[str, list[tuple[float, str]]] = {}
        for p in picks:
            pk = self.store.keys(p)
            hits: Counter[str] = Counter()
            lo, hi = windows[p]
            for key in pk:
                posting = index.get(key, [])
                if len(posting) <= _COMMON_LINE:
                    hits.update(s for s in posting if lo <= self.committed[s] <= hi)
            total = sum(pk.values())
            ranked = sorted(hits, key=lambda s: (-2 * hits[s] / (total + size[s]), self.order[s]))
            same_paths = (c for c in ranked if self._same_paths(p, c))
            scored[p] = sorted(
                ((dice(pk, self.store.keys(c)), c) for c in itertools.islice(same_paths, 3)),
                key=lambda t: (-t[0], self.order[t[1]]),
            )
        return scored

    def _same_paths(self, pick: str, cand: str) -> bool:
        """``_in_same_paths`` of a pick and a similarity candidate."""
        pk, ck = self.store.keys(pick), self.store.keys(cand)
        files = self.store.full[pick].files
        return _in_same_paths(files, self.store.changed(cand), lambda: sum((pk & ck).values()))

    def _search(self, unresolved: Sequence[str]) -> dict[str, Resolution]:
        """Patch-id, then title and author date, then subject, then similarity, over source commits
        chosen by the paths they change (listed without reading a diff) before any diff is read."""
        todo = [p for p in unresolved if self.store.full[p].files]
        if not todo:
            return {}
        history = self.facts.plain
        # What needs none of the history's paths is done before they are waited for (listed in a
        # thread, they are often not in yet): the commits named by subject, and the authors of
        # the commits dated as the picks (read for every pick: few, in one process).
        by_subject = self._subject_named(todo, history)
        self._read_authors(
            [
                x.sha
                for p in todo
                for x in self.facts.by_authored.get(self.pick_of[p].author_time, [])
            ]
        )
        touched = self._touched(history)
        names = {p: _paths(self.store.full[p].files) for p in todo}
        in_order = self._patch_id_candidates(todo, history, touched, names)
        # The commits named by subject are read in the same process (a pick that patch-id then
        # answers has read one diff for nothing; a separate process for them cost a round trip).
        self.store.ensure_lines(in_order + sorted(set(by_subject.values()) - set(in_order)))
        ids: dict[str, list[str]] = {}
        for sha in in_order:
            ids.setdefault(patch_id(self.store.changed(sha)), []).append(sha)
        out: dict[str, Resolution] = {}
        rest: list[str] = []
        exacts = {p: ids.get(patch_id(self.store.full[p].files), []) for p in todo}
        titles = {p: self._by_title(p) for p in todo if not exacts[p]}
        self._prefetch_authored([p for p, t in titles.items() if t is None])
        for p in todo:
            exact = exacts[p]
            titled = None if exact else titles[p] or self._by_authored(p)
            if exact:
                out[p] = Resolution([exact[0]], "patch-id", 1.0)
            elif titled is not None:
                out[p] = titled
            else:
                rest.append(p)
        self.found(dict(out))
        subject = self._by_subject({p: by_subject[p] for p in rest if p in by_subject})
        self._note_same_subject(rest, by_subject, subject)
        self.similar = [p for p in rest if p not in subject]
        scored = self._similar(self.similar, history, touched, names)
        scored.update({p: [found] for p, found in subject.items()})
        out.update(self._by_score(scored, subject))
        out.update(self._twins([p for p in rest if not out.get(p, Resolution()).sources]))
        for p in rest:  # the author and author date, with the subject or one line in common
            if not out.get(p, Resolution()).sources:
                weak = self._by_authored(p, strong=False)
                if weak is not None:
                    out[p] = weak
        return out

    def _patch_id_candidates(
        self,
        todo: Sequence[str],
        history: Sequence[str],
        touched: Mapping[str, Sequence[str]],
        names: Mapping[str, Iterable[str]],
    ) -> list[str]:
        """The history's commits that may carry a pick's exact patch (in history order): they
        change every path of the pick and their patch names exactly those paths."""
        by_path: dict[str, set[str]] = {x: set() for ps in names.values() for x in ps}
        for sha in history:
            for x in touched.get(sha, ()):
                if x in by_path:
                    by_path[x].add(sha)
        # Exact first: a commit with the pick's patch id names the same paths in its patch. The
        # commits that change all of them are listed by path, their patches' paths read without
        # diffing (one --raw process), and only the ones naming exactly the pick's paths have their
        # ± lines read (one -U0 process) and hashed.
        wanted: dict[str, set[frozenset[str]]] = {}
        for p in todo:
            named = frozenset(f.path for f in self.store.full[p].files)
            for sha in set.intersection(*(by_path[x] for x in named)):
                wanted.setdefault(sha, set()).add(named)
        self.store.batches += 1 if wanted else 0
        named_by = patch_paths(self.repo, sorted(wanted))
        in_order = [s for s in history if s in wanted and named_by.get(s) in wanted[s]]
        return in_order

    def _note_same_subject(
        self,
        rest: Sequence[str],
        by_subject: Mapping[str, str],
        subject: Mapping[str, tuple[float, str]],
    ) -> None:
        """Why a commit with the pick's subject was not taken (too few shared lines)."""
        for p in rest:
            if p in by_subject and p not in subject:  # named, but sharing too few lines to take
                c = by_subject[p]
                share = overlap(self.store.keys(p), self.store.keys(c))
                self.rejected[p] = "; ".join(
                    x
                    for x in (
                        self.rejected.get(p, ""),
                        f"{c[:12]} has the same subject but shares {share:.2f} of the lines: "
                        "not taken as the source (re-implemented?)",
                    )
                    if x
                )

    def _by_score(
        self, scored: dict[str, list[tuple[float, str]]], subject: Mapping[str, tuple[float, str]]
    ) -> dict[str, Resolution]:
        """The best-scoring candidate of each pick (or the merge that brought it in, when the whole
        PR matches better), when similar enough or named by subject; else a note of the best."""
        out: dict[str, Resolution] = {}
        # A PR merged with a merge commit is one change: the merge that brought a pick's best commit
        # in may match the pick better (the whole PR, squashed into one pick). One more batch.
        merges = {
            p: self.brought[sc[0][1]]
            for p, sc in scored.items()
            if sc and sc[0][0] < 1.0 and sc[0][1] in self.brought
        }
        self.store.ensure(sorted(set(merges.values())))
        for p, sc in scored.items():
            if p in merges:
                d = dice(self.store.keys(p), self.store.keys(merges[p]))
                if d > sc[0][0]:
                    sc.insert(0, (d, merges[p]))
            by_name = bool(sc) and p in subject and sc[0][1] == subject[p][1]  # kept as named
            if sc and (sc[0][0] >= SIMILARITY_MIN or by_name):
                via = "subject" if p in subject else "similarity"
                out[p] = Resolution([sc[0][1]], via, round(sc[0][0], 3))
            elif sc and sc[0][0] >= _MENTION:
                out[p] = Resolution(
                    [], None, None, f"best candidate {sc[0][1][:12]} at similarity {sc[0][0]:.2f}"
                )
        return out
