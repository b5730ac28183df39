"""Running the section's columns: one executor task per column (each in a scratch copy of its tree,
with HOME and TMPDIR of its own inside the run folder), every runner's files in it, answers kept in
the cache by what they are a function of (the tree and its edits, the files or node ids, the
environment, the options and the code that runs and reads them)."""

from __future__ import annotations

import os
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.checks.fix_tests.runners import get_runner
from harness.checks.fix_tests.runners.base import Cell, RunContext
from harness.checks.tests_as_evidence.pytest_run import code_digests
from harness.columns.edits import EditProof
from harness.columns.trees import Column, identify
from harness.errors import UsageError
from harness.executors import Executor, Task, TaskResult, TreeSpec
from harness.git.picks import entries_at
from harness.git.repo import GitRepo
from harness.infra import treefiles, workarea, zygote
from harness.infra.cache import Cache, content_key, file_digest

# (runner name, the files it runs, or the node ids it reruns)
Plan = list[tuple[str, list[str], list[str] | None]]


@dataclass(frozen=True)
class Options:
    """What the cells of a column share (HEAD's for most; the source columns may have their own,
    ``run_columns``' ``by_column``): the interpreter, its key, the per-cell timeout, the project's
    setup commands, the fix's modules to prove, a version file and variables."""

    python: str
    env_key: str
    timeout: float
    setup: tuple[str, ...] = ()
    proof_paths: tuple[str, ...] = ()
    version_file: tuple[str, str] | None = None  # (path, text) written where the tree lacks it
    env: tuple[tuple[str, str], ...] = ()


@dataclass
class ColumnRun:
    column: str
    cells: dict[str, Cell] = field(default_factory=dict)  # runner → its cell
    key: str = ""
    cached: bool = False
    proofs: list[EditProof] = field(default_factory=list)
    problem: str = ""  # the column could not be made (an edit did not apply)


def present(repo: GitRepo, column: Column, plan: Plan) -> Plan:
    """The plan reduced to the files this column's tree has (taken by an edit, or at its ref)."""
    taken = {e.path for e in column.edits if e.kind == "checkout"}
    wanted = [(column.ref, f) for _, files, _ in plan for f in files if f not in taken]
    there = entries_at(repo, wanted) if wanted else {}
    out: Plan = []
    for name, files, nodeids in plan:
        kept = [f for f in files if f in taken or (column.ref, f) in there]
        if kept:
            out.append((name, kept, nodeids))
    return out


def _key(repo: GitRepo, column: Column, plan: Plan, opts: Options) -> str:
    code = code_digests("pytest_outcomes_plugin", __file__)
    runners = sorted({name for name, _, _ in plan})
    for name in runners:
        module = get_runner(name)
        code.append(file_digest(Path(str(getattr(module, "__file__", "")))))
    # The interpreter enters by its environment's key (its content), not its path: the same
    # environment built in another cache (another machine, a Ray worker) keys the same.
    what = {k: v for k, v in asdict(opts).items() if k != "python"}
    return content_key("tests-column", identify(repo, column).key, plan, what, code)


def run_columns(
    repo: GitRepo,
    columns: list[Column],
    plan: Plan,
    opts: Options,
    cache: Cache,
    executor: Executor,
    plans: dict[str, Plan] | None = None,
    *,
    by_column: dict[str, Options] | None = None,
) -> list[ColumnRun]:
    """Each column's cells, from the cache where kept, else one task per column, all at once
    (``plans``: a column's own plan in place of ``plan``, e.g. only the node ids it has;
    ``by_column``: a column's own options, e.g. the source's environment)."""
    runs: list[ColumnRun] = []
    tasks: list[Task[Any]] = []
    slots: list[int] = []
    for column in columns:
        mine = present(repo, column, (plans or {}).get(column.name, plan))
        run = ColumnRun(column.name)
        runs.append(run)
        if not mine:
            continue
        own = (by_column or {}).get(column.name, opts)
        run.key = _key(repo, column, mine, own)
        hit = cache.get(run.key)
        if hit is not None and _load(run, hit):
            run.cached = True
            continue
        slots.append(len(runs) - 1)
        tasks.append(
            Task(
                run.key,
                column_task,
                TreeSpec(repo, column, scratch=True),
                (column.name, mine, own),
                timeout=own.timeout * (len(mine) + 1) + 120,
                label=f"tests in {column.name}",
            )
        )
    if any(name == "pytest" for t in tasks for name, _, _ in t.args[1]):
        # the zygote's import beside the trees' writing (and the reruns' own)
        from harness.checks.fix_tests.runners.pytest_runner import start_env

        zygote.prestart(opts.python, start_env(dict(opts.env)), spare=True)
    results: list[TaskResult[Any]] = executor.run(tasks, jobs=len(tasks) or 1) if tasks else []
    for i, res in zip(slots, results, strict=True):
        run = runs[i]
        if res.status != "ok" or res.value is None:
            run.problem = res.detail or res.status
            continue
        done: ColumnRun = res.value
        run.cells, run.proofs, run.problem = done.cells, done.proofs, done.problem
        if not run.problem and not any(c.problem for c in run.cells.values()):
            cache.put(run.key, _dump(run))
    return runs


def _dump(run: ColumnRun) -> dict[str, Any]:
    return {
        "cells": {k: asdict(c) for k, c in run.cells.items()},
        "proofs": [asdict(p) for p in run.proofs],
    }


def _load(run: ColumnRun, hit: Any) -> bool:
    try:
        run.cells = {str(k): Cell(**v) for k, v in hit["cells"].items()}
        run.proofs = [EditProof(**p) for p in hit["proofs"]]
    except (TypeError, KeyError, AttributeError):
        return False
    return True


def column_task(tree: Any, name: str, plan: Plan, opts: Options) -> ColumnRun:
    """One column as an executor task: its tree opened (a scratch copy), then each runner once."""
    run = ColumnRun(name)
    if os.sep in opts.python and not os.access(opts.python, os.X_OK):
        # a remote worker without the driver's interpreter (an environment built in the driver's
        # cache): the column's problem, not the run's end
        run.problem = f"the interpreter {opts.python} is not on the machine that ran this column"
        return run
    try:
        with tree.open() as mat:
            run.proofs = list(mat.proofs)
            _version_file(mat.path, opts)
            home = workarea.mkdtemp("harness-cell-")
            try:
                for runner_name, files, nodeids in plan:
                    ctx = RunContext(
                        opts.python,
                        opts.timeout,
                        opts.setup,
                        opts.proof_paths,
                        home / runner_name,
                        dict(opts.env),
                    )
                    run.cells[runner_name] = get_runner(runner_name).run(
                        mat.path, files, nodeids, ctx
                    )
            finally:
                shutil.rmtree(home, ignore_errors=True)
    except UsageError as exc:  # an edit that does not apply (a link where a test file goes)
        run.problem = f"column not made: {exc}"
    return run


def _version_file(tree: Path, opts: Options) -> None:
    if opts.version_file is None:
        return
    rel, text = opts.version_file
    try:
        if not (tree / rel).exists() and (tree / rel).parent.is_dir():
            treefiles.write(tree, rel, text.encode())
    except treefiles.TreePathError:
        pass  # a link on the way: the tree imports without it, as its archive does
