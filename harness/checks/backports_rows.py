"""The release matrix's releases and rows: each release's fork point and order, its picks with
their sources (fidelity's own source finding), and which source commits are rows and why
(picked, candidate, rule)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from harness.checks.backports_candidates import CandidateSpec
from harness.errors import UsageError
from harness.git import Commit, GitRepo
from harness.git.backports import (
    SourceCommit,
    commit_times,
    merge_base_all,
    reachable,
    source_log,
)
from harness.git.history import fork_point

if TYPE_CHECKING:
    from harness.infra.history_index import HistoryIndex

_FIXES_LINE = re.compile(r"^[ \t]{0,8}[Ff]ixes:?[ \t]{1,8}#\d+", re.MULTILINE)
_VERSION_PARTS = re.compile(r"\d+")


@dataclass
class _Picked:
    pick: str
    status: str


@dataclass
class ReleasePicks:
    by_source: dict[str, _Picked] = field(default_factory=dict)  # source (or PR commit) → pick
    sources: list[str] = field(default_factory=list)  # the picks' sources, in range order
    count: int = 0
    unsourced: dict[str, str] = field(default_factory=dict)  # subject key → pick with no source


def picks_with_sources(
    repo: GitRepo, source: str, tip: str, fork: str, index: HistoryIndex | None = None
) -> ReleasePicks:
    """Each pick of ``source..tip`` with its source commits and fidelity status, from fidelity's
    own source finding (``picks_and_sources``: no end states, units or follow-ups). ``fork`` is
    the release's fork point (fidelity finds the same one); ``index``: the repository's history
    index (histories, diffs and resolutions kept between releases and runs; the same answer)."""
    from harness.checks.fidelity.check import picks_and_sources

    results = picks_and_sources(repo, source, tip, source, index)
    from harness.checks.fidelity.subjects import strip_numbers

    out = ReleasePicks(count=len(results))
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


def _version_key(name: str) -> tuple[int, ...]:
    return tuple(int(x) for x in _VERSION_PARTS.findall(name)[:6])


def since_scope(
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


def row_order(
    repo: GitRepo, reasons: Mapping[str, object], position: Mapping[str, int]
) -> tuple[list[str], dict[str, Commit]]:
    """Rows in source history order (newest first), then rows outside it (off-branch sources,
    older candidates) by commit time, newest first; and those outside rows' commits."""
    outside = [s for s in reasons if s not in position]
    extra = {c.sha: c for c in (repo.commits(outside, no_walk=True) if outside else [])}
    outside.sort(key=lambda s: (-(extra[s].committer_time if s in extra else 0), s))
    return sorted((s for s in reasons if s in position), key=position.__getitem__) + outside, extra


def explicit_candidates(
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


def release_forks(
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


def row_reasons(
    history: Sequence[SourceCommit],
    by_sha: dict[str, SourceCommit],
    picked: dict[str, ReleasePicks],
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
        from harness.checks.fidelity.subjects import pr_numbers

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
