"""Probe tables: rows × columns with "same" cells, the control column, proofs and expectation findings."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from harness.columns.edits import CONTROL_BROKEN
from harness.errors import UsageError
from harness.git.repo import GitRepo
from harness.infra.cache import Cache, provenance_text
from harness.inputs.scenario import Expectation, Scenario, row_label
from harness.probes.engine import ColumnRun, ProbeRun, run_probes
from harness.probes.kinds import CellResult
from harness.report.model import (
    Anchors,
    Cell,
    Code,
    Control,
    ControlFacts,
    Finding,
    Section,
    Sha,
    Table,
)

SAME = "same"
LEGEND = (
    "same: equal to the cell on its left · values are what the probe returned (strings quoted) · "
    "error/timeout/crash: the cell's own failure"
)


def outcome(cell: CellResult) -> tuple[str, str]:
    """What two cells must share to be "the same"."""
    if cell.status == "ok":
        return ("ok", json.dumps(cell.value, sort_keys=True))
    return (cell.status, cell.detail)


def show(cell: CellResult) -> Cell:
    if cell.status == "ok":
        v = cell.value
        return Code(repr(v) if isinstance(v, str) else json.dumps(v, sort_keys=True))
    if cell.status == "timeout":
        return "timeout" + (
            f": {cell.detail}" if cell.detail and "timed out" not in cell.detail else ""
        )
    return f"{cell.status}: {cell.detail}" if cell.detail else cell.status


def _short(cell: CellResult) -> str:
    t = show(cell)
    s = t.text if isinstance(t, Code) else str(t)
    return s if len(s) <= 60 else s[:59] + "…"


def _base_of(control: ColumnRun, columns: list[ColumnRun]) -> ColumnRun | None:
    """The ref column a control was derived from (same commit), if the table has one."""
    return next(
        (
            c
            for c in columns
            if c.column.role == "ref" and c.ident.commit_sha == control.ident.commit_sha
        ),
        None,
    )


def _rows_in(e: Expectation, rows: list[dict[str, Any]]) -> list[int]:
    if e.rows is None:
        return list(range(len(rows)))
    return [
        i
        for i, r in enumerate(rows)
        if any(all(r.get(k) == v for k, v in want.items()) for want in e.rows)
    ]


def _expectation(
    e: Expectation, probe: Any, grid: dict[str, list[CellResult]]
) -> tuple[bool | None, str, str]:
    """(holds — None when it cannot be evaluated, what was checked, the rows where it failed)."""
    scope = _rows_in(e, probe.rows)
    mine = grid[e.column]
    bad: list[str] = []
    if e.same_as or e.differs_from:
        other = e.same_as or e.differs_from or ""
        what = f"{e.column} {'same as' if e.same_as else 'differs from'} {other}"
        failed_other = [i for i in scope if grid[other][i].status != "ok"]
        if failed_other and len(failed_other) == len(scope):
            # The reference column has no values (e.g. a control that no longer applies): nothing
            # to compare; the failed cells are reported by their own finding.
            return None, what, f"{other} has no value in any of these rows"
        for i in scope:
            if i in failed_other:
                continue
            equal = outcome(mine[i]) == outcome(grid[other][i])
            if equal != bool(e.same_as):
                bad.append(
                    f"{row_label(probe.rows[i])} ({e.column} {_short(mine[i])} vs {other} "
                    f"{_short(grid[other][i])})"
                )
    elif e.status:
        what = f"{e.column} status {e.status}"
        bad = [
            f"{row_label(probe.rows[i])} ({_short(mine[i])})"
            for i in scope
            if mine[i].status != e.status
        ]
    else:
        what = f"{e.column} equals {json.dumps(e.equals)}"
        bad = [
            f"{row_label(probe.rows[i])} ({_short(mine[i])})"
            for i in scope
            if mine[i].status != "ok" or mine[i].value != e.equals
        ]
    if not scope:
        return False, what, "no row matches the expectation's rows"
    return not bad, what, "; ".join(bad)


def probe_section(scenario: Scenario, probe: Any, run: ProbeRun) -> Section:
    """The section of one probe: its table, proofs, controls and findings."""
    cols = [c for c in run.columns if probe.columns is None or c.column.name in probe.columns]
    names = [c.column.name for c in cols]
    grid = {n: run.cells[(probe.id, n)] for n in names}
    controls_cols = [c for c in cols if c.column.role == "control"]
    table, unmoved = _outcome_table(probe, names, grid, controls_cols)
    proof_table = _proof_table(probe, cols, grid, run)
    findings, controls, broken = _control_checks(probe, cols, controls_cols, grid)
    _cell_checks(probe, names, grid, broken, findings, controls)
    _expectation_checks(scenario, probe, cols, grid, findings, controls)
    summary = (
        f"{len(probe.rows)} rows × {len(names)} columns ({', '.join(names)}); "
        f"{len(probe.rows) - len(unmoved)} row(s) differ between columns."
    )
    return Section(
        f"probe-{probe.id}",
        f"Probe {probe.id}" + (f": {probe.description}" if probe.description else ""),
        summary,
        [table, proof_table],
        findings,
        controls,
        _not_verified(probe),
        [],
        _probe_data(probe, cols, names, grid, unmoved, run),
    )


def _outcome_table(
    probe: Any,
    names: list[str],
    grid: dict[str, list[CellResult]],
    controls_cols: list[ColumnRun],
) -> tuple[Table, list[str]]:
    """Rows × columns (a cell equal to its left neighbour shown as same), and the rows that did
    not move between columns."""
    rows: list[list[Cell]] = []
    unmoved: list[str] = []
    for i, row in enumerate(probe.rows):
        line: list[Cell] = [row_label(row)]
        for j, n in enumerate(names):
            cell = grid[n][i]
            line.append(
                SAME if j and outcome(cell) == outcome(grid[names[j - 1]][i]) else show(cell)
            )
        rows.append(line)
        if len({outcome(grid[n][i]) for n in names}) == 1:
            unmoved.append(row_label(row))
    ctl_names = ", ".join(
        f"{c.column.name} ({c.column.description or 'ref + edits'})" for c in controls_cols
    )
    control_text = (
        f"control column: {ctl_names}" if controls_cols else "no control column in this scenario"
    )
    still = "; ".join(unmoved) if unmoved else "none"
    control_text += f" · rows that did not move: {still}"
    table = Table(f"{probe.id} ({probe.kind})", ["row", *names], rows, LEGEND, control_text)
    return table, unmoved


def _proof_table(
    probe: Any, cols: list[ColumnRun], grid: dict[str, list[CellResult]], run: ProbeRun
) -> Table:
    proof_rows: list[list[Cell]] = []
    for c in cols:
        proofs: list[str] = []
        for cell in grid[c.column.name]:
            for k, v in sorted(cell.proof.items()):
                if k != "exit code" and f"{k} → {v}" not in proofs:
                    proofs.append(f"{k} → {v}")
        proof_rows.append(
            [
                c.column.name,
                c.column.role,
                c.column.ref,
                Sha(c.ident.commit_sha),
                Sha(c.ident.tree_sha),
                "; ".join(e.describe() for e in c.column.edits) or "—",
                provenance_text(run.provenance.get((probe.id, c.column.name), [])),
                Code("; ".join(proofs) or "—"),
            ]
        )
    return Table(
        f"{probe.id}: columns and module path proofs",
        ["column", "role", "ref", "commit", "tree", "edits", "cells (cache key)", "proof"],
        proof_rows,
        "proof: the file each module under test was loaded from, relative to the column's tree "
        "(or the sha of extracted source) · cells: measured in this run or served from the "
        "cache, with each row's key (first 8 hex; keys hold the tree, edits, interpreter, "
        "definition and what the kind resolves per column, e.g. the engine version)",
        "every module path must lie inside its column's tree, else the cell fails",
    )


def _control_checks(
    probe: Any,
    cols: list[ColumnRun],
    controls_cols: list[ColumnRun],
    grid: dict[str, list[CellResult]],
) -> tuple[list[Finding], list[Control], dict[str, str]]:
    """Each control column: it applies its edit, and it moves a row against its ref column."""
    findings: list[Finding] = []
    controls: list[Control] = []
    # A control whose edit cannot apply measured nothing: the table has no control, so it is not
    # evidence (P1, naming the edit), not a cell that "did not complete" under a passing gate.
    broken = {
        c.column.name: next(
            (x.detail for x in grid[c.column.name] if x.detail.startswith(CONTROL_BROKEN)), ""
        )
        for c in controls_cols
    }
    broken = {name: why for name, why in broken.items() if why}
    for c in controls_cols:
        if c.column.name in broken:
            edits = "; ".join(e.describe() for e in c.column.edits) or "its edits"
            findings.append(
                Finding(
                    "probe-control-broken",
                    "P1",
                    f"{probe.id}: control {c.column.name} cannot apply its edit ({edits}): "
                    "the table is not evidence",
                    broken[c.column.name],
                    key=f"{probe.id}:{c.column.name}:broken",
                    anchors=Anchors(controls=(control_facts(probe.id, c),)),
                )
            )
            controls.append(
                Control(f"control {c.column.name} applies", broken[c.column.name], False)
            )
            continue
        base = _base_of(c, cols)
        if base is None:
            controls.append(
                Control(
                    f"control {c.column.name} liveness",
                    "no ref column with the same commit to compare against",
                    None,
                )
            )
            continue
        moved = [
            row_label(r)
            for i, r in enumerate(probe.rows)
            if outcome(grid[c.column.name][i]) != outcome(grid[base.column.name][i])
        ]
        controls.append(
            Control(
                f"control {c.column.name} moves rows against {base.column.name}",
                ", ".join(moved) if moved else "no row moved",
                bool(moved),
            )
        )
        if not moved:
            findings.append(
                Finding(
                    "probe-dead-control",
                    "P2",
                    f"{probe.id}: control {c.column.name} moved no row against {base.column.name}",
                    "the probe may not exercise the edited code",
                    key=f"{probe.id}:{c.column.name}:dead",
                )
            )
    return findings, controls, broken


def _cell_checks(
    probe: Any,
    names: list[str],
    grid: dict[str, list[CellResult]],
    broken: dict[str, str],
    findings: list[Finding],
    controls: list[Control],
) -> None:
    """Module path proofs inside the column trees; cells that did not complete."""
    module_cells = [
        cell for n in names for cell in grid[n] if any(k.startswith("module ") for k in cell.proof)
    ]
    outside = [cell for cell in module_cells if "outside the column's tree" in cell.detail]
    if module_cells:
        controls.append(
            Control(
                "module path proofs inside column trees",
                f"{len(module_cells) - len(outside)} of {len(module_cells)} cells",
                not outside,
            )
        )
    failed = [
        (n, i)
        for n in names
        if n not in broken
        for i, cell in enumerate(grid[n])
        if cell.status != "ok"
    ]
    if failed:
        where = ", ".join(f"{n}×{row_label(probe.rows[i])}" for n, i in failed[:6])
        findings.append(
            Finding(
                "probe-cell-failed",
                "P2",
                f"{probe.id}: {len(failed)} cell(s) did not complete",
                where + (" …" if len(failed) > 6 else ""),
                key=f"{probe.id}:failed",
            )
        )


def control_facts(probe_id: str, c: ColumnRun) -> ControlFacts:
    """A control column as the verdict's causes name it: what its edits apply and change."""
    return ControlFacts(
        name=f"{probe_id}/{c.column.name}",
        commits=tuple(e.commit for e in c.column.edits if e.commit),
        paths=tuple(sorted({e.path for e in c.column.edits if e.path})),
    )


