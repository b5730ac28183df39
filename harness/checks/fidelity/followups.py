"""Follow-ups not picked: later commits on the source branch that fix a pick's source.

A commit after the source is a follow-up when it names the source (a ``Fixes: <sha>`` trailer, a
revert of it, "follow-up to #N", the same PR number or the same ``Fixes #N`` issue). One that no
pick of the range carries is listed: P1 when it touches code the pick carries (not tests, not
documentation), else P2; info when only the issue names it (it names neither the source nor its
PR). A commit that only, within ``WINDOW`` of the source, spends at least half
of the lines it removes from the source's files on lines the source added is a *candidate*: named
nothing, it is as often a license-header sweep or a re-format as a fix, so candidates are info,
ranked (code the pick carries first, then the share and number of the source's lines they change)
and the first ``WORTH_A_LOOK`` listed. Removed lines that are version pins and files a commit
deletes (released changelog fragments) are no evidence, and neither are the lines a ``Merge branch
'main' into feature`` inside the source PR brought in (main's lines, not the PR's).
"""

from __future__ import annotations

import bisect
import functools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from harness.checks.fidelity.compare import is_doc_path, is_test_path, norm
from harness.checks.fidelity.memo import NO_MEMO, Memo
from harness.checks.fidelity.patches import PatchStore, keys_of
from harness.checks.fidelity.subjects import numbered, pr_numbers
from harness.git import GitRepo
from harness.git.picks import LogEntry, paths_per_commit
from harness.infra.lean import lazy_re
from harness.report.model import Severity

WINDOW = 30 * 86_400  # content-only follow-ups: changes to the source's lines within 30 days
FOCUS = 0.5  # share of a content follow-up's removed lines (in the source's files) the source added
CARRIED = 0.8  # share of a commit's signed lines the picks carry for it to count as picked
SAME_ISSUE = "fixes the same issue"  # the why of a follow-up named only by the issue it fixes
WORTH_A_LOOK = 5  # content-only candidates named in the "worth a look" finding (all in the table)
# What `git log --grep` pre-selects bodies by (the last: "Fixes #N", "closes #N", …, the issue a
# source and its follow-up both fix).
GREP = (
    r"fixes:",
    r"reverts commit",
    r"follow.?up",
    r"(fix(es|ed)?|close[sd]?|resolve[sd]?):? +(gh-|#)[0-9]+",
)
# Leading whitespace up to the line's end only: ``^\s*`` also ran over newlines, and a body of blank
# lines (the reviewed repository's text) cost time quadratic in its length. Same matches.
_FIXES = re.compile(r"^[^\S\n]*fixes:\s*([0-9a-f]{7,64})\b", re.IGNORECASE | re.MULTILINE)
_REVERTS = re.compile(r"reverts commit ([0-9a-f]{7,64})", re.IGNORECASE)
# A removed line that is a version pin or a pinned sha changes with every bump: no evidence of a fix.
_VERSIONISH = lazy_re(rb"\bv?\d+\.\d+(?:\.\d+)?\b|\b[0-9a-f]{40,64}\b")
_FOLLOW = re.compile(r"follow.?up(?: (?:to|of|for|on))?:?\s*(?:PR\s*)?#(\d+)", re.IGNORECASE)
_ISSUE = re.compile(
    r"\b(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?):?\s+(?:gh-|#)(\d+)\b", re.IGNORECASE
)
# A subject that says it fixes something: ranks a content-only candidate higher.
_FIXLIKE = lazy_re(r"\b(fix(es|ed)?|bug|regression|crash|revert(s|ed)?|BUG|REV)\b", re.IGNORECASE)
# A merge of the mainline into a PR's branch: its first-parent diff is the mainline's lines.
_MERGE_IN = lazy_re(r"^Merge (?:remote-tracking )?branch '[^']*' into ", re.IGNORECASE)


def issues_fixed(text: str) -> set[int]:
    """The issue numbers a message says it fixes ("Fixes #12", "closes gh-7")."""
    return {int(n) for n in _ISSUE.findall(text)}


