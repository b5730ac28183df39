"""The tests section end to end: which tests (files) → the environment (envs) → the columns
(columns) → their runs (cells) → one more run of what differed (flaky) → verdicts → gap pinning
→ the section."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from harness.checks.fix_tests.cells import ColumnRun, Options, Plan, run_columns
from harness.checks.fix_tests.columns import columns_for
from harness.checks.fix_tests.environments import column_options
from harness.checks.fix_tests.files import TestFile, order_sources, select_tests
from harness.checks.fix_tests.gaps import MAX_GAPS, PinRuns, pin_runs, read_pins
from harness.checks.fix_tests.hunks import fix_hunks, hunk_columns
from harness.checks.fix_tests.lanes import test_lanes
from harness.checks.fix_tests.result import TestsRun
from harness.checks.fix_tests.runners import get_runner
from harness.checks.fix_tests.section import tests_section
from harness.checks.fix_tests.strings import removed_strings
from harness.checks.fix_tests.verdicts import (
    FAILING,
    Row,
    build_rows,
    defined_names,
    judge,
    mark_flaky,
    mark_unloaded,
    rerun_candidates,
)
from harness.checks.result import Checked, FidelityResult
from harness.columns.trees import Column
from harness.envs import proof
from harness.envs.spec import read_spec, requirement_name
from harness.executors import Executor
from harness.executors.local import LocalExecutor
from harness.git.evidence import ls_tree
from harness.git.history import merged_with
from harness.git.patch import diff_many
from harness.git.repo import GitRepo
from harness.infra import zygote
from harness.infra.cache import Cache
from harness.infra.futures import ThreadPoolExecutor
from harness.infra.progress import phase

MAX_SCOPE_FILES = 200  # a suite this small runs whole to look for a missing commit's pins


@dataclass(frozen=True)
class TestsOptions:
    python: str | None = None  # --python: an environment the user has
    setup: tuple[str, ...] = ()  # --test-setup: a build step run in each tree
    timeout: float = 600.0  # --test-timeout: per run of a column
    no_cache: bool = False
    constraints: tuple[str, ...] = ()  # --test-constraints: pins the environments are built under


def tests_check(
    repo: GitRepo,
    base: str,
    head: str,
    fidelity: FidelityResult,
    options: TestsOptions = TestsOptions(),
    executor: Executor | None = None,
    *,
    source: str | None = None,
) -> Checked[TestsRun]:
    """``source``: the branch the picks came from; a source commit that a merge brought in (a PR
    merged with a merge commit) makes the merge's other commits candidates for gap pinning."""
    base, head = repo.resolve(base), repo.resolve(head)
    sources = order_sources(repo, [s for _, srcs in fidelity.sources for s in srcs])
    with phase("tests: which tests the picks and their sources change"):
        sel = select_tests(repo, base, head, fidelity.picks, sources, fidelity.renamed)
    run = TestsRun(
        base,
        head,
        sources,
        sel,
        no_source=sources.newest is None,
        same_files=frozenset(fidelity.same_files),
    )
    if sel.files:
        siblings = _pr_siblings(repo, source, sources.commits) if source else []
        _run(repo, run, fidelity, options, executor or LocalExecutor(), siblings)
    return Checked(run, tests_section(run))