def _expectation_anchors(e: Expectation, probe_id: str, cols: list[ColumnRun]) -> Anchors:
    """The controls an expectation is about: the columns it compares, or every control of the
    table when it compares none; the column it compares against and that column's edits."""
    other = e.same_as or e.differs_from
    names = {e.column, other} if other else None
    anchors = Anchors(
        controls=tuple(
            control_facts(probe_id, c)
            for c in cols
            if c.column.role == "control" and (names is None or c.column.name in names)
        )
    )
    if other:
        anchors["expects"] = (e.column, "same as" if e.same_as else "differs from", other)
        col = next((c for c in cols if c.column.name == other), None)
        anchors["other_edits"] = tuple(e.describe() for e in col.column.edits) if col else ()
    return anchors


def _expectation_checks(
    scenario: Scenario,
    probe: Any,
    cols: list[ColumnRun],
    grid: dict[str, list[CellResult]],
    findings: list[Finding],
    controls: list[Control],
) -> None:
    """The scenario's expectations on this probe, each a control and, when violated, a finding."""
    for e in scenario.expectations:
        if (e.probe or probe.id) != probe.id:
            continue
        holds, what, detail = _expectation(e, probe, grid)
        title = e.title or f"{probe.id}: {what}"
        result = (
            "holds"
            if holds
            else f"not evaluated: {detail}"
            if holds is None
            else f"violated: {detail}"
        )
        controls.append(Control(f"expectation: {title}", result, holds))
        if holds is False:
            findings.append(
                Finding(
                    "probe-expectation",
                    e.severity,
                    title,
                    f"{what} fails at {detail}",
                    key=f"{probe.id}:{what}",
                    anchors=_expectation_anchors(e, probe.id, cols),
                )
            )


