"""The commits the pick lacks, each applied to HEAD in a temporary tree (after the cut point,
follow-ups not picked: fidelity's ``FidelityResult``), the scope's tests run on each beside HEAD
alone: the node ids whose outcome changes pin the commit ("no test pins it" otherwise), and a test
failing at HEAD that turns green names the commit to pick."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from harness.checks.fix_tests.cells import ColumnRun, Options, Plan, run_columns
from harness.checks.fix_tests.verdicts import FAILING, Row
from harness.checks.paths import is_test_path
from harness.columns.edits import Edit
from harness.columns.trees import Column
from harness.executors import Executor
from harness.git.picks import paths_per_commit
from harness.git.repo import GitRepo
from harness.infra.cache import Cache

MAX_GAPS = 8  # commits tried per section


@dataclass
class Pin:
    commit: str
    subject: str
    scope: str
    applies: bool = True
    pinned_by: list[str] = field(default_factory=list)  # outcome differs from HEAD alone
    greened: list[str] = field(default_factory=list)  # failing targets that pass with it
    still: list[str] = field(default_factory=list)  # failing targets that still fail
    problem: str = ""


def targets(rows: Sequence[Row]) -> list[Row]:
    """Rows failing at HEAD (as the pick has them, or in the source's version): a commit the
    pick lacks that turns one green is named (also where the source's own column fails: the
    source named may itself be a PR commit cut before the fix was complete)."""
    return [
        r
        for r in rows
        if r.outcomes.get("head") in FAILING or r.outcomes.get("head_source_tests") in FAILING
    ]


def _merge(plan: Plan, extra: Plan) -> Plan:
    """The scope's plan with the section's own files added (they run in every pin column)."""
    files: dict[str, set[str]] = {}
    for name, paths, _ in [*plan, *extra]:
        files.setdefault(name, set()).update(paths)
    return [(name, sorted(paths), None) for name, paths in sorted(files.items())]


@dataclass
class PinRuns:
    """HEAD alone and HEAD + each candidate, run: what ``read_pins`` judges once the rows are
    known (the runs need no row: they start beside the section's first pass)."""

    scope: str
    tried: list[tuple[str, str]]
    code: dict[str, list[str]]
    runs: list[ColumnRun]


def pin_runs(
    repo: GitRepo,
    head_column: Column,
    candidates: Sequence[tuple[str, str]],  # (sha, subject)
    scope: tuple[str, Plan],
    section_plan: Plan,
    opts: Options,
    cache: Cache,
    executor: Executor,
) -> PinRuns | None:
    """HEAD alone and HEAD + each candidate's code (then the head column's tests), over the
    scope and the section's own files."""
    if not candidates:
        return None
    name, plan = scope
    plan = _merge(plan, section_plan)
    tried = list(candidates[:MAX_GAPS])
    code = _code_paths(repo, [sha for sha, _ in tried])
    columns = [Column("pin baseline", head_column.ref, list(head_column.edits), role="control")]
    columns += [
        Column(
            f"gap {sha[:10]}",
            head_column.ref,
            # its code only (the tests the columns run are the head column's own): a pick that
            # already carries the commit's test hunks still takes its code
            [
                *(Edit(kind="apply-commit", commit=sha, path=p) for p in code[sha]),
                *head_column.edits,
            ],
            role="control",
        )
        for sha, _ in tried
        if code[sha]
    ]
    return PinRuns(name, tried, code, run_columns(repo, columns, plan, opts, cache, executor))


def read_pins(done: PinRuns | None, rows: Sequence[Row]) -> list[Pin]:
    """Each candidate's pins (outcomes that change against HEAD alone) and the failing rows it
    turns green."""
    if done is None:
        return []
    wanted = targets(rows)
    runs = iter(done.runs)
    baseline = next(runs)
    pins = []
    for sha, subject in done.tried:
        if not done.code[sha]:
            pins.append(
                Pin(sha, subject, done.scope, problem="it changes only tests: no code to apply")
            )
        else:
            pins.append(_pin(sha, subject, done.scope, next(runs), baseline, wanted))
    return pins


def _code_paths(repo: GitRepo, shas: Sequence[str]) -> dict[str, list[str]]:
    """The paths each commit changes that are not tests (against its first parent)."""
    changed = paths_per_commit(repo, list(shas))
    return {sha: sorted(p for p in changed.get(sha, []) if not is_test_path(p)) for sha in shas}


def _outcomes(run: ColumnRun) -> dict[str, str]:
    out: dict[str, str] = {}
    for cell in run.cells.values():
        out.update(cell.outcomes)
        out.update({f: "error" for f in cell.errors})
    return out


def _pin(
    sha: str, subject: str, scope: str, run: ColumnRun, baseline: ColumnRun, wanted: Sequence[Row]
) -> Pin:
    pin = Pin(sha, subject, scope)
    if run.problem:
        pin.applies = "does not apply" not in run.problem
        pin.problem = run.problem
        return pin
    problems = [c.problem for c in [*run.cells.values(), *baseline.cells.values()] if c.problem]
    pin.problem = problems[0] if problems else ""
    before, after = _outcomes(baseline), _outcomes(run)
    pin.pinned_by = sorted(n for n in set(before) | set(after) if before.get(n) != after.get(n))
    for row in wanted:
        (pin.greened if after.get(row.nodeid) == "passed" else pin.still).append(row.nodeid)
    return pin