def _run(
    repo: GitRepo,
    run: TestsRun,
    fidelity: FidelityResult,
    options: TestsOptions,
    executor: Executor,
    siblings: Sequence[str] = (),
) -> None:
    got = column_options(
        repo, run, options.python, options.timeout, options.setup, options.constraints
    )
    if got is None:
        return
    opts, by_column = got
    cache = Cache(namespace="tests", enabled=not options.no_cache)
    columns = columns_for(run.base, run.head, run.sources, run.selection, _differ(repo, run))
    plan = _plan(run.selection.files)
    head_column = next((c for c in columns if c.name == "head_source_tests"), columns[1])
    candidates = list(dict.fromkeys([*fidelity.missing_commits, *fidelity.followups, *siblings]))
    pytest_files = [f.path for f in run.selection.files if f.runner == "pytest"]
    # The missing commits, the hunks and the lanes' collection need no outcome of the columns:
    # they run beside them (the executor shares the machine); the reruns follow the first pass.
    # pytest imported once for the columns, hunks, pins and lanes, and once for the reruns
    with zygote.forking() as forks, ThreadPoolExecutor(4) as pool:
        pins = pool.submit(
            _pin_runs, repo, run, head_column, candidates, plan, opts, cache, executor
        )
        # the hunks are judged by the pick's own tests, as HEAD has them
        hunks = pool.submit(_hunk_runs, repo, run, columns[1], plan, opts, cache, executor)
        lanes = (
            pool.submit(
                test_lanes,
                repo,
                run.head,
                pytest_files,
                opts.python,
                opts.timeout,
                opts.setup,
                options.no_cache,
                executor,
            )
            if pytest_files
            else None
        )
        with phase(f"tests: {len(run.selection.files)} file(s) in {len(columns)} columns"):
            run.runs = run_columns(repo, columns, plan, opts, cache, executor, by_column=by_column)
        _shadowed_is_not_evidence(run.runs)
        run.rows = build_rows(run.selection.files, run.runs, _spans(repo, run.selection.files))
        mark_unloaded(run.rows, run.selection.source_changed, _source_defines(repo, run))
        differing = rerun_candidates(run.rows)
        with phase("tests: reruns, missing commits, hunks and lanes"):
            forks.fresh()  # a rerun looking for a flaky outcome: an interpreter of its own
            run.reruns = _rerun(repo, columns, run.runs, differing, opts, cache, executor)
            mark_flaky(differing, run.reruns)
            run.gaps = read_pins(pins.result(), run.rows)
            _hunk_failing(run, columns[1].name, hunks.result())
            run.lanes = lanes.result() if lanes is not None else None
    for row in run.rows:
        row.verdict = judge(row)
    source = run.sources.newest
    run.strings, run.strings_left_out = removed_strings(
        repo, run.base, run.head, source, run.sources.parent
    )


def _source_defines(repo: GitRepo, run: TestsRun) -> set[str] | None:
    """The names the sources' added lines define (a fixture the fix adds), read only where a
    source test's setup lacked a fixture at HEAD; None where the sources change what is installed
    (a plugin they add brings fixtures no line defines)."""
    if not any("head_source_tests" in r.lacks for r in run.rows):
        return set()
    if any(_PACKAGING.search(p) for p in run.selection.source_changed) and _adds_packages(
        repo, run
    ):
        return None
    pairs = []
    for c in run.sources.commits:  # a merge source: its PR's change, against its first parent
        parents = repo.commit(c).parents
        pairs.append((c, parents[0] if len(parents) > 1 else None))
    patches = diff_many(repo, pairs, context=False)
    return defined_names(f.added for p in patches for f in p.files)


def _adds_packages(repo: GitRepo, run: TestsRun) -> bool:
    """Whether the sources' packaging names a distribution their first parent's does not (a
    version bump adds none)."""
    if run.sources.parent is None or run.sources.newest is None:
        return True
    parent = run.sources.parent
    before = read_spec(
        lambda p: repo.blob_at(parent, p),
        sorted(e.path for e in ls_tree(repo, parent) if e.type == "blob"),
    )
    newest = run.sources.newest
    after = read_spec(lambda p: repo.blob_at(newest, p), run.selection.source_listing)
    return bool(
        {requirement_name(r) for r in after.requirements}
        - {requirement_name(r) for r in before.requirements}
    )


# What says which packages a tree's tests run with (envs/spec.py reads these).
_PACKAGING = re.compile(
    r"(^|/)(pyproject\.toml|setup\.cfg|setup\.py|tox\.ini|[^/]*requirements[^/]*\.(txt|in))$"
)


def _pr_siblings(repo: GitRepo, source: str, sources: Sequence[str]) -> list[str]:
    """The commits a PR merged with a merge commit brought beside a source commit, that no pick's
    source is: the rest of the PR, which the pick may lack."""
    taken = set(sources)
    brought = merged_with(repo, repo.resolve(source), list(sources))
    return [c for s in sources for c in brought.get(s, []) if c not in taken]


def _shadowed_is_not_evidence(runs: Sequence[ColumnRun]) -> None:
    """A cell whose fix module was imported from outside its column's tree (an installed copy,
    an editable install's import hook) tested that copy: its outcomes are no evidence."""
    for run in runs:
        for cell in run.cells.values():
            bad = proof.outside(dict(sorted(cell.proofs.items())))
            if bad:
                cell.problem = (
                    "not evidence: the module under test was imported from outside the "
                    "column's tree (" + "; ".join(bad[:3]) + ")"
                )
                cell.outcomes = {}


