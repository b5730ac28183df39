"""The release matrix (``harness backports``): source-branch fixes × release branches.

``fidelity`` turned sideways: each release's picks and their sources come from fidelity's own
source finding (``picks_with_sources``, an adapter over ``fidelity._compare`` that skips end
states, units and follow-ups); this module only joins them on the source commit, adds the
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
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from harness.checks.result import Checked
from harness.errors import UsageError
from harness.git import Commit, GitRepo
from harness.git.apply import blob_sha
from harness.git.backports import (
    InPlaceCheck,
    SourceCommit,
    TrialPick,
    brought_commits,
    commit_times,
    empty_picks,
    file_sections,
    first_parent_line,
    in_place,
    merge_base_all,
    non_merges,
    patch_ids,
    reachable,
    source_log,
    trial_picks,
)
from harness.git.history import fork_point
from harness.git.patch import FilePatch, diff_chunks, diff_many
from harness.report.model import Cell as TableCell
from harness.report.model import Code, Control, Finding, Section, Sha, Table
from harness.report.printable import printable

if TYPE_CHECKING:
    from harness.infra.history_index import HistoryIndex

SECTION_ID = "backports"
STATES = ("picked", "in-fork", "reached", "missing", "n/a")
# The default candidate rule: a fix by its subject ("fix …", "Fix …", "fix(scope): …", "BUG: …",
# after an optional "[tag] "), or a "Fixes #N" line in the message. Linear-time patterns.
DEFAULT_SUBJECT_RULE = (
    r"^(?:\[[^\]\n]{0,80}\]\s{0,8})?(?:[Ff]ix(?:es|ed)?\b|BUG:|fix\([^)\n]{0,80}\)!?:)"
)
_FIXES_LINE = re.compile(r"^[ \t]{0,8}[Ff]ixes:?[ \t]{1,8}#\d+", re.MULTILINE)
_HEXISH = re.compile(r"^[0-9a-fA-F]{7,64}$")
_PR = re.compile(r"^(?:#|PR ?#?|pr ?#?)?(\d{1,6})$")
_VERSION_PARTS = re.compile(r"\d+")
LEGEND = (
    "picked SHA (status): a pick on the release has this source (fidelity's source finding and "
    "status; a merge: its commits' pick) · in-fork: an ancestor of the release's fork point · "
    "reached: on the release another way (merged: an ancestor of the release tip; its commits: a "
    "merge whose commits all are; patch-id SHA: a release commit with the same "
    "git patch-id --stable; subject SHA: a release commit fidelity found no source for, with this "
    "commit's subject, PR numbers and a leading tag aside, which no other source commit has, and "
    "that changes one of its files; "
    "in place: the change itself is at the release tip — each file the commit's after-image, or "
    "its diff reverse-applies there (context and all) and does not apply forward; lines found "
    "elsewhere never count) · n/a: the files it changes do not exist on the release · "
    "missing · applies / conflicts: a trial cherry-pick onto the release tip. Rows: picked (the "
    "source of a pick on some release) · candidate (the candidates file) · rule (the candidate "
    "rule). Releases are ordered oldest first by their fork point's committer date, then by the "
    "version numbers in their names."
)


# -- inputs --------------------------------------------------------------------------
@dataclass(frozen=True)
class CandidateSpec:
    """One entry of a candidates file: a commit (sha or ref) or a PR number, with its line."""

    where: str  # "FILE:LINE" or "FILE[i]", for messages
    ref: str | None = None
    pr: int | None = None


def read_candidates(path: str) -> list[CandidateSpec]:
    """Entries of a candidates file: one sha, ref or PR number (``123``, ``#123``) a line (blank
    lines and ``# …`` comments skipped), or the JSON of ``gh pr list --json number[,mergeCommit]``
    (a list of ``{"number": N}``, a merge commit's ``oid`` used when given). An unreadable file or
    a line that is neither is a usage error."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise UsageError(f"--candidates {path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"--candidates {path}: is a directory") from None
    except OSError as exc:
        raise UsageError(
            f"--candidates {path}: cannot read it ({exc.__class__.__name__})"
        ) from None
    if len(raw) > 4 << 20:
        raise UsageError(f"--candidates {path}: over 4 MiB")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"--candidates {path}: not UTF-8 text") from None
    if text.lstrip().startswith(("[", "{")):
        return _json_candidates(path, text)
    return parse_candidates([(f"{path}:{n}", line) for n, line in enumerate(text.splitlines(), 1)])


def parse_candidates(items: Sequence[tuple[str, str]]) -> list[CandidateSpec]:
    """``(where, text)`` entries (a file's lines, a scenario's list) as candidates: a sha or ref, or
    a PR number (``123``, ``#123``, ``PR #123``); blank entries and ``# …`` comments skipped."""
    out: list[CandidateSpec] = []
    for where, line in items:
        item = line.strip()
        if not item or item.startswith("# ") or item == "#":
            continue
        m = _PR.match(item)
        if m and not (len(item) >= 7 and _HEXISH.match(item)):
            out.append(CandidateSpec(where, pr=int(m.group(1))))
        elif " " in item or "\t" in item or item.startswith("-") or len(item) > 200:
            raise UsageError(f"{where}: expected a commit or a PR number, got {item[:60]!r}")
        else:
            out.append(CandidateSpec(where, ref=item))
    return out


def _json_candidates(path: str, text: str) -> list[CandidateSpec]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"--candidates {path}: not valid JSON ({exc.msg}, line {exc.lineno})"
        ) from None
    if isinstance(doc, dict):
        doc = [doc]
    if not isinstance(doc, list):
        raise UsageError(f'--candidates {path}: expected a JSON list of {{"number": N}}')
    out: list[CandidateSpec] = []
    for i, item in enumerate(doc):
        where = f"{path}[{i}]"
        if isinstance(item, int) and not isinstance(item, bool) and item > 0:
            out.append(CandidateSpec(where, pr=item))
            continue
        if not isinstance(item, dict):
            raise UsageError(f'{where}: expected {{"number": N}} or a number')
        number = item.get("number")
        merge = item.get("mergeCommit")
        oid = merge.get("oid") if isinstance(merge, dict) else None
        if isinstance(oid, str) and _HEXISH.match(oid):
            out.append(
                CandidateSpec(where, ref=oid, pr=number if isinstance(number, int) else None)
            )
        elif isinstance(number, int) and not isinstance(number, bool) and number > 0:
            out.append(CandidateSpec(where, pr=number))
        else:
            raise UsageError(f'{where}: expected a positive "number"')
    return out


