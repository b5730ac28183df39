"""One probe column as an executor task: every pending (probe, rows) of the column, in one tree.

The body runs wherever the executor puts it. It reads nothing of the user's repository: the tree
comes from its ``TreeSource`` (materialized here, or unpacked from shipped bytes) and, on a remote
worker, probe files outside the tree from the shipped ``InputFiles``. Cache reads and writes stay
on the driver (harness/probes/engine.py).
"""

from __future__ import annotations

import dataclasses
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.columns.edits import CONTROL_BROKEN, EditProof
from harness.envs.fingerprint import runtime_fingerprint
from harness.errors import UsageError
from harness.executors.trees import InputFiles, worker_dir
from harness.infra import workarea
from harness.probes.kinds import CellResult, KindContext, get_kind


@dataclass
class ColumnJob:
    """A probe and the indexes of its rows still to run in this column (the others came from the cache)."""

    probe: Any  # harness.inputs.scenario.ProbeDef
    idx: list[int]
    inputs: InputFiles | None = None  # shipped probe files (remote executors only)


@dataclass
class ColumnOutcome:
    """Per probe id, (row index, cell) for each row run; the column's edit proofs (None: no tree)."""

    cells: dict[str, list[tuple[int, CellResult]]] = field(default_factory=dict)
    proofs: list[EditProof] | None = None
    control_error: str = ""


def shippable(probe: Any) -> Any:
    """The probe without its located YAML fields (not needed to run; kept out of the payload)."""
    return dataclasses.replace(probe, fields=None)


def run_column(
    tree: Any, column: Any, jobs: list[ColumnJob], python: str, interp: str
) -> ColumnOutcome:
    """Run every job in ``tree``; a job that writes into the tree gives the next one a fresh tree.
    ``interp``: the driver's ``runtime_fingerprint`` (checked on remote workers only)."""
    out = ColumnOutcome()
    work = worker_dir("harness-column-") if tree.remote else None  # shipped probe files go here
    try:
        if tree.remote:
            mismatch = runtime_fingerprint(python) != interp
            jobs = [_placed(j, work / f"inputs-{n}") for n, j in enumerate(jobs)]  # type: ignore[operator]
        else:
            mismatch = False
        repo = tree.spec.repo if hasattr(tree, "spec") else None
        pending = list(jobs)
        first = True
        while first or pending:
            first = False
            try:
                with tree.open() as mat:
                    while pending:
                        job = pending.pop(0)
                        out.cells[job.probe.id] = list(
                            zip(
                                job.idx,
                                _run_job(job, column, mat, python, repo, mismatch, tree.remote),
                                strict=False,
                            )
                        )
                        if mat.changes():
                            break  # written into: the next probe gets a fresh tree
            except UsageError as exc:
                if column.role != "control":
                    raise
                # A control whose edit no longer applies (e.g. the head already carries the fix) is
                # the outcome of its cells, not a failed run.
                out.control_error = f"{CONTROL_BROKEN}: {exc}"
                return out
            out.proofs = mat.proofs
    finally:
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
    return out


def _placed(job: ColumnJob, dest: Path) -> ColumnJob:
    if job.inputs is None:
        return job
    base = job.inputs.place(dest, job.probe.base_dir)
    return ColumnJob(dataclasses.replace(job.probe, base_dir=base), job.idx, None)


def _run_job(
    job: ColumnJob, column: Any, mat: Any, python: str, repo: Any, mismatch: bool, remote: bool
) -> list[CellResult]:
    probe = job.probe
    if not job.idx:
        return []
    if mismatch:
        return [
            CellResult(
                None,
                "error",
                f"this worker's interpreter {python} differs from the driver's "
                "(version or installed distributions): not run",
                of_worker=True,
            )
            for _ in job.idx
        ]
    # local: a temp dir as always; remote: named by pid, so a killed worker's is removed by the next task
    scratch = worker_dir("harness-probe-") if remote else workarea.mkdtemp("harness-probe-")
    try:
        ctx = KindContext(
            probe, [probe.rows[i] for i in job.idx], column, mat, python, repo, scratch
        )
        try:
            return get_kind(probe.kind).run(ctx)
        except UsageError:
            raise
        except Exception as exc:  # a broken probe kind fails its cells, not the run
            return [
                CellResult(
                    None,
                    "error",
                    f"probe kind {probe.kind} failed: {type(exc).__name__}: {exc}",
                    of_worker=remote,  # on a worker: its files, its machine; here: the probe's
                )
                for _ in job.idx
            ]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