def _not_verified(probe: Any) -> list[str]:
    not_verified = [
        f"behaviour outside the declared rows ({len(probe.rows)} rows)",
        "interpreters other than the one used for the columns",
    ]
    if probe.kind == "extract":
        not_verified.append("code outside the extracted functions (declared stubs stand in for it)")
    if probe.kind in ("command", "pytest"):
        not_verified.append(
            f"which files a {probe.kind} probe loaded (no module path proof for this kind)"
        )
    return not_verified


def _probe_data(
    probe: Any,
    cols: list[ColumnRun],
    names: list[str],
    grid: dict[str, list[CellResult]],
    unmoved: list[str],
    run: ProbeRun,
) -> dict[str, object]:
    return {
        "probe": probe.id,
        "kind": probe.kind,
        "rows": probe.rows,
        "columns": [
            {
                "name": c.column.name,
                "role": c.column.role,
                "ref": c.column.ref,
                "commit": c.ident.commit_sha,
                "tree": c.ident.tree_sha,
                "edits": [e.describe() for e in c.column.edits],
                "edit_paths": sorted({e.path for e in c.column.edits if e.path}),
                "edit_commits": [e.commit for e in c.column.edits if e.commit],
            }
            for c in cols
        ],
        "cells": {n: [cell.to_json() for cell in grid[n]] for n in names},
        "unmoved_rows": unmoved,
        "cache": {
            n: [{"key": k, "from": h} for k, h in run.provenance.get((probe.id, n), [])]
            for n in names
        },
    }


