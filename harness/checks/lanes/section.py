"""The lanes Section of a ``LaneScan``: one row per lane, a finding per expression pytest would
refuse or file not read, the read-back and text-scan controls, and what the scan does not read."""

from __future__ import annotations

import re
from collections.abc import Sequence

from harness.checks.lanes.gha_matrix import MAX_COMBOS
from harness.checks.lanes.lane_expr import expression_error
from harness.checks.lanes.workflow import MISSING_ACTION, UNREAD_SCRIPT, Lane, LaneScan, flat
from harness.report.model import (
    Anchors,
    Cell,
    Code,
    Control,
    Finding,
    Location,
    Section,
    Severity,
    Table,
)


def _expr_in_raw(lane: Lane, raw: str | None) -> bool | None:
    """Whether the raw text at the lane's line shows the expression (None where YAML puts the text on
    later lines). ``raw`` is that line and the few after it: an expression that a folded block
    (``run: >-``) or a quoted scalar carries on to the next source line is read back across them,
    starting on the lane's own line."""
    if raw is None or not lane.expression:
        return None
    line, _, after = raw.partition("\n")
    first = lane.expression.splitlines()[0].strip()
    if first in line:
        return True
    if re.search(r"[|>][+-]?[0-9]?\s*(#.*)?$", line):
        return None  # block scalar: the text starts on the next line
    want = flat(lane.expression)
    head = want.split(" ", 1)[0]
    if head and head in line and want in flat(line + " " + after):
        return True  # folded over the next source lines
    shown = re.sub(r"^\s*-?\s*([^:]*:\s*)?", "", line).strip().strip("\"'")
    return bool(shown) and first.startswith(shown)  # a plain scalar folded over several lines


def _lane_rows(scan: LaneScan) -> tuple[list[list[Cell]], list[Finding]]:
    """The table's row of each lane, and a finding for each expression pytest would refuse."""
    rows: list[list[Cell]] = []
    findings: list[Finding] = []
    for lane in scan.lanes:
        where = (
            f"{lane.path}:{lane.line}"
            if lane.path and lane.line
            else (lane.path or "(given by hand)")
        )
        expr_cell = Code(lane.expression) if lane.expression else "(empty: all tests)"
        rows.append(
            [
                Code(lane.job),
                Code(lane.input),
                expr_cell,
                Code(where),
                lane.source
                + (f" via {' → '.join(lane.via)}" if lane.via else "")
                + (f" → {lane.uses}" if lane.uses else ""),
            ]
        )
        err = expression_error(lane.expression)
        if err:
            findings.append(
                Finding(
                    "lane-expression",
                    "P2",
                    f"lane {lane.name}: not a valid pytest -m expression",
                    f"{lane.expression!r} at {where}: {err}",
                    key=f"{lane.path}\0{lane.name}",
                    anchors=Anchors(where=(Location(path=lane.path, line=lane.line),))
                    if lane.path
                    else Anchors(),
                )
            )
    return rows, findings


def _problem_findings(scan: LaneScan) -> list[Finding]:
    findings: list[Finding] = []
    for path, why in scan.problems:
        sev: Severity = "info" if why.startswith("non-UTF-8") else "P2"
        detail = (
            "expressions from this file may contain U+FFFD where the bytes were not UTF-8"
            if sev == "info"
            else "lanes in this file are missing from the table"
        )
        findings.append(
            Finding("workflow-unreadable", sev, f"{path}: {why}", detail, key=f"{path}\0{why}")
        )
    return findings


def _note_findings(
    ref: str, missing: Sequence[str], unread: Sequence[str], bounded: Sequence[str]
) -> list[Finding]:
    """Info findings for what the scan could not read: pytest -m calls, bounds it hit, local
    actions missing from the tree."""
    findings: list[Finding] = []
    for note in unread:
        findings.append(
            Finding(
                "lane-unread-shell",
                "info",
                f"a pytest -m call not read as a lane: {note}",
                "the lane this command runs is missing from the table",
                key=f"unread-shell\0{note}",
            )
        )
    for note in bounded:
        findings.append(
            Finding(
                "lane-bounded",
                "info",
                note,
                "lanes beyond this point are not in the table",
                key=f"bounded\0{note}",
            )
        )
    if missing:  # e.g. actions checked out into another path at run time
        findings.append(
            Finding(
                "lane-action-missing",
                "info",
                f"{len(missing)} local action(s) have no action.yml at {ref}: what they run is not read",
                "; ".join(missing),
                key="missing-actions\0" + "\0".join(missing),
            )
        )
    return findings