@dataclass
class FollowUp:
    """A later source commit that follows up a picked source and is not picked."""

    unit: tuple[str, ...]  # the source (a PR: one or more commits) it follows
    sha: str
    subject: str
    why: str
    paths: list[str]
    severity: Severity
    named: bool = True  # it names the source; False: a content-only candidate ("worth a look")
    # candidates: (code the pick carries, subject says fix, share of removed lines, hits)
    rank: tuple[int, int, float, int] = (0, 0, 0.0, 0)

    def as_dict(self) -> dict[str, object]:
        return {
            "source": list(self.unit),
            "sha": self.sha,
            "subject": self.subject,
            "why": self.why,
            "paths": self.paths,
            "severity": self.severity,
            "names_source": self.named,
        }


class _Refs(NamedTuple):
    """What a commit's message names, read once (every unit after it asks)."""

    fixes: list[str]  # "Fixes: <sha>" prefixes, in order
    reverts: list[str]  # "reverts commit <sha>" prefixes, in order
    reverted: str | None  # the subject a 'Revert "…"' subject names
    follows: list[str]  # "follow-up to #N" numbers, in order
    numbers: set[int]  # the subject's PR numbers
    issues: set[int]  # the issues it says it fixes


def _refs(c: LogEntry, body: str) -> _Refs:
    text = c.subject + "\n" + body
    return _Refs(
        _FIXES.findall(text),
        _REVERTS.findall(text),
        c.subject[8:].rstrip('"') if c.subject.startswith('Revert "') else None,
        _FOLLOW.findall(text),
        set(pr_numbers(c.subject)),
        issues_fixed(text),
    )


def _refers(
    r: _Refs,
    shas: Sequence[str],
    numbers: set[int],
    subjects: set[str],
    issues: frozenset[int] | set[int] = frozenset(),
) -> str | None:
    """Why a commit whose message names ``r`` follows the unit of ``shas`` (its PR ``numbers``,
    ``subjects`` and fixed ``issues``), or None."""
    for m in r.fixes:
        if any(s.startswith(m.lower()) for s in shas):
            return f"Fixes: {m[:12]}"
    for m in r.reverts:
        if any(s.startswith(m.lower()) for s in shas):
            return f"reverts {m[:12]}"
    if r.reverted is not None and r.reverted in subjects:
        return "reverts the source (by subject)"
    for n in r.follows:
        if int(n) in numbers:
            return f"follow-up to #{n}"
    same = numbers & r.numbers
    if same:
        return f"same PR number #{min(same)}"
    fixed = issues & r.issues - numbers
    if fixed:
        return f"{SAME_ISSUE} #{min(fixed)}"
    return None


def find_followups(
    repo: GitRepo,
    history: Sequence[LogEntry],
    bodies: dict[str, str],
    units: dict[tuple[str, ...], list[str]],
    unit_picks: dict[tuple[str, ...], list[str]],
    picked: set[str],
    store: PatchStore,
    touched: dict[str, Sequence[str]] | None,
    memo: Memo = NO_MEMO,
    by_numbers: Callable[[set[int]], dict[int, list[str]]] | None = None,
) -> list[FollowUp]:
    """``units``: each source PR → its commits (the sources and, for a merge, the PR's commits);
    ``unit_picks``: the picks carrying it; ``picked``: every commit some pick resolves to;
    ``by_numbers``: the commits of ``history`` naming these PR numbers (``HistoryFacts.numbered``
    of the same history, which keeps what the source search scanned), else scanned here.

    What a unit's later history says of it (``_unit_found``) is a function of the unit and the
    source history alone: it is kept in ``memo`` (whose scope names the history) and only then
    filtered by what this range's picks carry."""
    order = {c.sha: i for i, c in enumerate(history)}
    entry = {c.sha: c for c in history}
    found: dict[tuple[str, ...], list[Found]] = {}
    for unit, shas in units.items():
        kept = memo.get("followups", [list(unit), shas], _valid_found)
        if kept is not None:
            found[unit] = [(s, why, None if r is None else tuple(r)) for s, why, r in kept]
    todo = {u: shas for u, shas in units.items() if u not in found}
    if todo:
        # Picked commits are left out afterwards (below), so that what is kept holds for any range.
        numbers = by_numbers or functools.partial(numbered, history)
        named, near = _candidates(
            repo, history, bodies, todo, store, touched, order, entry, numbers
        )
        # Candidates are only searched: their ± lines (no context) are enough.
        store.ensure_lines(
            [c for v in named.values() for c, _ in v] + [c for v in near.values() for c in v]
        )
        # A candidate near several units is read once: what it adds, and what it removes per file
        # that it keeps (version pins left out), normalised.
        per_sha: dict[str, tuple[Counter[bytes], list[tuple[str, list[bytes]]]]] = {}
        for unit, shas in todo.items():
            found[unit] = _unit_found(unit, shas, named, near, store, entry, order, per_sha)
            memo.put("followups", [list(unit), shas], [[s, w, r] for s, w, r in found[unit]])
    store.ensure_lines(
        [s for v in found.values() for s, _, _ in v if s not in picked and s not in store.full]
    )
    carried = _keys(store, [p for v in unit_picks.values() for p in v])
    out: list[FollowUp] = []
    for unit in units:
        out += _unit_followups(unit, found[unit], unit_picks, picked, store, entry, carried)
    return out