def compile_rule(pattern: str | None, where: str = "--rule") -> re.Pattern[str]:
    """The candidate rule's subject pattern (default: a fix by its subject)."""
    try:
        return re.compile(pattern if pattern is not None else DEFAULT_SUBJECT_RULE)
    except re.error as exc:
        raise UsageError(f"{where}: not a regular expression ({exc})") from None


def since_of(repo: GitRepo, value: str | None) -> tuple[str, str] | None:
    """``--since``: ("ref", sha) when it names a commit, ("date", text) for YYYY-MM-DD[ HH:MM[:SS]]."""
    if value is None:
        return None
    sha = repo.try_resolve(value) if not value.startswith("-") else None
    if sha:
        return ("ref", sha)
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?", value):
        return ("date", value)
    raise UsageError(f"--since {value}: not a commit or a YYYY-MM-DD date")


# -- results -------------------------------------------------------------------------
@dataclass(frozen=True)
class MatrixCell:
    source: str
    release: str  # the REF as given
    state: str  # one of STATES
    pick: str | None = None  # the pick (picked) or the release commit / merge that reached it
    status: str | None = None  # fidelity's status of the pick (picked only)
    applies: bool | None = None  # missing only: True / False; None when not tried or unknown
    how: str | None = None  # reached: merged / patch-id / subject / in place

    def as_dict(self) -> dict[str, object]:
        return {
            "source": self.source,
            "release": self.release,
            "state": self.state,
            "pick": self.pick,
            "status": self.status,
            "applies": self.applies,
            "how": self.how,
        }


@dataclass(frozen=True)
class MatrixRow:
    sha: str
    subject: str
    reasons: tuple[str, ...]  # picked / candidate / rule
    prs: tuple[int, ...] = ()
    also: tuple[str, ...] = ()  # other commits of the same change (patch id, Change-Id, PR)


@dataclass(frozen=True)
class ReleaseInfo:
    name: str  # as given
    tip: str
    fork: str
    fork_time: int
    picks: int


@dataclass(frozen=True)
class BackportsResult:
    source: str
    releases: tuple[ReleaseInfo, ...]  # oldest first
    rows: tuple[MatrixRow, ...]
    cells: tuple[MatrixCell, ...]  # row-major, releases oldest first
    unmatched: tuple[str, ...] = ()  # candidate entries that named no commit (PR numbers)
    controls: tuple[tuple[str, str, bool | None], ...] = ()
    notes: tuple[str, ...] = ()  # about the input (a --release given twice)

    def cell(self, source: str, release: str) -> MatrixCell:
        return next(c for c in self.cells if c.source == source and c.release == release)


# -- fidelity's source finding, per release ------------------------------------------
@dataclass
class _Picked:
    pick: str
    status: str


@dataclass
class _ReleasePicks:
    by_source: dict[str, _Picked] = field(default_factory=dict)  # source (or PR commit) → pick
    sources: list[str] = field(default_factory=list)  # the picks' sources, in range order
    count: int = 0
    unsourced: dict[str, str] = field(default_factory=dict)  # subject key → pick with no source


def picks_with_sources(
    repo: GitRepo, source: str, tip: str, fork: str, index: HistoryIndex | None = None
) -> _ReleasePicks:
    """Each pick of ``source..tip`` with its source commits and fidelity status, from fidelity's
    own source finding (``picks_and_sources``: no end states, units or follow-ups). ``fork`` is
    the release's fork point (fidelity finds the same one); ``index``: the repository's history
    index (histories, diffs and resolutions kept between releases and runs; the same answer)."""
    from harness.checks.fidelity.check import picks_and_sources

    results = picks_and_sources(repo, source, tip, source, index)
    from harness.checks.fidelity.source import strip_numbers

    out = _ReleasePicks(count=len(results))
    for r in results:
        if not r.resolution.sources:
            key = strip_numbers(r.commit.subject)
            if key:
                out.unsourced.setdefault(key, r.commit.sha)
            continue
        if r.copy_of:
            continue  # a later copy of the branch's own release commit
        for s in r.resolution.sources:
            out.by_source.setdefault(s, _Picked(r.commit.sha, r.status))
            if s not in out.sources:
                out.sources.append(s)
        for inner, _subject in r.pr_commits:
            out.by_source.setdefault(inner, _Picked(r.commit.sha, r.status))
    return out