def _controls(scan: LaneScan) -> list[Control]:
    checked = [
        (ln, _expr_in_raw(ln, scan.raw_lines.get((ln.path or "", ln.line or 0))))
        for ln in scan.lanes
        if ln.source != "scenario"
    ]
    # A text composed from ${{ }} parts (``"${{ matrix.m }} and not slow"``) is written nowhere verbatim.
    checked = [(ln, None if ok is False and ln.template is not None else ok) for ln, ok in checked]
    expanded = [ln for ln in scan.lanes if ln.template is not None]
    verdicts = [ok for _, ok in checked if ok is not None]
    return [
        Control(
            "expression read back from the raw line",
            f"{sum(verdicts)} of {len(verdicts)} single-line expressions appear verbatim on their line",
            None if not verdicts else all(verdicts),
        ),
        Control(
            "expanded lanes",
            f"{len(expanded)} lane(s) expanded from ${{{{ matrix | env | inputs }}}} or $VAR "
            f"from {len({(ln.path, ln.job.split('[')[0], ln.input) for ln in expanded})} written expression(s); "
            f"{sum(1 for ln in scan.lanes if ln.template is None and ('${{' in ln.expression))} left unexpanded "
            "(their value is known only when CI runs)",
            None,
        ),
        Control(
            "text scan for marker-named keys",
            f"{scan.mentions} line(s) in {len(scan.files)} workflow file(s) name a marker key; "
            f"{len(scan.unaccounted)} not read as a lane"
            + (
                ""
                if not scan.unaccounted
                else ": " + ", ".join(f"{p}:{n} ({k})" for p, n, k in scan.unaccounted[:10])
            ),
            True if not scan.unaccounted else None,
        ),
    ]


def _unaccounted_finding(scan: LaneScan) -> Finding:
    return Finding(
        "lane-unread",
        "info",
        f"{len(scan.unaccounted)} marker-named key(s) outside the places lanes are read from",
        ", ".join(f"{p}:{n}" for p, n, _ in scan.unaccounted),
        key="unaccounted\0" + "\0".join(f"{p}:{k}" for p, _, k in scan.unaccounted),
    )


def _table(ref: str, rows: list[list[Cell]]) -> Table:
    return Table(
        title=f"CI lanes at {ref}",
        columns=["lane (job)", "input", "marker expression", "file:line", "source"],
        rows=rows,
        legend="lanes expanded over a matrix are named job[key=value] after the keys their expression reads; "
        "'(… default)' lanes are defaults of reusable or manual workflow inputs; 'run' lanes are pytest -m in "
        "a step's script (source 'via' lists the wrappers it was read through: docker run, bash -c, pixi run "
        "TASK, tox -e ENV …); 'action' lanes pytest -m in a local composite action; 'step with' marker inputs "
        "of a step's action; 'scenario' lanes were given by hand",
        control="each expression read back from the raw text at its line; a plain text scan for marker-named "
        "keys counts the lines the YAML walk did not turn into lanes",
    )


def _not_verified(
    ref: str, missing: Sequence[str], unread: Sequence[str], bounded: Sequence[str]
) -> list[str]:
    never = [
        "`run:` scripts are read with a shell parser through docker/bash -c/uv/coverage/python -m "
        "wrappers, the script's assignments, `pixi run` tasks, `tox -e` environments and shell scripts "
        "the step runs from the repository (`cd` is not followed; a script calling another is not "
        "read); make targets and nox sessions are not",
        "whether a lane's job actually runs (if:, paths filters, schedules) is not evaluated",
        "${{ }} is expanded over matrix combinations (first "
        f"{MAX_COMBOS} per job), env: (workflow, job, step), a local composite action's inputs and a "
        "local reusable workflow's inputs as each caller gives them; github, secrets, needs, steps, "
        "vars and functions other than format, contains, startsWith, endsWith, join and fromJSON "
        "are not, so such lanes stay unexpanded",
        "remote actions and remote reusable workflows are not read (their marker inputs are lanes; "
        "what they run is not)",
    ]
    return (
        never
        + [f"bounded: {n}" for n in bounded]
        + (
            [f"local actions not in the tree at {ref}: {len(missing)} (listed in the findings)"]
            if missing
            else []
        )
        + [f"run: script: {n}" for n in unread]
    )


def build_section(ref: str, scan: LaneScan) -> Section:
    """The section of ``scan``, the lanes read at ``ref``."""
    rows, findings = _lane_rows(scan)
    findings += _problem_findings(scan)
    missing = [n[len(MISSING_ACTION) :] for n in scan.notes if n.startswith(MISSING_ACTION)]
    unread = [n[len(UNREAD_SCRIPT) :] for n in scan.notes if n.startswith(UNREAD_SCRIPT)]
    bounded = [n for n in scan.notes if not n.startswith((MISSING_ACTION, UNREAD_SCRIPT))]
    findings += _note_findings(ref, missing, unread, bounded)
    controls = _controls(scan)
    if scan.unaccounted:
        findings.append(_unaccounted_finding(scan))
    return Section(
        id="lanes",
        title=f"CI lanes at {ref}",
        summary=f"{len(scan.lanes)} lane(s) in {len(scan.files)} workflow file(s) at {ref} ({scan.sha[:12]})",
        tables=[_table(ref, rows)],
        findings=findings,
        controls=controls,
        not_verified=_not_verified(ref, missing, unread, bounded),
        data={
            "ref": ref,
            "sha": scan.sha,
            "files": scan.files,
            "rows": [ln.row() for ln in scan.lanes],
        },
    )