# A later commit of the source history that says something of a unit: (sha, why, rank), the rank
# (subject says fix, share of removed lines, hits) only for a content-only candidate.
Found = tuple[str, str, "tuple[int, float, int] | None"]


def _valid_found(value: object) -> bool:
    return isinstance(value, list) and all(
        isinstance(x, list)
        and len(x) == 3
        and isinstance(x[0], str)
        and isinstance(x[1], str)
        and (
            x[2] is None
            or (
                isinstance(x[2], list)
                and len(x[2]) == 3
                and type(x[2][0]) is int
                and type(x[2][1]) in (int, float)
                and type(x[2][2]) is int
            )
        )
        for x in value
    )


def _candidates(
    repo: GitRepo,
    history: Sequence[LogEntry],
    bodies: dict[str, str],
    units: dict[tuple[str, ...], list[str]],
    store: PatchStore,
    touched: dict[str, Sequence[str]] | None,
    order: dict[str, int],
    entry: dict[str, LogEntry],
    by_numbers: Callable[[set[int]], dict[int, list[str]]],
) -> tuple[dict[tuple[str, ...], list[tuple[str, str]]], dict[tuple[str, ...], list[str]]]:
    """Per unit: the later commits that name it (with why), and those that only change one of its
    paths, authored up to WINDOW after it (candidates, judged by their lines; a rebased commit
    keeps an earlier author date). Each unit's answer depends on no other unit (the memo keeps it
    by the unit alone)."""
    # Only commits that name something can name a source: a body the grep kept, a revert, a PR number.
    naming = {c.sha for c in history if c.sha in bodies or c.subject.startswith('Revert "')}
    by_number = by_numbers(
        {n for u in units for s in u if s in entry for n in pr_numbers(entry[s].subject)}
    )
    named: dict[tuple[str, ...], list[tuple[str, str]]] = {}
    near: dict[tuple[str, ...], list[str]] = {}
    store.ensure([s for v in units.values() for s in v])
    unit_paths = {u: {f.path for s in shas for f in store.changed(s)} for u, shas in units.items()}
    paths_at = _paths_at(repo, history, units, order, entry, touched)
    # Per unit, only the commits that can say anything are visited (not the whole history after
    # it): the ones that name something and the ones changing one of the unit's paths.
    by_path: dict[str, list[int]] = {}
    for i, c in enumerate(history):
        if len(c.parents) < 2:
            for x in paths_at.get(c.sha, ()):
                by_path.setdefault(x, []).append(i)
    naming_at = sorted(order[s] for s in naming)
    read: dict[str, _Refs] = {}  # a naming commit's references, read for the first unit asking
    times = [c.author_time for c in history]
    shas_at = [c.sha for c in history]
    for unit, shas in units.items():
        on = [s for s in unit if s in order]
        if not on:
            continue
        start = max(order[s] for s in on)
        when = max(entry[s].author_time for s in on)
        own = set(shas)
        numbers = {n for s in on for n in pr_numbers(entry[s].subject)}
        subjects = {entry[s].subject for s in on}
        issues = {
            n
            for s in [*unit, *shas]
            if not _merged_in(s, unit, entry)
            for n in issues_fixed(bodies.get(s, ""))
        }
        # The later commits that name something (or carry one of its PR numbers) are read; the
        # ones that only change one of its paths (non-merges, by construction) need the window.
        asks = set(naming_at[bisect.bisect_right(naming_at, start) :])
        asks.update(order[x] for n in numbers for x in by_number.get(n, []) if order[x] > start)
        changing: set[int] = set()
        for x in unit_paths[unit]:
            at = by_path.get(x, [])
            changing.update(at[bisect.bisect_right(at, start) :])
        close: list[int] = []
        for i in sorted(asks):
            c = history[i]
            if c.sha in own:
                continue
            refs = read.get(c.sha)
            if refs is None:
                refs = read[c.sha] = _refs(c, bodies.get(c.sha, ""))
            why = _refers(refs, [*unit, *shas], numbers, subjects, issues)
            if why:
                named.setdefault(unit, []).append((c.sha, why))
            elif (
                len(c.parents) < 2
                and c.author_time <= when + WINDOW
                and not unit_paths[unit].isdisjoint(paths_at.get(c.sha, ()))
            ):
                close.append(i)
        until = when + WINDOW
        close += [i for i in changing - asks if times[i] <= until and shas_at[i] not in own]
        if close:
            near[unit] = [shas_at[i] for i in sorted(close)]
    return named, near