# -- the check -----------------------------------------------------------------------
def _version_key(name: str) -> tuple[int, ...]:
    return tuple(int(x) for x in _VERSION_PARTS.findall(name)[:6])


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
    explicit = _explicit_candidates(repo, candidates)
    pattern = rule if rule is not None else compile_rule(None)

    forks, times, order, oldest = _forks(repo, src, names, tips)

    picked: dict[str, _ReleasePicks] = {}
    try:
        for n in order:
            picked[n] = (
                picks_with_sources(repo, src, tips[n], forks[n], index)
                if tips[n] != forks[n]
                else _ReleasePicks()
            )
    finally:
        if index is not None:  # what every release read, written once
            index.save()

    # One pass over the source history since the oldest fork point.
    history = source_log(repo, [src], [oldest])
    by_sha: dict[str, SourceCommit] = {c.sha: c for c in history}
    in_scope = _in_scope(repo, src, oldest, since)
    reasons, prs, unmatched = _reasons(
        history, by_sha, picked, order, candidates, explicit, pattern, in_scope
    )
    position = {c.sha: i for i, c in enumerate(history)}
    row_shas, extra = _row_order(repo, reasons, position)

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
    fork_sets, cells, undecided = _ancestry_cells(
        repo, row_shas + hidden, order, position, forks, tips, oldest, picked
    )

    missing, patches = _by_content(
        repo, undecided, cells, order, forks, tips, picked, history, subject, parents
    )
    unseen = set(hidden)
    for s, n in missing:
        if s in unseen:
            cells[(s, n)] = MatrixCell(s, n, "missing")
    shown = [(s, n) for s, n in missing if s not in unseen]
    fast_path = _try_missing(repo, shown, cells, patches, tips, parents, trial)
    _merges_by_commits(cells, brought, order)
    rows = _one_row_per_change(repo, src, oldest, rows, cells, order, position, body, parents)
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


def _change_keys(
    repo: GitRepo,
    rows: Sequence[MatrixRow],
    body: Callable[[str], str],
    parents: Callable[[str], tuple[str, ...]],
) -> dict[str, list[str]]:
    """What names each row's change: its ``git patch-id --stable`` (a merge: against its first
    parent), its Gerrit Change-Ids, and the PR number of a subject that names exactly one (a
    revert's aside)."""
    from harness.checks.fidelity.changeid import change_ids
    from harness.checks.fidelity.source import pr_numbers

    pids = patch_ids(
        repo, [(r.sha, parents(r.sha)[0] if len(parents(r.sha)) > 1 else None) for r in rows]
    )
    keys: dict[str, list[str]] = {}
    for r in rows:
        got = [f"patch-id {pids[r.sha]}"] if r.sha in pids else []
        got += [f"Change-Id {c}" for c in change_ids(body(r.sha))]
        numbers = pr_numbers(r.subject)
        if len(numbers) == 1 and not r.subject.lower().startswith(("revert", '"revert')):
            got.append(f"PR #{numbers[0]}")
        keys[r.sha] = got
    return keys


def _one_row_per_change(
    repo: GitRepo,
    src: str,
    oldest: str,
    rows: Sequence[MatrixRow],
    cells: dict[tuple[str, str], MatrixCell],
    order: Sequence[str],
    position: Mapping[str, int],
    body: Callable[[str], str],
    parents: Callable[[str], tuple[str, ...]],
) -> list[MatrixRow]:
    """Rows of one change (one patch id, Change-Id or PR number) joined into one, named by the
    commit on the source's first-parent line (else on the source, else the first row): its cells
    take a pick or a reach of any of them. Two first-parent source commits are never joined (a
    fix made again after a revert is its own row)."""
    if len(rows) < 2:
        return list(rows)
    keys = _change_keys(repo, rows, body, parents)
    parent_of = {r.sha: r.sha for r in rows}

    def find(x: str) -> str:
        while parent_of[x] != x:
            parent_of[x] = parent_of[parent_of[x]]
            x = parent_of[x]
        return x

    first_seen: dict[str, str] = {}
    for r in rows:
        for k in keys[r.sha]:
            other = first_seen.setdefault(k, r.sha)
            if other != r.sha:
                parent_of[find(r.sha)] = find(other)
    groups: dict[str, list[MatrixRow]] = {}
    for r in rows:
        groups.setdefault(find(r.sha), []).append(r)
    if all(len(g) == 1 for g in groups.values()):
        return list(rows)
    first_parent = set(first_parent_line(repo, src, oldest))
    on_source = {r.sha for r in rows if r.sha in position or repo.is_ancestor(r.sha, src)}
    out: list[MatrixRow] = []
    joined: dict[str, list[MatrixRow]] = {}
    for r in rows:
        group = groups[find(r.sha)]
        if len(group) == 1 or sum(g.sha in first_parent for g in group) > 1:
            out.append(r)
            continue
        named = next(
            (g for g in group if g.sha in first_parent),
            next((g for g in group if g.sha in on_source), group[0]),
        )
        if r is not named:
            continue
        others = [g for g in group if g is not named]
        joined[named.sha] = others
        out.append(
            MatrixRow(
                named.sha,
                named.subject,
                tuple(dict.fromkeys(x for g in (named, *others) for x in g.reasons)),
                tuple(dict.fromkeys(x for g in (named, *others) for x in g.prs)),
                tuple(g.sha for g in others),
            )
        )
    for named_sha, others in joined.items():
        for n in order:
            own = cells[(named_sha, n)]
            if own.state in ("in-fork", "picked"):
                continue
            theirs = [cells[(g.sha, n)] for g in others]
            got = next((c for c in theirs if c.state == "picked"), None)
            if got is None and own.state != "reached":
                got = next((c for c in theirs if c.state in ("reached", "in-fork")), None)
            if got is None:
                continue
            if got.state == "in-fork":
                got = MatrixCell(got.source, n, "reached", how="merged")
            cells[(named_sha, n)] = dataclasses.replace(got, source=named_sha)
    return out


