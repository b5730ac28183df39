"""Gap pinning, automatic: a test that fails at HEAD and passes at the source, while fidelity
names commits the pick lacks (after the cut point, follow-ups not picked), is run again on HEAD
plus each of those commits in a temporary tree; the commit that turns it green is named."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from harness.checks.fix_tests.cells import ColumnRun, Options, Plan, run_columns
from harness.checks.fix_tests.verdicts import FAILING, Row
from harness.columns.edits import Edit
from harness.columns.trees import Column
from harness.executors import Executor
from harness.git.repo import GitRepo
from harness.infra.cache import Cache

MAX_GAPS = 8  # candidate commits tried per section


@dataclass
class GapTry:
    commit: str
    subject: str
    greened: list[str] = field(default_factory=list)  # target node ids that pass with it
    still: list[str] = field(default_factory=list)  # target node ids that still fail
    problem: str = ""  # the commit does not apply on HEAD, or the run failed


def targets(rows: Sequence[Row]) -> list[Row]:
    """Rows failing at HEAD (as the pick has them, or in the source's version) and passing at
    the source."""
    return [
        r
        for r in rows
        if r.outcomes.get("source") == "passed"
        and (r.outcomes.get("head") in FAILING or r.outcomes.get("head_source_tests") in FAILING)
    ]


def pin_gaps(
    repo: GitRepo,
    head_column: Column,
    rows: Sequence[Row],
    candidates: Sequence[tuple[str, str]],  # (sha, subject)
    opts: Options,
    cache: Cache,
    executor: Executor,
) -> list[GapTry]:
    """Each candidate applied on HEAD (with the head column's edits), the target rows rerun."""
    wanted = targets(rows)
    if not wanted or not candidates:
        return []
    plan: Plan = []
    for runner in sorted({r.runner for r in wanted}):
        mine = [r for r in wanted if r.runner == runner]
        plan.append((runner, sorted({r.file for r in mine}), [r.nodeid for r in mine]))
    columns = [
        Column(
            f"gap {sha[:10]}",
            head_column.ref,
            # the commit first, on HEAD's own files; then the tests the head column runs
            [Edit(kind="apply-commit", commit=sha), *head_column.edits],
            role="control",
        )
        for sha, _ in candidates[:MAX_GAPS]
    ]
    runs = run_columns(repo, columns, plan, opts, cache, executor)
    return [
        _try(sha, subject, run, wanted)
        for (sha, subject), run in zip(candidates, runs, strict=False)
    ]


def _try(sha: str, subject: str, run: ColumnRun, wanted: Sequence[Row]) -> GapTry:
    tried = GapTry(sha, subject)
    problems = [run.problem] + [c.problem for c in run.cells.values()]
    tried.problem = next((p for p in problems if p), "")
    for row in wanted:
        cell = run.cells.get(row.runner)
        outcome = cell.outcomes.get(row.nodeid) if cell else None
        (tried.greened if outcome == "passed" else tried.still).append(row.nodeid)
    return tried


def pinned_by(tries: Sequence[GapTry]) -> dict[str, str]:
    """Node id → the first commit (in the order tried) that turns it green."""
    out: dict[str, str] = {}
    for t in tries:
        for nid in t.greened:
            out.setdefault(nid, t.commit)
    return out
