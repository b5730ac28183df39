"""Run a scenario's probes over rows × columns: cache lookups here, then one executor task per
column that has cells to measure (harness/probes/column_task.py), in parallel."""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from harness.columns.edits import EditProof
from harness.columns.trees import Column, ColumnIdentity, identify, user_blob
from harness.envs import interpreter
from harness.envs.fingerprint import interpreter_fingerprint, runtime_fingerprint
from harness.errors import UsageError
from harness.executors import Executor, Resources, Task, TaskResult, TreeSpec
from harness.executors.local import LocalExecutor
from harness.executors.trees import InputFiles
from harness.git import tree as tree_module
from harness.git.repo import GitRepo
from harness.infra import workarea
from harness.infra.cache import Cache, content_key, file_digest
from harness.infra.resources import PROBES_DIR
from harness.inputs.yamlpath import MAX_BYTES
from harness.probes import kinds as kinds_pkg
from harness.probes.column_task import (
    ColumnJob,
    ColumnOutcome,
    run_column,
    shippable,
)
from harness.probes.kinds import CellResult, KeyColumn, get_kind

ENGINE_VERSION = "2"


@dataclass
class ColumnRun:
    """A column as it was run: its identity and the proofs of its edits."""

    column: Column
    ident: ColumnIdentity
    proofs: list[EditProof] = field(default_factory=list)


@dataclass
class ProbeRun:
    """Every cell of every selected probe: ``cells[(probe id, column name)]`` is one result per row."""

    columns: list[ColumnRun]
    cells: dict[tuple[str, str], list[CellResult]]
    python: str
    from_cache: int = 0
    ran: int = 0
    seconds: float = 0.0
    # per (probe id, column name), one per row: (cache key, "cache" when served from it, else "run")
    provenance: dict[tuple[str, str], list[tuple[str, str]]] = field(default_factory=dict)


def definition_hash(probe: Any) -> str:
    """Content of the probe definition: kind and its version, keys, timeout, probe files, the runners
    and the code of every kind (kinds build on each other, e.g. sglang_params on python)."""
    kmod = get_kind(probe.kind)
    inputs = [file_digest(p) for p in (kmod.inputs(probe) if hasattr(kmod, "inputs") else [])]
    code = [file_digest(PROBES_DIR / n) for n in ("_runner.py", "extract_runner.py")]
    code.append(file_digest(Path(tree_module.__file__)))  # how its trees are written
    code += [file_digest(p) for p in sorted(Path(kinds_pkg.__file__ or "").parent.glob("*.py"))]
    return content_key(
        ENGINE_VERSION,
        probe.kind,
        getattr(kmod, "VERSION", "1"),
        probe.spec,
        probe.timeout,
        inputs,
        code,
    )


def cell_keys(
    probe: Any, column: KeyColumn, ident: ColumnIdentity, definition: str, interp: str
) -> list[str]:
    """One cache key per row, from everything the row's result depends on in this column."""
    kmod = get_kind(probe.kind)
    extra = kmod.key_parts(probe, column) if hasattr(kmod, "key_parts") else None
    return [
        content_key(definition, ident.tree_sha, ident.edits, interp, extra, row)
        for row in probe.rows
    ]


def _cached(cache: Cache, probe: Any, key: str, remote: bool = False) -> CellResult | None:
    """A cached cell, when there is one its kind still accepts (see the kinds' ``reuse``).

    ``reuse`` judges an engine cell against the engine store of the machine that would measure it
    again; under a remote executor that is a worker's, which the driver cannot see. There a cell
    that reached an engine (it records the environment's fingerprint) is served by its key alone:
    the key already holds the engine version, the runtime, the column and the interpreter."""
    hit = cache.get(key)
    if hit is None:
        return None
    cell = CellResult.from_json(hit)
    if remote and cell.used.get("fingerprint"):
        return cell
    kmod = get_kind(probe.kind)
    if hasattr(kmod, "reuse") and not kmod.reuse(probe, cell):
        cache.reject()
        return None
    return cell


def run_probes(
    repo: GitRepo,
    scenario: Any,
    probes: list[Any],
    *,
    python: str | None = None,
    jobs: int | None = None,
    cache: Cache | None = None,
    workroot: Path | None = None,
    progress: Any = None,
    executor: Executor | None = None,
) -> ProbeRun:
    """Fill every (probe, column, row) cell, from the cache where the content key matches."""
    started = time.monotonic()
    python = interpreter.resolve(python).python
    if shutil.which(python) is None and not Path(python).is_file():
        raise UsageError(f"--python {python}: no such interpreter")
    cache = cache or Cache()
    scenario.check_refs(repo)
    columns = [ColumnRun(c, identify(repo, c)) for c in scenario.columns]
    run = ProbeRun(columns, {}, python)
    executor = executor or LocalExecutor()
    remote = executor.name != "local"
    cells, keys, todo = _from_cache(repo, columns, probes, python, cache, remote, run)
    needing = [cr for cr in columns if cr.column.name in todo]
    if jobs is not None and jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {jobs}")
    workers = max(1, min(jobs or len(needing) or 1, len(needing) or 1))
    if progress:
        progress(
            f"{sum(len(v) for v in cells.values())} cells, {run.from_cache} from cache; "
            f"{len(needing)} column(s) to run with {workers} worker(s) ({executor.name})"
        )
    tasks = _column_tasks(repo, needing, todo, cells, python, workroot, remote)
    for cr, task, res in zip(
        needing, tasks, executor.run(tasks, jobs=jobs if remote else workers), strict=False
    ):
        _apply(repo, cr, task.args[1], res, cells, keys, cache, run)
    run.cells = {
        k: [c or CellResult(None, "error", "not run") for c in v] for k, v in cells.items()
    }
    run.seconds = time.monotonic() - started
    return run


