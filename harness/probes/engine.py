"""Run a scenario's probes over rows × columns: cache lookups, one worker per column, in parallel."""

from __future__ import annotations

import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness import workarea
from harness.cache import Cache, content_key, file_digest, interpreter_fingerprint
from harness.columns import Column, ColumnIdentity, identify, materialize, user_blob
from harness.edits import EditProof
from harness.errors import UsageError
from harness.git.repo import GitRepo
from harness.probes import kinds as kinds_pkg
from harness.probes.kinds import CellResult, KeyColumn, KindContext, get_kind
from harness.probes.subproc import PROBES_DIR, STOP

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
    code += [file_digest(p) for p in sorted(Path(kinds_pkg.__file__ or "").parent.glob("*.py"))]
    return content_key(ENGINE_VERSION, probe.kind, getattr(kmod, "VERSION", "1"), probe.spec, probe.timeout,
                       inputs, code)


def cell_keys(probe: Any, column: KeyColumn, ident: ColumnIdentity, definition: str, interp: str) -> list[str]:
    """One cache key per row, from everything the row's result depends on in this column."""
    kmod = get_kind(probe.kind)
    extra = kmod.key_parts(probe, column) if hasattr(kmod, "key_parts") else None
    return [content_key(definition, ident.tree_sha, ident.edits, interp, extra, row) for row in probe.rows]


def _cached(cache: Cache, probe: Any, key: str) -> CellResult | None:
    """A cached cell, when there is one its kind still accepts (see the kinds' ``reuse``)."""
    hit = cache.get(key)
    if hit is None:
        return None
    cell = CellResult.from_json(hit)
    kmod = get_kind(probe.kind)
    if hasattr(kmod, "reuse") and not kmod.reuse(probe, cell):
        cache.reject()
        return None
    return cell


def run_probes(repo: GitRepo, scenario: Any, probes: list[Any], *, python: str | None = None,
               jobs: int | None = None, cache: Cache | None = None, workroot: Path | None = None,
               progress: Any = None) -> ProbeRun:
    """Fill every (probe, column, row) cell, from the cache where the content key matches."""
    started = time.monotonic()
    python = python or sys.executable
    if shutil.which(python) is None and not Path(python).is_file():
        raise UsageError(f"--python {python}: no such interpreter")
    cache = cache or Cache()
    scenario.check_refs(repo)
    columns = [ColumnRun(c, identify(repo, c)) for c in scenario.columns]
    interp = interpreter_fingerprint(python)
    defs = {p.id: definition_hash(p) for p in probes}
    cells: dict[tuple[str, str], list[CellResult | None]] = {}
    keys: dict[tuple[str, str], list[str]] = {}
    todo: dict[str, list[Any]] = {}
    run = ProbeRun(columns, {}, python)
    for cr in columns:
        for p in probes:
            if p.columns is not None and cr.column.name not in p.columns:
                continue
            kc = KeyColumn(cr.column.name, cr.ident.commit_sha, cr.ident.tree_sha, cr.ident.edits, repo, python)
            ks = cell_keys(p, kc, cr.ident, defs[p.id], interp)
            hits = [_cached(cache, p, k) for k in ks]
            cells[(p.id, cr.column.name)] = list(hits)
            keys[(p.id, cr.column.name)] = ks
            run.provenance[(p.id, cr.column.name)] = [(k, "cache" if h is not None else "run")
                                                       for k, h in zip(ks, hits)]
            run.from_cache += sum(h is not None for h in hits)
            if any(h is None for h in hits):
                todo.setdefault(cr.column.name, []).append(p)
        cached_proofs = cache.get(content_key("column-proofs", ENGINE_VERSION, cr.ident.key))
        if cached_proofs is None:
            todo.setdefault(cr.column.name, [])
        else:
            cr.proofs = [EditProof(**d) for d in cached_proofs]
            for pr in cr.proofs:
                pr.blob_user_before = pr.blob_user_after = user_blob(repo, cr.ident.commit_sha, pr.path)

    def work(cr: ColumnRun) -> None:
        pending = list(todo[cr.column.name])
        first = True
        while first or pending:
            first = False
            try:
                with materialize(repo, cr.column, workroot) as mat:
                    while pending:
                        p = pending.pop(0)
                        _run_one(repo, cr, mat, p, python, cells, keys, cache, run)
                        if mat.changes():
                            break  # written into: the next probe gets a fresh tree
            except UsageError as exc:
                if cr.column.role != "control":
                    raise
                # A control whose edit no longer applies (e.g. the head already carries the fix) is
                # the outcome of its cells, not a failed run; it is not cached.
                for p in [*todo[cr.column.name]]:
                    slot = cells.get((p.id, cr.column.name), [])
                    for i, c in enumerate(slot):
                        if c is None:
                            slot[i] = CellResult(None, "error", f"control does not apply: {exc}")
                return
            cr.proofs = mat.proofs
            cache.put(content_key("column-proofs", ENGINE_VERSION, cr.ident.key),
                      [{**asdict(p), "blob_user_before": None, "blob_user_after": None} for p in mat.proofs])

    needing = [cr for cr in columns if cr.column.name in todo]
    if jobs is not None and jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {jobs}")
    workers = max(1, min(jobs or len(needing) or 1, len(needing) or 1))
    if progress:
        progress(f"{sum(len(v) for v in cells.values())} cells, {run.from_cache} from cache; "
                 f"{len(needing)} column(s) to run with {workers} worker(s)")
    if workers == 1:
        for cr in needing:
            work(cr)
    else:
        pool = ThreadPoolExecutor(max_workers=workers)
        try:
            for f in [pool.submit(work, cr) for cr in needing]:
                f.result()
        except BaseException:
            STOP.set()  # running columns kill their probe processes and clean their trees
            pool.shutdown(wait=True, cancel_futures=True)  # queued columns never start
            STOP.clear()
            raise
        pool.shutdown(wait=True)
    run.cells = {k: [c or CellResult(None, "error", "not run") for c in v] for k, v in cells.items()}
    run.seconds = time.monotonic() - started
    return run


def _run_one(repo: GitRepo, cr: ColumnRun, mat: Any, probe: Any, python: str,
             cells: dict[tuple[str, str], list[CellResult | None]], keys: dict[tuple[str, str], list[str]],
             cache: Cache, run: ProbeRun) -> None:
    slot = cells[(probe.id, cr.column.name)]
    idx = [i for i, c in enumerate(slot) if c is None]
    if not idx:
        return
    scratch = workarea.mkdtemp("harness-probe-")
    try:
        ctx = KindContext(probe, [probe.rows[i] for i in idx], cr.column, mat, python, repo, scratch)
        try:
            results = get_kind(probe.kind).run(ctx)
        except UsageError:
            raise
        except Exception as exc:  # a broken probe kind fails its cells, not the run
            results = [CellResult(None, "error", f"probe kind {probe.kind} failed: {type(exc).__name__}: {exc}")
                       for _ in idx]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for i, res in zip(idx, results):
        slot[i] = res
        run.ran += 1
        if res.status in ("ok", "error") and not res.detail.startswith("wrote into the tree"):
            cache.put(keys[(probe.id, cr.column.name)][i], res.to_json())