def _merges_by_commits(
    cells: dict[tuple[str, str], MatrixCell],
    brought: Mapping[str, Sequence[str]],
    order: Sequence[str],
) -> None:
    """A merge's row is picked (or reached) on a release where every commit it brought is
    picked, reached or in the fork there (picked where one of them is: a pick says more than a
    reach); a merge in the fork or picked by its own cell stays so."""
    for merge, commits in brought.items():
        if not commits:
            continue
        for n in order:
            own = cells[(merge, n)]
            if own.state in ("in-fork", "picked"):
                continue
            theirs = [cells[(c, n)] for c in commits]
            if not all(c.state in ("in-fork", "picked", "reached") for c in theirs):
                continue
            first = next((c for c in theirs if c.state == "picked"), None)
            if own.state == "reached" and first is None:
                continue
            if first is not None:
                cells[(merge, n)] = MatrixCell(merge, n, "picked", first.pick, first.status)
            else:
                cells[(merge, n)] = MatrixCell(merge, n, "reached", how="its commits")


def _in_scope(
    repo: GitRepo, src: str, oldest: str, since: tuple[str, str] | None
) -> set[str] | None:
    """The source commits ``--since`` keeps (a ref: those it does not reach; a date: those
    committed since), or None for all."""
    if since is None:
        return None
    kind, value = since
    if kind == "ref":
        return reachable(repo, src, [value, oldest])
    return {c.sha for c in source_log(repo, [src], [oldest], since=value)}


def _row_order(
    repo: GitRepo, reasons: Mapping[str, object], position: Mapping[str, int]
) -> tuple[list[str], dict[str, Commit]]:
    """Rows in source history order (newest first), then rows outside it (off-branch sources,
    older candidates) by commit time, newest first; and those outside rows' commits."""
    outside = [s for s in reasons if s not in position]
    extra = {c.sha: c for c in (repo.commits(outside, no_walk=True) if outside else [])}
    outside.sort(key=lambda s: (-(extra[s].committer_time if s in extra else 0), s))
    return sorted((s for s in reasons if s in position), key=position.__getitem__) + outside, extra


def _explicit_candidates(
    repo: GitRepo, candidates: Sequence[CandidateSpec]
) -> list[tuple[CandidateSpec, str]]:
    """The candidates given as commits, each resolved (an unknown one is a usage error)."""
    explicit: list[tuple[CandidateSpec, str]] = []
    for spec in candidates:
        if spec.ref is not None:
            sha = repo.try_resolve(spec.ref) if not spec.ref.startswith("-") else None
            if sha is None:
                raise UsageError(f"{spec.where}: unknown commit {spec.ref!r}")
            explicit.append((spec, sha))
    return explicit


def _forks(
    repo: GitRepo, src: str, names: list[str], tips: dict[str, str]
) -> tuple[dict[str, str], dict[str, int], list[str], str]:
    """Each release's fork point, their commit times, the releases in order (fork point date,
    then version in the name) and the oldest fork point."""
    # Fork points (HEAD's first-parent line, as fidelity finds it) and their order.
    forks: dict[str, str] = {}
    for n in names:
        forks[n] = fork_point(repo, src, tips[n]) if not repo.is_ancestor(tips[n], src) else tips[n]
    times = commit_times(repo, list(forks.values()))
    order = sorted(names, key=lambda n: (times.get(forks[n], 0), _version_key(n), names.index(n)))
    oldest = merge_base_all(repo, [forks[n] for n in names]) or forks[order[0]]
    return forks, times, order, oldest