_Cells = dict[tuple[str, str], list[CellResult | None]]


def _from_cache(
    repo: GitRepo,
    columns: list[ColumnRun],
    probes: list[Any],
    python: str,
    cache: Cache,
    remote: bool,
    run: ProbeRun,
) -> tuple[_Cells, dict[tuple[str, str], list[str]], dict[str, list[Any]]]:
    """Each (probe, column)'s cells from the cache (None where not cached) and their keys, and per
    column the probes it must still run (a column whose proofs are not cached is listed too)."""
    interp = interpreter_fingerprint(python, cache)
    defs = {p.id: definition_hash(p) for p in probes}
    cells: _Cells = {}
    keys: dict[tuple[str, str], list[str]] = {}
    todo: dict[str, list[Any]] = {}
    for cr in columns:
        for p in probes:
            if p.columns is not None and cr.column.name not in p.columns:
                continue
            kc = KeyColumn(
                cr.column.name, cr.ident.commit_sha, cr.ident.tree_sha, cr.ident.edits, repo, python
            )
            ks = cell_keys(p, kc, cr.ident, defs[p.id], interp)
            hits = [_cached(cache, p, k, remote) for k in ks]
            cells[(p.id, cr.column.name)] = list(hits)
            keys[(p.id, cr.column.name)] = ks
            run.provenance[(p.id, cr.column.name)] = [
                (k, "cache" if h is not None else "run") for k, h in zip(ks, hits, strict=False)
            ]
            run.from_cache += sum(h is not None for h in hits)
            if any(h is None for h in hits):
                todo.setdefault(cr.column.name, []).append(p)
        if not _cached_proofs(repo, cache, cr):
            todo.setdefault(cr.column.name, [])
    return cells, keys, todo


def _cached_proofs(repo: GitRepo, cache: Cache, cr: ColumnRun) -> bool:
    """Set the column's edit proofs from the cache (the user's copies read now); False when none."""
    cached_proofs = cache.get(content_key("column-proofs", ENGINE_VERSION, cr.ident.key))
    if cached_proofs is None:
        return False
    cr.proofs = [EditProof(**d) for d in cached_proofs]
    for pr in cr.proofs:
        pr.blob_user_before = pr.blob_user_after = user_blob(repo, cr.ident.commit_sha, pr.path)
    return True


def _column_tasks(
    repo: GitRepo,
    needing: list[ColumnRun],
    todo: dict[str, list[Any]],
    cells: _Cells,
    python: str,
    workroot: Path | None,
    remote: bool,
) -> list[Task[ColumnOutcome]]:
    """One task per column that has cells to run: its probes with the rows not cached (each probe's
    input files shipped with it under a remote executor)."""
    inputs: dict[str, InputFiles] = {}
    tasks: list[Task[ColumnOutcome]] = []
    for cr in needing:
        col_jobs = []
        for p in todo[cr.column.name]:
            idx = [i for i, c in enumerate(cells[(p.id, cr.column.name)]) if c is None]
            if remote and p.id not in inputs:
                kmod = get_kind(p.kind)
                inputs[p.id] = InputFiles.of(
                    p.base_dir, list(kmod.inputs(p)) if hasattr(kmod, "inputs") else []
                )
            col_jobs.append(ColumnJob(shippable(p) if remote else p, idx, inputs.get(p.id)))
        tasks.append(
            Task(
                cr.ident.key,
                run_column,
                TreeSpec(repo, cr.column, workroot, cr.ident.key),
                (cr.column, col_jobs, python, runtime_fingerprint(python) if remote else ""),
                column_resources(repo, python, cr, col_jobs),
                column_timeout(col_jobs),
                cr.column.name,
            )
        )
    return tasks


def column_timeout(jobs: list[ColumnJob]) -> float:
    """A column task's wall-clock bound (remote executors): generous over the rows' own timeouts,
    whose expiry is already a cell; engine kinds get time to build their environment."""
    total = 120.0
    for j in jobs:
        engine = "engine" in j.probe.spec or "engine_pin" in j.probe.spec
        total += len(j.idx) * 2 * j.probe.timeout + (1800 if engine else 0)
    return total


