"""Test counts per CI lane: one pytest collection pass per ref evaluates every lane expression.

The tree of each ref is exported to a temporary directory (never the user's work tree) and
collected once with ``probes/pytest_lanes_plugin.py``; the project's ``addopts`` and
``PYTEST_ADDOPTS`` are neutralised so they cannot change the counts.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.checks.tests_as_evidence.pytest_run import (
    code_digests,
    last_line,
    output_text,
    pytest_argv,
    pytest_env,
    run_in_tree,
    run_setup,
    tree_paths,
)
from harness.columns.trees import Column, Materialized, identify
from harness.envs.fingerprint import interpreter_fingerprint, runtime_fingerprint, worker_differs
from harness.errors import HarnessError, UsageError
from harness.executors import Executor, Task, TreeSpec
from harness.executors.local import LocalExecutor
from harness.git.repo import GitRepo
from harness.git.tree import export_tree
from harness.infra import process, workarea, zygote
from harness.infra.cache import Cache, content_key, provenance_text
from harness.infra.futures import Future, ThreadPoolExecutor, wait
from harness.infra.progress import phase
from harness.report.model import Cell, Code, Control, Finding, Section, Table

# Controls evaluated with the lanes: a marker nothing carries selects 0, its negation selects all.
_SENTINEL = "harness_sentinel_marker_never_set"
CONTROL_ALL = "(control: all)"
CONTROL_NONE = "(control: none)"

# How long the interpreter's description may take, after git named the trees, before it counts as a
# child process: a record on hand answers in a few milliseconds, a fresh interpreter takes 0.1 s or
# more to start. Guessing wrong costs time, never a result: trees written for nothing are removed,
# a collection started for nothing is stopped.
_RECORD_GRACE = 0.01


@dataclass(frozen=True)
class Lane:
    name: str
    expr: str  # pytest -m expression; "" selects every collected test
    from_repo: bool = False  # read from the reviewed repository: an invalid expression is a finding


def expression_problem(expr: str) -> str | None:
    """Why pytest would refuse ``expr`` as a ``-m`` expression (None when valid or pytest is absent here)."""
    from harness.checks.lanes.lane_expr import expression_error

    return expression_error(expr)


def parse_lane(spec: str) -> Lane:
    """``NAME=EXPR`` → Lane (one clear usage error otherwise)."""
    name, sep, expr = spec.partition("=")
    if not sep or not name.strip():
        raise UsageError(f"--lane {spec!r}: expected NAME=EXPR (a pytest -m expression)")
    why = expression_problem(expr.strip()) if expr.strip() else None
    if why:
        raise UsageError(f"--lane {spec!r}: invalid marker expression: {why}")
    return Lane(name.strip(), expr.strip())


@dataclass
class Collection:
    """What one collection pass saw at one tree."""

    ref: str
    commit: str
    tree: str
    exit_code: int
    total: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    files: dict[str, dict[str, int]] = field(default_factory=dict)
    per_file: dict[str, dict[str, int]] = field(default_factory=dict)
    nodes: dict[str, list[str]] = field(default_factory=dict)  # test of a listed file → its lanes
    errors: list[dict[str, str]] = field(default_factory=list)
    invalid: dict[str, str] = field(default_factory=dict)
    unknown_used: dict[str, int] = field(default_factory=dict)
    unknown_in_lanes: dict[str, list[str]] = field(default_factory=dict)
    complete: bool = False
    pytest_version: str = ""
    stderr_tail: str = ""
    seconds: float = 0.0
    key: str = ""  # cache key of this collection
    cached: bool = False  # served from the cache rather than collected now


def lanes_from_workflows(
    repo: GitRepo,
    ref: str,
    workflows: Sequence[str] | None = None,
    extra_lanes: Sequence[dict] | None = None,
    unread: list[str] | None = None,
) -> tuple[list[Lane], list[str]]:
    """Lanes found in the CI workflows at ``ref`` (plus hand-given ones), named ``job · input``
    (numbered when repeated), and those skipped because CI fills their expression in at run time;
    ``unread`` collects "path: why" for workflows that could not be read (an alias bomb, bad YAML)."""
    from harness.checks.lanes.check import scan_lanes
    from harness.checks.lanes.lane_expr import filled_in_by_ci

    lanes: list[Lane] = []
    skipped: list[str] = []
    seen: dict[str, int] = {}
    scan = scan_lanes(repo, ref, workflows, extra_lanes)
    if unread is not None:
        unread += [f"{path}: {why}" for path, why in scan.problems]
    for found in scan.lanes:
        if filled_in_by_ci(found.expression):
            skipped.append(f"{found.name}: {found.expression}")
            continue
        seen[found.name] = seen.get(found.name, 0) + 1
        lanes.append(
            Lane(
                found.name if seen[found.name] == 1 else f"{found.name} #{seen[found.name]}",
                found.expression,
                from_repo=True,
            )
        )
    return lanes, skipped


def collect_dir(
    tree_dir: Path,
    lanes: Sequence[Lane],
    files: Sequence[str] = (),
    *,
    python: str = sys.executable,
    args: Sequence[str] = (),
    timeout: float = 600,
    ref: str = "",
    commit: str = "",
    tree: str = "",
    setup: Sequence[str] = (),
    stop: threading.Event | None = None,
) -> Collection:
    """Run ONE ``pytest --collect-only`` in ``tree_dir`` and read every lane's count (``stop``: a
    collection started before it is known to be wanted, given up once set: ``process.Stopped``)."""
    all_lanes = {
        CONTROL_ALL: f"not {_SENTINEL}",
        CONTROL_NONE: _SENTINEL,
        **{lane.name: lane.expr for lane in lanes},
    }
    with workarea.temp_dir("harness-lanes-") as tmp:
        spec, out = Path(tmp) / "spec.json", Path(tmp) / "out.json"
        spec.write_text(json.dumps({"lanes": all_lanes, "files": list(files)}), encoding="utf-8")
        env = pytest_env(tree_paths(tree_dir))
        env.update({"HARNESS_LANES_SPEC": str(spec), "HARNESS_LANES_OUT": str(out)})
        argv = pytest_argv(python, tree_dir, "pytest_lanes_plugin", collect_only=True, args=args)
        start = time.monotonic()
        problem = run_setup(tree_dir, setup, env, timeout)
        if problem:
            col = Collection(ref=ref, commit=commit, tree=tree, exit_code=-1)
            col.errors.append({"nodeid": "(setup)", "message": problem})
            return col
        try:
            proc = run_in_tree(argv, tree_dir, env, timeout, fork=not setup, stop=stop)
        except process.TimeoutExpired:
            raise UsageError(
                f"pytest collection at {ref or tree_dir} ran past {timeout:.0f}s"
            ) from None
        col = Collection(
            ref=ref,
            commit=commit,
            tree=tree,
            exit_code=proc.returncode,
            seconds=time.monotonic() - start,
        )
        col.stderr_tail = output_text(proc)[-2000:]
        if not out.exists():
            # pytest never reached the end of collection (bad option, conftest crash): an error row.
            col.errors.append({"nodeid": ".", "message": last_line(col.stderr_tail)})
            return col
        data = json.loads(out.read_text(encoding="utf-8"))
    col.total = data["total"]
    col.counts = data["counts"]
    col.files = data["files"]
    col.per_file = data["per_file"]
    col.nodes = data.get("nodes", {})
    col.errors = data["errors"]
    col.invalid = data["invalid"]
    col.unknown_used = data["unknown_markers_used"]
    col.unknown_in_lanes = {
        k: v
        for k, v in data["unknown_markers_in_lanes"].items()
        if k not in (CONTROL_ALL, CONTROL_NONE)
    }
    col.complete = data["complete"]
    col.pytest_version = data["pytest"]
    given = {lane.name for lane in lanes if not lane.from_repo}
    for name, why in sorted(col.invalid.items()):
        if name in given:
            raise UsageError(f"lane {name!r}: invalid marker expression: {why.splitlines()[0]}")
    return col


def collection_key(
    tree: str,
    lanes: Sequence[Lane],
    files: Sequence[str],
    python: str,
    args: Sequence[str],
    timeout: float,
    setup: Sequence[str],
    store: Cache | None = None,
    fingerprint: str | None = None,
) -> str:
    """What one collection depends on: the tree, the lanes, the interpreter with its distributions,
    the arguments and setup, and the plugin and code that read it (``store``: where the
    interpreter's description may be kept; ``fingerprint``: that description, already made)."""
    code = code_digests("pytest_lanes_plugin", __file__)
    return content_key(
        "collection",
        tree,
        [(lane.name, lane.expr) for lane in lanes],
        list(files),
        fingerprint if fingerprint is not None else interpreter_fingerprint(python, store),
        list(args),
        timeout,
        list(setup),
        code,
    )


def collect_ref(
    repo: GitRepo,
    ref: str,
    lanes: Sequence[Lane],
    files: Sequence[str] = (),
    *,
    python: str = sys.executable,
    args: Sequence[str] = (),
    timeout: float = 600,
    setup: Sequence[str] = (),
    cache: Cache | None = None,
) -> Collection:
    """Export ``ref`` into a temporary directory and collect it once (or serve the collection of an
    identical tree from the cache; ``cache=Cache(enabled=False)`` always collects)."""
    return collect_refs(
        repo,
        [ref],
        lanes,
        files,
        python=python,
        args=args,
        timeout=timeout,
        setup=setup,
        cache=cache,
    )[0]


def collect_refs(
    repo: GitRepo,
    refs: Sequence[str],
    lanes: Sequence[Lane],
    files: Sequence[str] = (),
    *,
    python: str = sys.executable,
    args: Sequence[str] = (),
    timeout: float = 600,
    setup: Sequence[str] = (),
    cache: Cache | None = None,
    executor: Executor | None = None,
) -> list[Collection]:
    """One collection pass per ref not in the cache, each an executor task (``local``: one after
    another, in trees written here; ``ray``: each tree packed for its worker)."""
    if not refs:
        return []
    cache = cache if cache is not None else Cache(namespace="collections")
    executor = executor or LocalExecutor()
    local = executor.name == "local"
    out: list[Collection | None] = []
    tasks: list[Task[Collection]] = []
    slots: list[int] = []
    with contextlib.ExitStack() as written, ThreadPoolExecutor(2) as pool:
        stop = threading.Event()  # set on the way out: what was started early and not used ends
        try:
            # The interpreter's description is a child process unless its record is on hand: it
            # runs while git names each ref's tree and, when it has not answered by then (no
            # record: most likely a cold run, the collections missing too), while those trees are
            # written and the first one is collected; that collection is given up if its key turns
            # out to be on record.
            described = pool.submit(interpreter_fingerprint, python, cache)
            named = [(ref, repo.resolve(ref)) for ref in refs]
            trees = {commit: repo.resolve(commit, "tree") for _, commit in named}
            ready: dict[int, Materialized] = {}  # position in ``named`` → its tree, written
            early: dict[int, Future[Collection]] = {}
            if local and not wait([described], timeout=_RECORD_GRACE).done:
                firsts = {commit: i for i, (_, commit) in reversed(list(enumerate(named)))}
                for i in sorted(firsts.values()):
                    ready[i] = _written(repo, Column(*named[i]), written)
                if not setup:  # setup commands run before pytest, and would run to the end
                    ref, _ = named[0]
                    early[0] = pool.submit(
                        _collect_in, ready[0], ref, lanes, files, python, args, timeout, stop
                    )
            fingerprint = described.result()
            for i, (ref, commit) in enumerate(named):
                key = collection_key(
                    trees[commit], lanes, files, python, args, timeout, setup, cache, fingerprint
                )
                hit = cache.get(key)
                if hit is not None:
                    out.append(
                        Collection(
                            **{**hit, "ref": ref, "commit": commit, "key": key, "cached": True}
                        )
                    )
                    continue
                if i in early:
                    with phase(f"collect tests at {ref}"):
                        col = early.pop(i).result()
                    out.append(_kept(cache, key, col))
                    continue
                out.append(None)
                slots.append(len(out) - 1)
                if local and i not in ready:
                    ready[i] = _written(repo, Column(ref, commit), written)
                tasks.append(
                    Task(
                        key,
                        collect_task,
                        TreeSpec(repo, Column(ref, commit), ready=ready.get(i), scratch=True),
                        (
                            ref,
                            list(lanes),
                            list(files),
                            python,
                            list(args),
                            timeout,
                            list(setup),
                            "" if local else runtime_fingerprint(python),
                        ),
                        timeout=2 * timeout + 120,
                        label=f"collection at {ref}",
                    )
                )
            stop.set()  # a collection started early whose key was on record
            with zygote.forking() if len(tasks) > 1 else contextlib.nullcontext():
                results = executor.run(tasks, jobs=1 if local else None)
        finally:
            stop.set()
    for i, task, res in zip(slots, tasks, results, strict=False):
        if res.status != "ok" or res.value is None:
            raise HarnessError(f"{task.label}: {res.detail}")
        out[i] = _kept(cache, task.key, res.value)
    return [c for c in out if c is not None]


def _kept(cache: Cache, key: str, col: Collection) -> Collection:
    """``col`` under ``key``, put in the cache when pytest reached the end of collection."""
    col.key = key
    if col.pytest_version:  # a result worth keeping
        cache.put(
            key,
            {k: v for k, v in asdict(col).items() if k not in ("ref", "commit", "key", "cached")},
        )
    return col


def _collect_in(
    mat: Materialized,
    ref: str,
    lanes: Sequence[Lane],
    files: Sequence[str],
    python: str,
    args: Sequence[str],
    timeout: float,
    stop: threading.Event | None = None,
    setup: Sequence[str] = (),
) -> Collection:
    """The collection of a materialized tree (``stop``: one started before its key is known)."""
    return collect_dir(
        mat.path,
        lanes,
        files,
        python=python,
        args=args,
        timeout=timeout,
        ref=ref,
        commit=mat.commit_sha,
        tree=mat.tree_sha,
        setup=setup,
        stop=stop,
    )


def _written(repo: GitRepo, column: Column, stack: contextlib.ExitStack) -> Materialized:
    """``column`` (a ref, no edits) written into a temporary directory that ``stack`` removes: what
    ``TreeSpec(scratch=True)`` gives a local task, without the listing of its files (a collection
    only reads its tree)."""
    ident = identify(repo, column)
    path = Path(stack.enter_context(workarea.temp_dir("harness-tree-"))) / "tree"
    export_tree(repo, ident.commit_sha, path)
    return Materialized(path, ident.tree_sha, ident.commit_sha, [], ident.key)


def collect_task(
    tree: Any,
    ref: str,
    lanes: list[Lane],
    files: list[str],
    python: str,
    args: list[str],
    timeout: float,
    setup: list[str],
    driver: str = "",
) -> Collection:
    """One collection pass as an executor task, in the tree it is given (``driver``: the driver's
    interpreter fingerprint, which a remote worker's must match)."""
    differs = worker_differs(python, driver)
    if differs:  # no pytest version: an error row, never cached
        col = Collection(ref, getattr(tree, "commit_sha", ""), getattr(tree, "tree_sha", ""), -1)
        col.errors.append({"nodeid": "(worker)", "message": differs})
        return col
    with tree.open() as mat:
        with phase(f"collect tests at {ref}"):
            return _collect_in(mat, ref, lanes, files, python, args, timeout, setup=setup)


# -- report ------------------------------------------------------------------------
def selection_section(
    collections: Sequence[Collection], lanes: Sequence[Lane], files: Sequence[str] = ()
) -> Section:
    """Lane counts per ref, per file of interest, collection errors and unknown markers."""
    refs = [c.ref for c in collections]
    delta = len(collections) == 2
    lane_table, controls_ok = _lane_table(collections, lanes, refs, delta)
    tables = [lane_table]
    tables += _file_table(collections, lanes, files, refs, delta)
    findings: list[Finding] = []
    tables += _error_table(collections, findings)
    findings += _lane_findings(collections, lanes)
    tables += _unknown_markers(collections, findings)
    controls = [
        Control(
            "evaluator control (all / none rows)", "held" if controls_ok else "failed", controls_ok
        )
    ]
    controls += [
        Control(
            f"collection at {c.ref}",
            f"tree {c.tree[:12]}, {c.total} items, pytest exit "
            f"{c.exit_code}, {len(c.errors)} error(s)",
            not c.errors,
        )
        for c in collections
    ]
    summary = "; ".join(
        f"{c.ref}: {c.total} tests collected, "
        + ", ".join(f"{lane.name}={c.counts.get(lane.name, 0)}" for lane in lanes)
        for c in collections
    )
    return Section(
        id="selection",
        title="Test selection per CI lane",
        summary=summary,
        tables=tables,
        findings=findings,
        controls=controls,
        not_verified=[
            "tests were collected, not run: a selected test may still skip at run time (skipif, fixtures)",
            "lane options other than -m (-k, paths, --deselect, plugins' own flags) are not applied",
            "imports resolve with the interpreter given (the tree and its src/ first on PYTHONPATH); "
            "a project needing a build step (generated version file, extensions) may fail to import",
        ],
        data={
            "lanes": [{"name": ln.name, "expr": ln.expr} for ln in lanes],
            "refs": [_collection_data(c) for c in collections],
        },
    )


def _lane_table(
    collections: Sequence[Collection], lanes: Sequence[Lane], refs: list[str], delta: bool
) -> tuple[Table, bool]:
    """Each lane's count per ref, with the all/none control rows; whether the controls held."""
    cols = ["lane", "expression", *refs] + (["Δ"] if delta else [])
    rows: list[list[Cell]] = []
    for lane in lanes:
        if any(lane.name in c.invalid for c in collections):
            rows.append(
                [
                    lane.name,
                    Code(lane.expr),
                    *["invalid -m"] * len(collections),
                    *(["—"] if delta else []),
                ]
            )
            continue
        counts = [c.counts.get(lane.name, 0) for c in collections]
        row: list[Cell] = [lane.name, Code(lane.expr or "(all)"), *counts]
        if delta:
            row.append(_delta(counts[0], counts[1]))
        rows.append(row)
    for name, expr in ((CONTROL_ALL, f"not {_SENTINEL}"), (CONTROL_NONE, _SENTINEL)):
        counts = [c.counts.get(name, 0) for c in collections]
        rows.append([name, Code(expr), *counts, *([_delta(counts[0], counts[1])] if delta else [])])
    controls_ok = all(
        c.counts.get(CONTROL_ALL) == c.total and c.counts.get(CONTROL_NONE) == 0 and c.complete
        for c in collections
    )
    lane_table = Table(
        "Tests selected per lane (one collection pass per ref)",
        cols,
        rows,
        legend="counts are collected items matching the lane's -m expression after the project's own "
        "collection hooks; addopts neutralised; Δ = second ref − first",
        control=f"control rows: 'not {_SENTINEL}' must select every collected item and "
        f"'{_SENTINEL}' none — "
        + ("held" if controls_ok else "FAILED")
        + " · collections "
        + provenance_text([(c.key, "cache" if c.cached else "run") for c in collections if c.key]),
    )
    return lane_table, controls_ok


def _file_table(
    collections: Sequence[Collection],
    lanes: Sequence[Lane],
    files: Sequence[str],
    refs: list[str],
    delta: bool,
) -> list[Table]:
    """Counts per file of interest (given, else those whose collected count changed)."""
    tables: list[Table] = []
    interest = list(files) or _changed_files(collections)
    if interest:
        frows: list[list[Cell]] = []
        for path in interest:
            for lane in lanes:
                counts = [_file_count(c, path, lane.name) for c in collections]
                frows.append(
                    [
                        Code(path),
                        lane.name,
                        *counts,
                        *([_delta(counts[0], counts[1])] if delta else []),
                    ]
                )
        tables.append(
            Table(
                "Tests selected per file of interest"
                + ("" if files else " (files whose collected count changed)"),
                ["file", "lane", *refs] + (["Δ"] if delta else []),
                frows,
                legend="a directory counts every file under it",
                control="per-file counts come from the same pass as the lane totals",
            )
        )
    return tables


def _error_table(collections: Sequence[Collection], findings: list[Finding]) -> list[Table]:
    """The collection errors (a table, and a finding per ref that has any)."""
    tables: list[Table] = []
    err_rows: list[list[Cell]] = [
        [c.ref, Code(e["nodeid"]), e["message"]] for c in collections for e in c.errors
    ]
    if err_rows:
        tables.append(
            Table(
                "Collection errors (counted apart; lane counts above exclude these files)",
                ["ref", "node id", "error"],
                err_rows,
                control="pytest exit code per ref: "
                + ", ".join(f"{c.ref}={c.exit_code}" for c in collections),
            )
        )
        for c in collections:
            if c.errors:
                findings.append(
                    Finding(
                        "collection-error",
                        "P2",
                        f"{len(c.errors)} collection error(s) at {c.ref}: lane counts are a lower bound",
                        "; ".join(e["nodeid"] for e in c.errors),
                        key=f"{c.tree}:{len(c.errors)}",
                    )
                )
    return tables


def _lane_findings(collections: Sequence[Collection], lanes: Sequence[Lane]) -> list[Finding]:
    """A lane whose -m expression pytest refuses, or that selects nothing."""
    findings: list[Finding] = []
    for lane in lanes:
        bad = {c.ref: c.invalid[lane.name] for c in collections if lane.name in c.invalid}
        if bad:
            why = next(iter(bad.values())).splitlines()[0]
            findings.append(
                Finding(
                    "lane-invalid-expression",
                    "P1",
                    f"lane {lane.name}: pytest refuses its -m expression {lane.expr!r}: "
                    "the CI job selects nothing or fails",
                    f"{why} (at {', '.join(bad)})",
                    key=f"{lane.name}:{lane.expr}",
                )
            )
            continue
        zero = [c.ref for c in collections if c.counts.get(lane.name, 0) == 0 and c.total]
        if zero:
            findings.append(
                Finding(
                    "lane-selects-nothing",
                    "P2",
                    f"lane {lane.name} ({lane.expr or 'all'}) selects no test at {', '.join(zero)}",
                    key=f"{lane.name}:{lane.expr}",
                )
            )
    return findings


def _unknown_markers(collections: Sequence[Collection], findings: list[Finding]) -> list[Table]:
    """Markers not registered in the project's configuration (a table; a finding per lane)."""
    tables: list[Table] = []
    unk_rows: list[list[Cell]] = []
    for c in collections:
        for marker, n in sorted(c.unknown_used.items()):
            unk_rows.append([c.ref, Code(marker), "on collected tests", n])
        for lane_name, names in sorted(c.unknown_in_lanes.items()):
            for marker in names:
                unk_rows.append(
                    [c.ref, Code(marker), f"in lane {lane_name}", c.counts.get(lane_name, 0)]
                )
    if unk_rows:
        tables.append(
            Table(
                "Unknown markers (not registered in the project's configuration)",
                ["ref", "marker", "where", "tests"],
                unk_rows,
                legend="'tests': items carrying it, or the lane's count",
                control="registered = the project's `markers` ini lines plus pytest's built-ins",
            )
        )
        for c in collections:
            for lane_name, names in sorted(c.unknown_in_lanes.items()):
                findings.append(
                    Finding(
                        "unknown-marker",
                        "P2",
                        f"lane {lane_name} names unregistered marker(s) {', '.join(names)} at {c.ref}",
                        key=f"{lane_name}:{','.join(names)}",
                    )
                )

    return tables


def _delta(a: int, b: int) -> str:
    return "same" if a == b else f"{b - a:+d}"


def _file_count(c: Collection, path: str, lane: str) -> int:
    if path in c.files:
        return c.files[path].get(lane, 0)
    prefix = path.rstrip("/") + "/"
    return sum(
        row.get(lane, 0) for f, row in c.per_file.items() if f == path or f.startswith(prefix)
    )


def _changed_files(collections: Sequence[Collection], limit: int = 20) -> list[str]:
    if len(collections) < 2:
        return []
    a, b = collections[0].per_file, collections[-1].per_file
    changed = sorted(
        f
        for f in set(a) | set(b)
        if a.get(f, {}).get("__all__", 0) != b.get(f, {}).get("__all__", 0)
    )
    return changed[:limit]


def _collection_data(c: Collection) -> dict:
    return {
        "ref": c.ref,
        "commit": c.commit,
        "tree": c.tree,
        "exit_code": c.exit_code,
        "total": c.total,
        "complete": c.complete,
        "counts": c.counts,
        "files": c.files,
        "errors": c.errors,
        "unknown_markers_used": c.unknown_used,
        "unknown_markers_in_lanes": c.unknown_in_lanes,
        "pytest": c.pytest_version,
    }


__all__ = [
    "Lane",
    "Collection",
    "parse_lane",
    "collect_dir",
    "collect_ref",
    "selection_section",
]