def edits_section(run: ProbeRun) -> Section | None:
    """Blob-sha proofs of every control edit: landed in the column tree, nothing leaked to the user's copy."""
    rows: list[list[Cell]] = []
    landed, leaked = [], []
    for c in run.columns:
        for p in c.proofs:
            rows.append(
                [
                    c.column.name,
                    p.path,
                    Sha(p.blob_before or "-"),
                    Sha(p.blob_after or "-"),
                    Sha(p.blob_user_before or "-"),
                    Sha(p.blob_user_after or "-"),
                ]
            )
            landed.append(p.landed)
            leaked.append(p.leaked)
    if not rows:
        return None
    controls = [
        Control(
            "edits landed in the column trees (blob before ≠ after)",
            f"{sum(landed)} of {len(landed)}",
            all(landed),
        ),
        Control(
            "user's copies unchanged by the run (user before = after)",
            f"{len(leaked) - sum(leaked)} of {len(leaked)}",
            not any(leaked),
        ),
    ]
    findings = (
        [
            Finding(
                "probe-edit-leak",
                "P1",
                "a control edit changed the user's copy",
                ", ".join(str(r[1]) for r, lk in zip(rows, leaked, strict=False) if lk),
                key="edit-leak",
            )
        ]
        if any(leaked)
        else []
    )
    table = Table(
        "control edits: blob shas",
        ["column", "path", "before edit", "after edit", "user's copy before", "user's copy after"],
        rows,
        "blob ids as git computes them; the user's copy is the work-tree file (bare repository: the ref)",
        "user's copy before = after: the edit happened only in the harness's tree",
    )
    return Section(
        "probe-edits",
        "Control edits",
        f"{len(rows)} edited file(s) across "
        f"{sum(1 for c in run.columns if c.proofs)} control column(s).",
        [table],
        findings,
        controls,
        ["edits of files outside the listed paths (each edit's paths come from its own text)"],
    )


def probe_sections(
    repo: GitRepo,
    scenario: Scenario,
    probe_ids: list[str] | None = None,
    python: str | None = None,
    jobs: int | None = None,
    *,
    cache: Cache | None = None,
    progress: Callable[[str], None] | None = None,
    executor: Any = None,
) -> list:  # list[Section]
    """Run the selected probes and build their sections (the edits proof section last)."""
    probes = scenario.probes
    if probe_ids:
        unknown = [p for p in probe_ids if p not in {x.id for x in probes}]
        if unknown:
            raise UsageError(
                f"--probe {unknown[0]}: no such probe in {scenario.path} "
                f"(probes: {', '.join(p.id for p in probes)})"
            )
        probes = [p for p in probes if p.id in probe_ids]
    run = run_probes(
        repo,
        scenario,
        probes,
        python=python,
        jobs=jobs,
        cache=cache,
        progress=progress,
        executor=executor,
    )
    sections = [probe_section(scenario, p, run) for p in probes]
    edits = edits_section(run)
    if edits is not None:
        sections.append(edits)
    if progress:
        progress(f"{run.ran} cell(s) run, {run.from_cache} from cache in {run.seconds:.2f}s")
    return sections