def _paths_at(
    repo: GitRepo,
    history: Sequence[LogEntry],
    units: dict[tuple[str, ...], list[str]],
    order: dict[str, int],
    entry: dict[str, LogEntry],
    touched: dict[str, Sequence[str]] | None,
) -> dict[str, Sequence[str]]:
    """The paths each commit changes: ``touched`` (the history's own listing) when there is one,
    else read for the commits after the first of ``units`` authored up to WINDOW after the last."""
    paths_at: dict[str, Sequence[str]] = dict(touched) if touched is not None else {}
    on = [s for u in units for s in u if s in entry]
    if touched is None and on:  # one name-only diff-tree for those (far cheaper than patches)
        after = min(order[s] for s in on)
        until = max(entry[s].author_time for s in on) + WINDOW
        paths_at.update(
            paths_per_commit(
                repo,
                [
                    c.sha
                    for c in history[after + 1 :]
                    if len(c.parents) < 2 and c.author_time <= until
                ],
            )
        )
    return paths_at


def _lines_of(
    store: PatchStore,
    per_sha: dict[str, tuple[Counter[bytes], list[tuple[str, list[bytes]]]]],
    sha: str,
) -> tuple[Counter[bytes], list[tuple[str, list[bytes]]]]:
    if sha not in per_sha:
        changed = store.changed(sha)
        per_sha[sha] = (
            Counter(norm(ln) for f in changed for ln in f.added),
            [
                (f.path, [norm(x) for x in f.removed if not _VERSIONISH.search(x)])
                for f in changed
                if f.status != "D"
            ],
        )
    return per_sha[sha]