def column_resources(repo: GitRepo, python: str, cr: ColumnRun, jobs: list[ColumnJob]) -> Resources:
    """What a column asks of a remote worker: a ``sglang-<version>`` label per engine version its
    probes resolve to before any tree is written, and a GPU for the gpu runtime."""
    labels: set[str] = set()
    gpus = 0
    kc = KeyColumn(
        cr.column.name, cr.ident.commit_sha, cr.ident.tree_sha, cr.ident.edits, repo, python
    )
    for j in jobs:
        kmod = get_kind(j.probe.kind)
        if not hasattr(kmod, "key_parts") or not (
            "engine" in j.probe.spec or "engine_pin" in j.probe.spec
        ):
            continue
        from harness.engines.remote import (
            engine_label,
        )  # engine probes only: keeps engines/ unloaded

        parts = kmod.key_parts(j.probe, kc)
        engine = parts.get("engine") if isinstance(parts, dict) else None
        if isinstance(engine, str) and "==" in engine:
            labels.add(engine_label(engine.split("==", 1)[1], engine.split("==", 1)[0]))
        elif "engine_pin" in j.probe.spec:
            version = pinned_version(repo, cr, j.probe.spec)
            if version is not None:
                labels.add(engine_label(version))
        if isinstance(parts, dict) and parts.get("runtime") == "gpu":
            gpus = 1
    return Resources(gpus, tuple((label, 1.0) for label in sorted(labels)))


def pinned_version(repo: GitRepo, cr: ColumnRun, spec: dict[str, Any]) -> str | None:
    """The engine version an ``engine_pin`` column runs, read on the driver from the pin file at
    the column's commit the way the kind reads it in the tree; None when an edit of the column may
    change that file (the edited tree alone knows) or the file names no version."""
    rel = str(spec["engine_pin"]["file"])
    if any(e.path in (None, rel) for e in cr.column.edits):
        return None
    parts = PurePosixPath(rel).parts
    if not parts or PurePosixPath(rel).is_absolute() or ".." in parts:
        return None
    data = repo.read_blobs([f"{cr.ident.commit_sha}:{rel}"], limit=MAX_BYTES)[0]
    if data is None or len(data) > MAX_BYTES:  # absent, or too large to be read (as in the kind)
        return None
    from harness.probes.kinds.sglang_params import engine_version  # loads engines/: pins only

    with workarea.temp_dir("harness-pin-") as tmp:  # inside the run folder (#11)
        path = Path(tmp, *parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return engine_version(spec, cr.column.name, Path(tmp))[0]


def _canonical(cell: CellResult) -> CellResult:
    """The cell as the cache gives it back (mappings in key order), so a measured cell and the same
    cell served from the cache on the next run render to the same bytes."""
    try:
        return CellResult.from_json(json.loads(json.dumps(cell.to_json(), sort_keys=True)))
    except (TypeError, ValueError):  # not JSON (never cached either): as measured
        return cell


def _apply(
    repo: GitRepo,
    cr: ColumnRun,
    jobs: list[ColumnJob],
    res: TaskResult[ColumnOutcome],
    cells: dict[tuple[str, str], list[CellResult | None]],
    keys: dict[tuple[str, str], list[str]],
    cache: Cache,
    run: ProbeRun,
) -> None:
    """Fold a column task's result into the run; cache what may be cached (here, on the driver)."""
    if res.status != "ok" or res.value is None:
        # past its timeout, or its worker lost past the retry bound: the outcome of its cells (not cached)
        status = "timeout" if res.status == "timeout" else "crash"
        for j in jobs:
            slot = cells[(j.probe.id, cr.column.name)]
            for i in j.idx:
                slot[i] = CellResult(None, status, res.detail)
        return
    out = res.value
    if out.control_error:
        for j in jobs:
            slot = cells[(j.probe.id, cr.column.name)]
            for i, c in enumerate(slot):
                if c is None:
                    slot[i] = CellResult(None, "error", out.control_error)
        return
    for pid, results in out.cells.items():
        slot = cells[(pid, cr.column.name)]
        for i, measured in results:
            cell = slot[i] = _canonical(measured)
            run.ran += 1
            if measured.of_worker:  # the worker's outcome, not the probe's
                continue
            if cell.status in ("ok", "error") and not cell.detail.startswith("wrote into the tree"):
                cache.put(keys[(pid, cr.column.name)][i], cell.to_json())
    if out.proofs is not None:
        cr.proofs = out.proofs
        for pr in cr.proofs:
            if (
                pr.blob_user_after is None
            ):  # packed trees: the user's copy is read here, after the run
                pr.blob_user_after = user_blob(repo, cr.ident.commit_sha, pr.path)
        cache.put(
            content_key("column-proofs", ENGINE_VERSION, cr.ident.key),
            [{**asdict(p), "blob_user_before": None, "blob_user_after": None} for p in cr.proofs],
        )