def _reasons(
    history: Sequence[SourceCommit],
    by_sha: dict[str, SourceCommit],
    picked: dict[str, _ReleasePicks],
    order: Sequence[str],
    candidates: Sequence[CandidateSpec],
    explicit: Sequence[tuple[CandidateSpec, str]],
    pattern: re.Pattern[str],
    in_scope: set[str] | None,
) -> tuple[dict[str, list[str]], dict[str, list[int]], list[str]]:
    """Why each row is in the matrix (picked, candidate, rule), the PR numbers that named it, and
    the candidate PRs no source commit names."""
    reasons: dict[str, list[str]] = {}
    prs: dict[str, list[int]] = {}

    def add(sha: str, why: str) -> None:
        got = reasons.setdefault(sha, [])
        if why not in got:
            got.append(why)

    for n in order:
        for s in picked[n].sources:
            add(s, "picked")
    unmatched: list[str] = []
    wanted_prs = {spec.pr for spec in candidates if spec.pr is not None and spec.ref is None}
    named: dict[int, list[str]] = {}
    if wanted_prs:
        from harness.checks.fidelity.source import pr_numbers

        for c in history:
            for num in pr_numbers(c.subject):
                if num in wanted_prs:
                    named.setdefault(num, []).append(c.sha)
    for spec in candidates:
        if spec.ref is not None:
            continue
        assert spec.pr is not None
        shas = named.get(spec.pr, [])
        # A PR merged as a merge commit: the merge is the unit (its first-parent diff).
        merges = [s for s in shas if by_sha[s].is_merge]
        chosen = merges[:1] or shas
        if not chosen:
            unmatched.append(f"#{spec.pr} ({spec.where})")
        for s in chosen:
            add(s, "candidate")
            prs.setdefault(s, []).append(spec.pr)
    for spec, sha in explicit:
        add(sha, "candidate")
        if spec.pr is not None:
            prs.setdefault(sha, []).append(spec.pr)
    for c in history:
        if c.is_merge or (in_scope is not None and c.sha not in in_scope):
            continue
        if pattern.search(c.subject) or _FIXES_LINE.search(c.body):
            add(c.sha, "rule")
    return reasons, prs, unmatched


def _ancestry_cells(
    repo: GitRepo,
    row_shas: Sequence[str],
    order: Sequence[str],
    position: dict[str, int],
    forks: dict[str, str],
    tips: dict[str, str],
    oldest: str,
    picked: dict[str, _ReleasePicks],
) -> tuple[dict[str, set[str]], dict[tuple[str, str], MatrixCell], list[tuple[str, str]]]:
    """The cells ancestry decides (in-fork, picked, reached by a merge) and the rest, undecided."""
    # Ancestry: one rev-list per release for rows in the history; is-ancestor for the rest.
    fork_sets = {n: reachable(repo, forks[n], [oldest]) for n in order}
    tip_sets = {n: reachable(repo, tips[n], [oldest]) for n in order}
    cells: dict[tuple[str, str], MatrixCell] = {}
    undecided: list[tuple[str, str]] = []
    for s in row_shas:
        for n in order:
            if s in position:
                in_fork, on_tip = s in fork_sets[n], s in tip_sets[n]
            else:
                in_fork = repo.is_ancestor(s, forks[n])
                on_tip = in_fork or repo.is_ancestor(s, tips[n])
            p = picked[n].by_source.get(s)
            if in_fork:
                cells[(s, n)] = MatrixCell(s, n, "in-fork")
            elif p is not None:
                cells[(s, n)] = MatrixCell(s, n, "picked", p.pick, p.status)
            elif on_tip:
                cells[(s, n)] = MatrixCell(s, n, "reached", how="merged")
            else:
                undecided.append((s, n))
    return fork_sets, cells, undecided