def _rerun(
    repo: GitRepo,
    columns: Sequence[Column],
    runs: Sequence[ColumnRun],
    differing: Sequence[Row],
    opts: Options,
    cache: Cache,
    executor: Executor,
) -> list[ColumnRun]:
    """The rows that differ across columns, once more in the columns a verdict is read from, each
    column asked only for the node ids it ran (another version of a file may lack some)."""
    if not differing:
        return []
    deciding = [c for c in columns if c.name in ("without_fix", "head", "head_source_tests")]
    had = {r.column: {n for cell in r.cells.values() for n in cell.outcomes} for r in runs}
    plans: dict[str, Plan] = {}
    for column in deciding:
        mine = [r for r in differing if r.nodeid in had.get(column.name, set())]
        plans[column.name] = [
            (
                name,
                sorted({r.file for r in mine if r.runner == name}),
                [r.nodeid for r in mine if r.runner == name],
            )
            for name in sorted({r.runner for r in mine})
        ]
    return run_columns(repo, deciding, [], opts, cache, executor, plans)


def _pin_runs(
    repo: GitRepo,
    run: TestsRun,
    head_column: Column,
    candidates: Sequence[str],
    plan: Plan,
    opts: Options,
    cache: Cache,
    executor: Executor,
) -> PinRuns | None:
    """Each commit the pick lacks, applied to HEAD, over the pin scope and the section's files."""
    if not candidates:
        return None
    scope = _pin_scope(repo, run)
    run.pin_scope = scope[0]
    run.pins_left_out = max(0, len(candidates) - MAX_GAPS)
    return pin_runs(
        repo,
        head_column,
        [(c, repo.commit(c).subject) for c in candidates],
        scope,
        plan,
        opts,
        cache,
        executor,
    )


def _hunk_runs(
    repo: GitRepo,
    run: TestsRun,
    head_column: Column,
    plan: Plan,
    opts: Options,
    cache: Cache,
    executor: Executor,
) -> list[ColumnRun]:
    """Each code hunk of the fix reverted alone on HEAD, the section's files run on each."""
    run.hunks, run.hunks_left_out = fix_hunks(repo, run.base, run.head)
    if not run.hunks:
        return []
    return run_columns(repo, hunk_columns(head_column, run.hunks), plan, opts, cache, executor)


def _hunk_failing(run: TestsRun, head: str, runs: Sequence[ColumnRun]) -> None:
    """The tests passing at HEAD that fail with each hunk reverted."""
    passing = {r.nodeid for r in run.rows if r.outcomes.get(head) == "passed"}
    for hunk, col in zip(run.hunks, runs, strict=True):
        hunk.problem = col.problem or next((c.problem for c in col.cells.values() if c.problem), "")
        if hunk.problem:
            continue
        outcomes = {n: o for c in col.cells.values() for n, o in c.outcomes.items()}
        erred = {f for c in col.cells.values() for f in c.errors}
        hunk.failing = sorted(
            n
            for n in passing
            if outcomes.get(n) in FAILING or (n not in outcomes and n.split("::")[0] in erred)
        )


def _pin_scope(repo: GitRepo, run: TestsRun) -> tuple[str, Plan]:
    """Where a missing commit's pins are looked for: every test file the runners discover at HEAD
    when there are at most MAX_SCOPE_FILES, else the section's own files."""
    listing = run.selection.head_listing
    plan: Plan = []
    total = 0
    for name in sorted({f.runner for f in run.selection.files}):
        runner = get_runner(name)
        config = runner.configure(lambda p: repo.blob_at(run.head, p), listing)
        files = [p for p in listing if runner.is_test_file(p, config)]
        total += len(files)
        plan.append((name, files, None))
    if total <= MAX_SCOPE_FILES:
        return f"the whole suite ({total} test file(s) at HEAD)", plan
    return (
        f"the tests section's files (the suite has {total} test files, over {MAX_SCOPE_FILES})",
        _plan(run.selection.files),
    )


def _differ(repo: GitRepo, run: TestsRun) -> set[str]:
    """Test files both sides changed whose source version differs from HEAD's."""
    both = [f.path for f in run.selection.files if f.origin == "both"]
    if not both or not run.sources.newest:
        return set()
    ids = repo.batch_check(
        [f"{c}:{p}" for p in both for c in (run.head, run.sources.newest)], "%(objectname)"
    )
    return {p for i, p in enumerate(both) if ids[2 * i] != ids[2 * i + 1]}


def _plan(files: Sequence[TestFile]) -> Plan:
    by_runner: dict[str, list[str]] = {}
    for f in files:
        by_runner.setdefault(f.runner, []).append(f.path)
    return [(name, paths, None) for name, paths in sorted(by_runner.items())]


def _spans(repo: GitRepo, files: Sequence[TestFile]) -> dict[str, dict[str, tuple[int, int]]]:
    blobs = repo.read_blobs([f"{f.spans_at}:{f.path}" for f in files], limit=1 << 20)
    return {
        f.path: get_runner(f.runner).test_spans(f.path, data or b"")
        for f, data in zip(files, blobs, strict=True)
    }