def _unit_found(
    unit: tuple[str, ...],
    shas: list[str],
    named: dict[tuple[str, ...], list[tuple[str, str]]],
    near: dict[tuple[str, ...], list[str]],
    store: PatchStore,
    entry: dict[str, LogEntry],
    order: dict[str, int],
    per_sha: dict[str, tuple[Counter[bytes], list[tuple[str, list[bytes]]]]],
) -> list[Found]:
    """One unit's later commits that name it, and the candidates that mostly rewrite lines it
    added (with their rank), in history order."""
    added = {
        norm(ln)
        for s in shas
        if not _merged_in(s, unit, entry)
        for f in store.changed(s)
        for ln in f.added
        if len(norm(ln)) >= 8
    }
    found: list[Found] = [(sha, why, None) for sha, why in named.get(unit, [])]
    unit_paths = {f.path for s in shas if not _merged_in(s, unit, entry) for f in store.changed(s)}
    for sha in near.get(unit, []):
        readded, gone = _lines_of(store, per_sha, sha)
        removed = []  # a removed line the same commit adds back (a re-sort, a move) is no change
        used: dict[bytes, int] = {}
        for path, lines in gone:
            if path in unit_paths:
                for ln in lines:
                    if ln and used.get(ln, 0) < readded[ln]:
                        used[ln] = used.get(ln, 0) + 1
                    elif ln:
                        removed.append(ln)
        hit = sum(1 for ln in removed if ln in added)
        # A fix of the source rewrites mostly its lines; a refactor that passes through them does not.
        if hit and hit >= FOCUS * len(removed):
            fix = int(bool(_FIXLIKE.search(entry[sha].subject)))
            found.append(
                (
                    sha,
                    f"changes lines the source added ({hit} of {len(removed)} removed)",
                    (fix, round(hit / len(removed), 4), hit),
                )
            )
    return sorted(found, key=lambda t: order[t[0]])


def _unit_followups(
    unit: tuple[str, ...],
    found: Sequence[Found],
    unit_picks: dict[tuple[str, ...], list[str]],
    picked: set[str],
    store: PatchStore,
    entry: dict[str, LogEntry],
    carried: Counter[tuple[str, bytes]],
) -> list[FollowUp]:
    """One unit's follow-ups: what ``_unit_found`` found, but none that a pick already carries."""
    out: list[FollowUp] = []
    pick_paths = {
        f.path for p in unit_picks.get(unit, []) for f in store.changed(p) if is_code(f.path)
    }
    for sha, why, rank in found:
        if sha in picked:
            continue
        keys = _keys(store, [sha])
        if keys and sum((keys & carried).values()) >= CARRIED * sum(keys.values()):
            continue  # a pick carries it (e.g. a release-branch merge back into main)
        plus = Counter({k: n for k, n in keys.items() if k[0] == "+"})
        if plus and sum((plus & carried).values()) == sum(plus.values()):
            continue  # an adapted pick already wrote every line it adds (numpy 2.3.x)
        paths = sorted({f.path for f in store.changed(sha)})
        code = int(bool(pick_paths & set(paths)))
        if rank is not None:  # names nothing: a candidate, info
            out.append(
                FollowUp(unit, sha, entry[sha].subject, why, paths, "info", False, (code, *rank))
            )
            continue
        # Naming only the issue the source fixed names neither the source nor its PR: another
        # change for the same issue that touches the same lines is content evidence, info (#40).
        sev: Severity = "info" if why.startswith(SAME_ISSUE) else "P1" if code else "P2"
        out.append(FollowUp(unit, sha, entry[sha].subject, why, paths, sev))
    return out


def worth_a_look(followups: Sequence[FollowUp]) -> list[FollowUp]:
    """The content-only candidates, best first: code the pick carries, a subject that says it
    fixes something, then the share of the source's lines among what they remove, then how many;
    history order breaks ties."""
    cands = [f for f in followups if not f.named]
    return sorted(cands, key=lambda f: tuple(-x for x in f.rank))


def _merged_in(sha: str, unit: tuple[str, ...], entry: dict[str, LogEntry]) -> bool:
    """A merge inside a source PR that brought another branch in (``Merge branch 'main' into
    feature``): its diff is that branch's lines, not the PR's. The unit's own merge (the PR's
    merge into the source branch) is the PR's change and is kept."""
    if sha in unit or sha not in entry:
        return False
    c = entry[sha]
    return c.is_merge or bool(_MERGE_IN.match(c.subject))


def is_code(path: str) -> bool:
    """Neither a test nor documentation (changelog fragments, .rst/.md/.txt, docs/)."""
    return not is_test_path(path) and not is_doc_path(path)


def _keys(store: PatchStore, shas: Iterable[str]) -> Counter[tuple[str, bytes]]:
    """The signed lines of these commits together (``keys_of`` their files: the sum of each one's
    keys, counted in one pass)."""
    return keys_of([f for s in shas for f in store.changed(s)])