def _by_content(
    repo: GitRepo,
    undecided: Sequence[tuple[str, str]],
    cells: dict[tuple[str, str], MatrixCell],
    order: Sequence[str],
    forks: dict[str, str],
    tips: dict[str, str],
    picked: dict[str, _ReleasePicks],
    history: Sequence[SourceCommit],
    subject: Callable[[str], str],
    parents: Callable[[str], tuple[str, ...]],
) -> tuple[list[tuple[str, str]], dict[str, list[FilePatch]]]:
    """The undecided cells that content decides (reached by patch id, by subject or in place;
    n/a where the release has none of the files), and the rest, missing, with their patches."""
    # Patch ids of the undecided rows and of every release's own commits, in one pass.
    rows_left = list(dict.fromkeys(s for s, _ in undecided))
    against = {s: (parents(s)[0] if len(parents(s)) > 1 else None) for s in rows_left}
    release_commits = {n: non_merges(repo, tips[n], [forks[n]]) for n in order}
    pids = patch_ids(
        repo,
        [(s, against[s]) for s in rows_left]
        + [(c, None) for n in order for c in release_commits[n] if c not in against],
    )
    pid_on: dict[str, dict[str, str]] = {}
    for n in order:
        for rc in reversed(release_commits[n]):  # the oldest release commit with that patch id
            if rc in pids:
                pid_on.setdefault(n, {}).setdefault(pids[rc], rc)

    # The undecided rows' changes (-U0) and the files they touch at each release tip.
    patches = {
        p.commit: p.files
        for p in diff_many(repo, [(s, against[s]) for s in rows_left], context=False)
    }
    specs: list[str] = []
    for s, n in undecided:
        for f in patches.get(s, []):
            for path in {f.old_path, f.new_path} - {None}:
                specs.append(f"{tips[n]}:{path}")
    specs = list(dict.fromkeys(specs))
    blobs = dict(zip(specs, repo.read_blobs(specs, limit=repo.big_file), strict=True))

    # A pick fidelity found no source for, whose subject (PR numbers and a leading tag aside) is
    # the row's and no other source commit's since the oldest fork point: the same change, adapted.
    from harness.checks.fidelity.source import strip_numbers

    subject_count = Counter(strip_numbers(c.subject) for c in history)

    def subject_pick(s: str, n: str) -> str | None:
        key = strip_numbers(subject(s))
        return picked[n].unsourced.get(key) if subject_count[key] <= 1 else None

    # The release commits with a row's subject, read to confirm they change one of its files.
    named = list(dict.fromkeys(p for s, n in undecided if (p := subject_pick(s, n))))
    subject_patches = {
        p.commit: p.files for p in diff_many(repo, [(c, None) for c in named], context=False)
    }
    missing: list[tuple[str, str]] = []
    maybe: list[tuple[str, str]] = []  # cells whose change may be in place: git apply tells
    for s, n in undecided:
        pid = pids.get(s)
        same = pid_on.get(n, {}).get(pid) if pid else None
        files = patches.get(s, [])
        if same is not None:
            cells[(s, n)] = MatrixCell(s, n, "reached", same, how="patch-id")
            continue
        by_subject = subject_pick(s, n)
        if by_subject is not None and _shares_a_path(files, subject_patches.get(by_subject, [])):
            cells[(s, n)] = MatrixCell(s, n, "reached", by_subject, how="subject")
            continue
        existing = [f for f in files if f.status != "A" and f.old_path]
        if existing and all(blobs.get(f"{tips[n]}:{f.old_path}") is None for f in existing):
            cells[(s, n)] = MatrixCell(s, n, "n/a")
            continue
        if _could_be_in_place(files, blobs, tips[n], repo.big_file):
            maybe.append((s, n))
            continue
        missing.append((s, n))

    placed = _in_place(repo, maybe, against, blobs, tips, parents)
    for s, n in maybe:
        if (s, n) in placed:
            cells[(s, n)] = MatrixCell(s, n, "reached", how="in place")
        else:
            missing.append((s, n))
    return missing, patches


