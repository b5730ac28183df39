"""A mutmut 3.x sweep restricted to the functions a change touches, in a throwaway copy.

The head's tree is exported to a temporary directory; mutmut's configuration there names only the
changed files (``only_mutate``) and the mutant names of the changed functions (globs), so its
``mutants/`` folder and caches live and die in that directory. mutmut's own clean run and
forced-fail run must pass first, else nothing it reports is evidence.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.checks.tests_as_evidence.sweep_results import (
    Mutant,
    SweepResult,
    find_changed_functions,
    read_results,
)
from harness.checks.tests_as_evidence.sweep_shards import (
    ShardResult,
    generate_names,
    merge_shards,
    mutmut_config,
    split_names,
    sweep_shard,
    write_mutmut_config,
)
from harness.columns.trees import Column
from harness.envs import interpreter, proof
from harness.errors import HarnessError, UsageError
from harness.executors import Executor, Task, TaskResult, TreeSpec
from harness.executors.local import LocalExecutor
from harness.git.repo import GitRepo
from harness.git.tree import export_tree
from harness.infra import process, treefiles, workarea
from harness.infra.progress import phase
from harness.report.model import Code, Control, Finding, Section, Table


def run_sweep(
    repo: GitRepo,
    base: str,
    head: str,
    *,
    tests: Sequence[str] = (),
    marker: str | None = None,
    python: str | None = None,
    max_children: int | None = None,
    timeout: float = 1800,
    source_paths: Sequence[str] = (),
    executor: Executor | None = None,
    shards: int | None = None,
) -> SweepResult:
    """Export ``head``, configure mutmut for the changed functions, run it, read its verdicts.

    One mutmut run per shard, each an executor task in its own copy of the head's tree: with one
    shard (the default on ``local``) mutmut runs the changed functions' globs as always; with N, the
    mutant names (generated here by mutmut itself) are split into N lists and the shards' verdicts
    are merged as mutmut's own exit codes before they are read. ``python``: the interpreter with
    mutmut (default: the harness's own).
    """
    python = interpreter.resolve(python).python
    base_sha, head_sha = repo.resolve(base), repo.resolve(head)
    if shards is not None and shards < 1:
        raise UsageError(f"--shards must be at least 1, got {shards}")
    executor = executor or LocalExecutor()
    user_mutants = repo.work_tree / "mutants" if repo.work_tree else None
    existed = bool(user_mutants and user_mutants.exists())
    with workarea.temp_dir("harness-sweep-") as tmp:
        tree_dir = Path(tmp) / "tree"
        tree = export_tree(repo, head_sha, tree_dir)
        functions, skipped = find_changed_functions(repo, base_sha, head_sha, tree_dir)
        result = SweepResult(base, head, tree, functions, skipped)
        if not functions:
            return result
        result.config = mutmut_config(functions, tests, marker, source_paths)
        try:
            write_mutmut_config(tree_dir, result.config)
        except treefiles.TreePathError as exc:
            result.refused = f"mutmut not run: {exc}"
            return result
        globs = sorted({f"*.{f.mangled}__mutmut_*" for f in functions})
        n = shards or (1 if executor.name == "local" else executor.slots())
        lists = [globs] if n == 1 else split_names(generate_names(tree_dir, python, functions), n)
        spec = TreeSpec(repo, Column("head", head_sha), scratch=True)
        tasks = [
            Task(
                f"sweep:{tree}:{i}",
                sweep_shard,
                spec,
                (result.config, names, python, max_children, timeout),
                timeout=timeout + 120,
                label=f"mutmut shard {i + 1}/{len(lists)}",
            )
            for i, names in enumerate(lists)
        ]
        start = time.monotonic()
        with phase(f"mutmut over {len(functions)} changed function(s)"):
            done = executor.run(tasks, jobs=1 if executor.name == "local" else None)
        result.seconds = time.monotonic() - start
        _read_shards(result, done, tree_dir, python, None if n == 1 else lists)
    result.leaked = bool(user_mutants and user_mutants.exists() and not existed)
    if result.exit_code is None:
        raise UsageError(f"mutmut ran past {timeout:.0f}s (raise --timeout or narrow --tests)")
    return result


def _read_shards(
    result: SweepResult,
    done: Sequence[TaskResult[ShardResult]],
    tree_dir: Path,
    python: str,
    lists: list[list[str]] | None,
) -> None:
    """Fold the shards' runs into ``result``: their exit code (None when one timed out), output,
    the clean and forced-fail checks, and the mutants' verdicts merged into ``tree_dir``
    (``lists``: each shard's mutant names, None for one shard)."""
    parts = [r.value if r.status == "ok" and r.value is not None else None for r in done]
    if any(p is not None and p.exit_code is None for p in parts) or any(
        r.status == "timeout" for r in done
    ):
        result.exit_code = None
        return
    lost = [r.detail for r in done if r.status != "ok"]
    if lost:
        raise HarnessError(f"mutmut sweep: {lost[0]}")
    shard_parts = [p for p in parts if p is not None]
    result.exit_code = next((p.exit_code for p in shard_parts if p.exit_code), 0)
    out = "\n".join(p.output for p in shard_parts)
    result.output_tail = out[-3000:]
    result.clean_ok = all(
        "Failed to run clean test" not in p.output and "Running clean tests" in p.output
        for p in shard_parts
    )
    result.forced_fail_ok = all(
        "Unable to force test failures" not in p.output and "Running mutation testing" in p.output
        for p in shard_parts
    )
    result.mutmut_version = _mutmut_version(python)
    merge_shards(tree_dir, shard_parts, lists)
    result.mutants = read_results(tree_dir, result.functions)
    result.module_proofs = proof.merge(p.proofs for p in shard_parts)


def _mutmut_version(python: str) -> str:
    proc = process.run(
        [python, "-c", "import importlib.metadata as m; print(m.version('mutmut'))"],
        capture_output=True,
        text=True,
    )
    return proc.stdout.strip()


def check_mutmut(python: str | None = None) -> str:
    """The mutmut version the interpreter has (3.x), or a usage error saying how to get it."""
    python = interpreter.resolve(python).python
    version = _mutmut_version(python)
    if not version:
        raise UsageError(
            f"mutmut is not installed for {python}: pip install 'mutmut>=3,<4' "
            "(or the harness's [mutation] extra)"
        )
    if not version.startswith("3."):
        raise UsageError(f"mutmut {version} found for {python}; harness sweep needs mutmut 3.x")
    return version


# -- report ------------------------------------------------------------------------
def sweep_section(result: SweepResult) -> Section:
    """Per changed function: killed / survived / no tests, and survivors on changed lines."""
    shadowed = proof.shadowed(result.module_proofs)
    runs_ok = result.clean_ok and result.forced_fail_ok and result.exit_code == 0
    evidence = runs_ok and not shadowed
    survivors = [m for m in result.mutants if m.status == "survived" and m.on_changed_line]
    tables = [_function_table(result, runs_ok), *_extra_tables(result, survivors)]
    findings = _sweep_findings(result, runs_ok, shadowed, survivors)
    controls = _sweep_controls(result)
    total = len(result.mutants)
    killed = sum(1 for m in result.mutants if m.status == "killed")
    return Section(
        id="sweep",
        title="Mutation sweep (mutmut) of the changed functions",
        summary=(
            f"{len(result.functions)} changed function(s), {total} mutants, {killed} killed, "
            f"{len(survivors)} surviving on changed lines"
            + ("" if evidence or not result.functions else " — NOT EVIDENCE")
        ),
        tables=tables,
        findings=findings,
        controls=controls,
        not_verified=[
            "functions mutmut does not mutate (decorated, nested, module-level code) are not swept",
            "mutants are mutmut's operators only; a survivor off the changed lines is counted, not listed",
            "the project's pytest addopts apply inside mutmut's runs",
        ],
        data=_sweep_data(result),
    )


def _function_table(result: SweepResult, runs_ok: bool) -> Table:
    """Mutants per changed function, by status."""
    rows: list[list] = []
    for fn in result.functions:
        mine = [m for m in result.mutants if m.path == fn.path and m.function == fn.qualname]
        count = {
            s: sum(1 for m in mine if m.status == s) for s in ("killed", "survived", "no tests")
        }
        other = len(mine) - sum(count.values())
        on_changed = sum(1 for m in mine if m.status == "survived" and m.on_changed_line)
        rows.append(
            [
                Code(fn.path),
                Code(fn.qualname),
                _ranges(fn.lines),
                len(mine),
                count["killed"],
                count["survived"],
                count["no tests"],
                other,
                on_changed,
            ]
        )
    return Table(
        "mutmut sweep per changed function",
        [
            "file",
            "function",
            "changed lines",
            "mutants",
            "killed",
            "survived",
            "no tests",
            "other",
            "survivors on changed lines",
        ],
        rows,
        legend="other = timeout / suspicious / skipped / not checked; a function with 0 mutants has "
        "nothing mutmut can mutate (or is decorated)",
        control="mutmut's clean run and forced-fail run: "
        + ("passed" if runs_ok else "FAILED — not evidence"),
    )


def _extra_tables(result: SweepResult, survivors: list[Mutant]) -> list[Table]:
    """Survivors on changed lines; changed Python files not swept."""
    tables: list[Table] = []
    if survivors:
        tables.append(
            Table(
                "Surviving mutants on changed lines",
                ["mutant", "line", "mutation"],
                [[Code(m.name), m.line, Code(m.diff)] for m in survivors],
                legend="'-' original, '+' mutant",
                control="each line is checked against the head file's text",
                collapsed=len(survivors) > 10,
            )
        )
    if result.skipped_files:
        tables.append(
            Table(
                "Changed Python files not swept",
                ["file", "why"],
                [[Code(p), why] for p, why in result.skipped_files],
                control="from the same diff as the functions above",
            )
        )
    return tables


def _sweep_findings(
    result: SweepResult, runs_ok: bool, shadowed: dict[str, dict[str, Any]], survivors: list[Mutant]
) -> list[Finding]:
    findings: list[Finding] = []
    if result.refused:
        findings.append(
            Finding(
                "sweep-not-run",
                "P1",
                "the sweep did not run: the sweep is not evidence",
                result.refused,
                key=f"{result.tree}:refused",
            )
        )
    elif result.functions and not runs_ok:
        findings.append(
            Finding(
                "sweep-not-evidence",
                "P1",
                "mutmut's clean or forced-fail run did not pass: the sweep is not evidence",
                _last_lines(result.output_tail),
                key=f"{result.tree}",
            )
        )
    for rel, e in shadowed.items():
        findings.append(
            Finding(
                "sweep-shadowed",
                "P1",
                f"mutmut's tests imported {e.get('module')} from outside the tree: the sweep is not evidence",
                f"{rel} was imported from {e.get('file')}",
                key=f"{result.tree}:shadowed:{rel}",
            )
        )
    for m in survivors:
        findings.append(
            Finding(
                "mutant-survives",
                "P2",
                f"a mutant of {m.function} on changed line {m.path}:{m.line} survives the tests",
                m.diff,
                key=f"{m.path}:{m.function}:{m.diff}",
            )
        )
    for fn in result.functions:
        mine = [m for m in result.mutants if m.path == fn.path and m.function == fn.qualname]
        if mine and all(m.status == "no tests" for m in mine):
            findings.append(
                Finding(
                    "function-untested",
                    "P2",
                    f"no test in this selection runs {fn.path}:{fn.qualname}",
                    key=f"{fn.path}:{fn.qualname}",
                )
            )
    return findings


def _sweep_controls(result: SweepResult) -> list[Control]:
    return (
        [
            Control(
                "mutmut clean test run", "passed" if result.clean_ok else "failed", result.clean_ok
            ),
            Control(
                "mutmut forced-fail run (liveness)",
                "passed" if result.forced_fail_ok else "failed",
                result.forced_fail_ok,
            ),
            _proof_control(result.module_proofs),
            Control(
                "mutants/ stayed in the throwaway copy",
                "user's tree has no new mutants/ folder" if not result.leaked else "LEAKED",
                not result.leaked,
            ),
        ]
        if result.functions
        else [Control("changed functions", "none found: nothing to sweep", None)]
    )


def _sweep_data(result: SweepResult) -> dict[str, object]:
    return {
        "base": result.base,
        "head": result.head,
        "tree": result.tree,
        "exit_code": result.exit_code,
        "mutmut": result.mutmut_version,
        "module_proofs": result.module_proofs,
        "config": result.config,
        "functions": [
            {"path": f.path, "function": f.qualname, "lines": f.lines} for f in result.functions
        ],
        "mutants": [
            {
                "name": m.name,
                "path": m.path,
                "function": m.function,
                "status": m.status,
                "line": m.line,
                "on_changed_line": m.on_changed_line,
            }
            for m in result.mutants
        ],
    }


def _proof_control(proofs: dict[str, dict[str, Any]]) -> Control:
    """Where mutmut's pytest imported each changed file's module from (the tree's mutated copy, or
    an installed copy that shadows it)."""
    if not proofs:
        return Control("module path proof", "not recorded: mutmut ran no pytest", None)
    shown = "; ".join(
        f"{rel}: {e.get('status')}"
        + (
            f" ({e.get('module')} from {e.get('file')})"
            if e.get("status") != proof.NOT_IMPORTED
            else ""
        )
        for rel, e in proofs.items()
    )
    return Control("module path proof", shown, proof.held(proofs))


def _ranges(lines: Sequence[int]) -> str:
    groups: list[list[int]] = []
    for ln in sorted(lines):
        if groups and groups[-1][1] == ln - 1:
            groups[-1][1] = ln
        else:
            groups.append([ln, ln])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in groups)


def _last_lines(text: str, n: int = 5) -> str:
    return "\n".join([ln for ln in text.splitlines() if ln.strip()][-n:])