def _try_missing(
    repo: GitRepo,
    missing: Sequence[tuple[str, str]],
    cells: dict[tuple[str, str], MatrixCell],
    patches: dict[str, list[FilePatch]],
    tips: dict[str, str],
    parents: Callable[[str], tuple[str, ...]],
    trial: bool,
) -> tuple[tuple[str, str, bool | None], ...]:
    """The missing cells, each with whether a trial cherry-pick applies; and the control that
    checks the trials' fast path against git's merge on a sample."""
    applies: list[bool | None] = [None] * len(missing)
    trials = [
        TrialPick(
            s,
            parents(s)[0],
            tips[n],
            tuple((f.status, f.old_path, f.new_path) for f in patches.get(s, [])) or None,
        )
        for s, n in missing
        if parents(s)
    ]
    answered: list[bool | None] = []
    if trial and trials:
        answered = trial_picks(repo, trials)
        answers = iter(answered)
        applies = [next(answers) if parents(s) else None for s, _ in missing]
    for (s, n), ok in zip(missing, applies, strict=True):
        cells[(s, n)] = MatrixCell(s, n, "missing", applies=ok if parents(s) else None)
    if trial and trials:
        # The fast path (files the release left as they were at the commit's parent) must answer
        # as git's merge does: a sample of its answers is merged for real.
        clean = [t for t, ok in zip(trials, answered, strict=True) if ok]
        sample = clean[:: max(1, len(clean) // 5)][:5]
        merged = trial_picks(repo, sample, fast=False)
        agree = sum(ok is True for ok in merged)
        return (
            (
                "trial-pick fast path",
                f"{agree} of {len(sample)} sampled clean trials are clean merged by merge-tree too",
                agree == len(sample),
            ),
        )
    return ()


def _shares_a_path(ours: Sequence[FilePatch], theirs: Sequence[FilePatch]) -> bool:
    """Whether two changes touch a file in common (a path either side had): a subject alone
    ("fix test") names unrelated commits."""
    paths = {x for f in ours for x in (f.old_path, f.new_path) if x}
    return any(x in paths for f in theirs for x in (f.old_path, f.new_path) if x)


def _could_be_in_place(
    files: Sequence[FilePatch], blobs: dict[str, bytes | None], tip: str, limit: int
) -> bool:
    """What the change in place needs at the release tip, cheaply: every file it deletes (or
    renames away) absent, every file it leaves present (within the size limit) with every line
    it adds. ``_in_place`` then asks git whether the change itself is there."""
    if not files:
        return False
    for f in files:
        if f.status == "D" or (f.status == "R" and f.old_path):
            if f.old_path and blobs.get(f"{tip}:{f.old_path}") is not None:
                return False
            if f.status == "D":
                continue
        at_tip = blobs.get(f"{tip}:{f.path}")
        if at_tip is None or len(at_tip) > limit:
            return False
        lines = set(at_tip.splitlines())
        if not all(ln in lines for ln in f.added):
            return False
    return True


def _in_place(
    repo: GitRepo,
    cells: Sequence[tuple[str, str]],
    against: Mapping[str, str | None],
    blobs: dict[str, bytes | None],
    tips: Mapping[str, str],
    parents: Callable[[str], tuple[str, ...]],
) -> set[tuple[str, str]]:
    """The cells whose change is in place at the release tip: file by file, the release's file
    is the commit's after-image (the same blob, or absent where the commit deletes it), or the
    commit's diff of it reverse-applies there (its after-image, context included, is in the file)
    while the forward diff does not apply (its before-image is not there too). Lines found
    elsewhere in a file never count: the hunks' context must match. Else a trial cherry-pick
    that merges cleanly into the release's own tree (nothing to change: git's merge found every
    hunk there as the commit has it)."""
    if not cells:
        return set()

    def parent_of(s: str) -> str | None:
        return against.get(s) or (parents(s)[0] if parents(s) else None)

    rows = list(dict.fromkeys(s for s, _ in cells))
    chunks = diff_chunks(repo, [(s, against.get(s)) for s in rows], renames=False)
    sections = {s: file_sections(c) for s, c in zip(rows, chunks, strict=True)}
    more = [
        f"{tips[n]}:{f.path}"
        for s, n in cells
        for f, _ in sections[s]
        if f"{tips[n]}:{f.path}" not in blobs
    ]
    more = list(dict.fromkeys(more))
    blobs = {**blobs, **dict(zip(more, repo.read_blobs(more, limit=repo.big_file), strict=True))}
    placed: set[tuple[str, str]] = set()
    checks: list[InPlaceCheck] = []
    asked: list[tuple[str, str]] = []
    for s, n in cells:
        diff: list[bytes] = []
        files: list[tuple[str, bytes | None]] = []
        ok = bool(sections[s])
        for f, text in sections[s]:
            now = blobs.get(f"{tips[n]}:{f.path}")
            if now is not None and len(now) > repo.big_file:
                ok = False
                break
            after = None if f.status == "D" else f.new_blob
            if (now is None and after is None) or (
                now is not None and after is not None and blob_sha(repo, now) == after
            ):
                continue  # the after-image itself
            if f.binary or f.status in ("A", "D"):
                ok = False  # a binary file, an added or deleted one: only the same blob counts
                break
            diff.append(text)
            files.append((f.path, now))
        if not ok:
            continue
        if not diff:
            placed.add((s, n))
            continue
        checks.append(InPlaceCheck(b"".join(diff), tuple(files)))
        asked.append((s, n))
    for cell, (back, forward) in zip(asked, in_place(checks), strict=True):
        if back and not forward:
            placed.add(cell)
    # The rest: a cherry-pick that merges cleanly and changes nothing (a line near the change
    # differs on the release, or the same lines are elsewhere too): the hunks are there as the
    # commit has them, and git's merge placed them.
    rest = [(s, n) for s, n in cells if (s, n) not in placed and parent_of(s)]
    trials = [TrialPick(s, parent_of(s) or "", tips[n]) for s, n in rest]
    for cell, empty in zip(rest, empty_picks(repo, trials), strict=True):
        if empty:
            placed.add(cell)
    return placed


def _controls(
    repo: GitRepo,
    order: Sequence[str],
    forks: dict[str, str],
    tips: dict[str, str],
    fork_sets: dict[str, set[str]],
    picked: dict[str, _ReleasePicks],
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


# -- the section ---------------------------------------------------------------------
def _shown(c: MatrixCell) -> str:
    if c.state == "picked":
        return f"picked {(c.pick or '')[:12]} ({c.status})"
    if c.state == "reached":
        return f"reached ({c.how} {c.pick[:12]})" if c.pick else f"reached ({c.how})"
    if c.state == "missing":
        return "missing · " + {True: "applies", False: "conflicts", None: "not tried"}[c.applies]
    return c.state


def _findings(result: BackportsResult) -> list[Finding]:
    out: list[Finding] = []
    configured = {r.sha for r in result.rows if "candidate" in r.reasons}
    names = [r.name for r in result.releases]
    by = {(c.source, c.release): c for c in result.cells}
    info: Counter[str] = Counter()
    info_apply: Counter[str] = Counter()
    for row in result.rows:
        fixed_in: str | None = None
        for n in names:
            c = by[(row.sha, n)]
            if c.state in ("picked", "reached", "in-fork"):
                fixed_in = fixed_in or n
                continue
            if c.state != "missing":
                continue
            applies = {
                True: "a cherry-pick applies cleanly",
                False: "a cherry-pick conflicts",
                None: "not tried",
            }[c.applies]
            if fixed_in is not None:
                out.append(
                    Finding(
                        "backport-regression",
                        "P1",
                        f"{row.sha[:12]} is fixed in {fixed_in} but missing in newer {n}: "
                        f"{row.subject}",
                        f"{fixed_in}: {_shown(by[(row.sha, fixed_in)])}; {n}: {applies}",
                        key=f"{row.sha}:{n}:regression",
                    )
                )
            elif row.sha in configured:
                out.append(
                    Finding(
                        "backport-missing",
                        "P2",
                        f"candidate {row.sha[:12]} is missing on {n}: {row.subject}",
                        applies,
                        key=f"{row.sha}:{n}:candidate",
                    )
                )
            else:
                info[n] += 1
                info_apply[n] += c.applies is True
    for n in names:
        if info[n]:
            out.append(
                Finding(
                    "backport-not-picked",
                    "info",
                    f"{info[n]} row(s) missing on {n} ({info_apply[n]} would apply cleanly)",
                    "rows found by the candidate rule or picked to another release only",
                    key=f"{n}:not-picked",
                )
            )
    for u in result.unmatched:
        out.append(
            Finding(
                "backport-candidate-unmatched",
                "info",
                f"candidate PR {u}: no commit on the source since the oldest fork point names it",
                key=f"unmatched:{u}",
            )
        )
    return out


def backports_section(result: BackportsResult) -> Section:
    """The matrix as a report section (tables, findings, controls, not-verified notes, JSON data)."""
    names = [r.name for r in result.releases]
    by = {(c.source, c.release): c for c in result.cells}
    counts = {n: Counter(by[(r.sha, n)].state for r in result.rows) for n in names}
    tables = [_matrix_table(result, names, by), _releases_table(result, by, counts)]
    findings = _findings(result)
    total = Counter(c.state for c in result.cells)
    summary = f"{len(result.rows)} source commit(s) × {len(names)} release(s): " + (
        ", ".join(f"{total[s]} {s}" for s in STATES if total[s]) or "no rows"
    )
    if result.notes:
        summary += " (" + "; ".join(result.notes) + ")"
    controls = [Control(name, text, ok) for name, text, ok in result.controls]
    controls.append(
        Control(
            "one state per cell",
            f"{len(result.cells)} cells = {len(result.rows)} rows × {len(names)} releases",
            len(result.cells) == len(result.rows) * len(names),
        )
    )
    return printable(
        Section(
            SECTION_ID,
            "Backports: source fixes × release branches",
            summary,
            tables,
            findings,
            controls,
            list(_NOT_VERIFIED),
            [],
            _matrix_data(result),
        )
    )


def _matrix_table(
    result: BackportsResult, names: list[str], by: dict[tuple[str, str], MatrixCell]
) -> Table:
    table_rows: list[list[TableCell]] = [
        [
            i,
            Sha(r.sha),
            r.subject + (f" (also {', '.join(a[:12] for a in r.also)})" if r.also else ""),
            ", ".join(r.reasons),
            *(_shown(by[(r.sha, n)]) for n in names),
        ]
        for i, r in enumerate(result.rows, 1)
    ]
    control_text = "; ".join(f"{name}: {text}" for name, text, _ in result.controls) or "none"
    return Table(
        f"Release matrix: {result.source} × {', '.join(names)}",
        ["#", "source", "subject", "row from", *names],
        table_rows,
        legend=LEGEND,
        control=control_text,
        collapsed=len(table_rows) > 40,
    )


def _releases_table(
    result: BackportsResult,
    by: dict[tuple[str, str], MatrixCell],
    counts: dict[str, Counter[str]],
) -> Table:
    return Table(
        "Releases (oldest first)",
        ["release", "tip", "fork point", "picks", *STATES, "missing that apply"],
        [
            [
                Code(r.name),
                Sha(r.tip),
                Sha(r.fork),
                r.picks,
                *(counts[r.name][s] for s in STATES),
                sum(
                    1
                    for row in result.rows
                    if by[(row.sha, r.name)].state == "missing"
                    and by[(row.sha, r.name)].applies is True
                ),
            ]
            for r in result.releases
        ],
        legend="fork point: where the release leaves the source (the first parent of its oldest "
        "first-parent commit not on the source); picks: the release's non-merge commits "
        "fidelity judged; state counts are over the rows of the matrix",
        control="every row gets exactly one state per release: the counts of a release sum to "
        f"{len(result.rows)}",
    )


_NOT_VERIFIED = [
    "whether a pick that applies cleanly builds or passes tests (a trial merge of content only)",
    "reached (in place): the change's hunks are at the release tip with their context (git apply "
    "--check, reverse), not that they do the same thing there",
    "commits on a release that came from somewhere other than the source branch",
    "the candidate rule is a subject/trailer heuristic: fixes without 'fix' in their subject "
    "are rows only when picked somewhere or listed in --candidates",
    "n/a: a file that moved on the release counts as absent (its path is compared, not its "
    "content)",
]


def _matrix_data(result: BackportsResult) -> dict[str, object]:
    data: dict[str, object] = {
        "source": result.source,
        "releases": [
            {"release": r.name, "tip": r.tip, "fork_point": r.fork, "picks": r.picks}
            for r in result.releases
        ],
        "rows": [
            {
                "source": r.sha,
                "subject": r.subject,
                "from": list(r.reasons),
                "prs": list(r.prs),
                "also": list(r.also),
            }
            for r in result.rows
        ],
        "cells": [c.as_dict() for c in result.cells],
        "notes": list(result.notes),
        "release_order": "fork point committer date, then version numbers in the name",
    }
    return data
