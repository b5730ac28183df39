"""The release matrix as a report section: the matrix and releases tables, the findings
(fixed on an older release and missing on a newer one), controls, not-verified notes, JSON data."""

from __future__ import annotations

from collections import Counter

from harness.checks.backports_matrix import STATES, BackportsResult, MatrixCell
from harness.report.model import Cell as TableCell
from harness.report.model import Code, Control, Finding, Section, Sha, Table
from harness.report.printable import printable

SECTION_ID = "backports"
LEGEND = (
    "picked SHA (status): a pick on the release has this source (fidelity's source finding and "
    "status; a merge: its commits' pick) · in-fork: an ancestor of the release's fork point · "
    "reached: on the release another way (merged: an ancestor of the release tip; its commits: a "
    "merge whose commits all are; patch-id SHA: a release commit with the same "
    "git patch-id --stable; subject SHA: a release commit fidelity found no source for, with this "
    "commit's subject, PR numbers and a leading tag aside, which no other source commit has, and "
    "that changes one of its files; "
    "in place: the change itself is at the release tip — each file the commit's after-image, or "
    "its diff reverse-applies there (context and all) and does not apply forward; lines found "
    "elsewhere never count) · n/a: the files it changes do not exist on the release · "
    "missing · applies / conflicts: a trial cherry-pick onto the release tip. Rows: picked (the "
    "source of a pick on some release) · candidate (the candidates file) · rule (the candidate "
    "rule). Releases are ordered oldest first by their fork point's committer date, then by the "
    "version numbers in their names."
)


def _shown(c: MatrixCell) -> str:
    if c.state == "picked":
        return f"picked {(c.pick or '')[:12]} ({c.status})"
    if c.state == "reached":
        return f"reached ({c.how} {c.pick[:12]})" if c.pick else f"reached ({c.how})"
    if c.state == "missing":
        return "missing · " + {True: "applies", False: "conflicts", None: "not tried"}[c.applies]
    return c.state


def _findings(result: BackportsResult) -> list[Finding]:
    out: list[Finding] = []
    configured = {r.sha for r in result.rows if "candidate" in r.reasons}
    names = [r.name for r in result.releases]
    by = {(c.source, c.release): c for c in result.cells}
    info: Counter[str] = Counter()
    info_apply: Counter[str] = Counter()
    for row in result.rows:
        fixed_in: str | None = None
        for n in names:
            c = by[(row.sha, n)]
            if c.state in ("picked", "reached", "in-fork"):
                fixed_in = fixed_in or n
                continue
            if c.state != "missing":
                continue
            applies = {
                True: "a cherry-pick applies cleanly",
                False: "a cherry-pick conflicts",
                None: "not tried",
            }[c.applies]
            if fixed_in is not None:
                out.append(
                    Finding(
                        "backport-regression",
                        "P1",
                        f"{row.sha[:12]} is fixed in {fixed_in} but missing in newer {n}: "
                        f"{row.subject}",
                        f"{fixed_in}: {_shown(by[(row.sha, fixed_in)])}; {n}: {applies}",
                        key=f"{row.sha}:{n}:regression",
                    )
                )
            elif row.sha in configured:
                out.append(
                    Finding(
                        "backport-missing",
                        "P2",
                        f"candidate {row.sha[:12]} is missing on {n}: {row.subject}",
                        applies,
                        key=f"{row.sha}:{n}:candidate",
                    )
                )
            else:
                info[n] += 1
                info_apply[n] += c.applies is True
    for n in names:
        if info[n]:
            out.append(
                Finding(
                    "backport-not-picked",
                    "info",
                    f"{info[n]} row(s) missing on {n} ({info_apply[n]} would apply cleanly)",
                    "rows found by the candidate rule or picked to another release only",
                    key=f"{n}:not-picked",
                )
            )
    for u in result.unmatched:
        out.append(
            Finding(
                "backport-candidate-unmatched",
                "info",
                f"candidate PR {u}: no commit on the source since the oldest fork point names it",
                key=f"unmatched:{u}",
            )
        )
    return out


def backports_section(result: BackportsResult) -> Section:
    """The matrix as a report section (tables, findings, controls, not-verified notes, JSON data)."""
    names = [r.name for r in result.releases]
    by = {(c.source, c.release): c for c in result.cells}
    counts = {n: Counter(by[(r.sha, n)].state for r in result.rows) for n in names}
    tables = [_matrix_table(result, names, by), _releases_table(result, by, counts)]
    findings = _findings(result)
    total = Counter(c.state for c in result.cells)
    summary = f"{len(result.rows)} source commit(s) × {len(names)} release(s): " + (
        ", ".join(f"{total[s]} {s}" for s in STATES if total[s]) or "no rows"
    )
    if result.notes:
        summary += " (" + "; ".join(result.notes) + ")"
    controls = [Control(name, text, ok) for name, text, ok in result.controls]
    controls.append(
        Control(
            "one state per cell",
            f"{len(result.cells)} cells = {len(result.rows)} rows × {len(names)} releases",
            len(result.cells) == len(result.rows) * len(names),
        )
    )
    return printable(
        Section(
            SECTION_ID,
            "Backports: source fixes × release branches",
            summary,
            tables,
            findings,
            controls,
            list(_NOT_VERIFIED),
            [],
            _matrix_data(result),
        )
    )


def _matrix_table(
    result: BackportsResult, names: list[str], by: dict[tuple[str, str], MatrixCell]
) -> Table:
    table_rows: list[list[TableCell]] = [
        [
            i,
            Sha(r.sha),
            r.subject + (f" (also {', '.join(a[:12] for a in r.also)})" if r.also else ""),
            ", ".join(r.reasons),
            *(_shown(by[(r.sha, n)]) for n in names),
        ]
        for i, r in enumerate(result.rows, 1)
    ]
    control_text = "; ".join(f"{name}: {text}" for name, text, _ in result.controls) or "none"
    return Table(
        f"Release matrix: {result.source} × {', '.join(names)}",
        ["#", "source", "subject", "row from", *names],
        table_rows,
        legend=LEGEND,
        control=control_text,
        collapsed=len(table_rows) > 40,
    )


def _releases_table(
    result: BackportsResult,
    by: dict[tuple[str, str], MatrixCell],
    counts: dict[str, Counter[str]],
) -> Table:
    return Table(
        "Releases (oldest first)",
        ["release", "tip", "fork point", "picks", *STATES, "missing that apply"],
        [
            [
                Code(r.name),
                Sha(r.tip),
                Sha(r.fork),
                r.picks,
                *(counts[r.name][s] for s in STATES),
                sum(
                    1
                    for row in result.rows
                    if by[(row.sha, r.name)].state == "missing"
                    and by[(row.sha, r.name)].applies is True
                ),
            ]
            for r in result.releases
        ],
        legend="fork point: where the release leaves the source (the first parent of its oldest "
        "first-parent commit not on the source); picks: the release's non-merge commits "
        "fidelity judged; state counts are over the rows of the matrix",
        control="every row gets exactly one state per release: the counts of a release sum to "
        f"{len(result.rows)}",
    )


_NOT_VERIFIED = [
    "whether a pick that applies cleanly builds or passes tests (a trial merge of content only)",
    "reached (in place): the change's hunks are at the release tip with their context (git apply "
    "--check, reverse), not that they do the same thing there",
    "commits on a release that came from somewhere other than the source branch",
    "the candidate rule is a subject/trailer heuristic: fixes without 'fix' in their subject "
    "are rows only when picked somewhere or listed in --candidates",
    "n/a: a file that moved on the release counts as absent (its path is compared, not its "
    "content)",
]


def _matrix_data(result: BackportsResult) -> dict[str, object]:
    data: dict[str, object] = {
        "source": result.source,
        "releases": [
            {"release": r.name, "tip": r.tip, "fork_point": r.fork, "picks": r.picks}
            for r in result.releases
        ],
        "rows": [
            {
                "source": r.sha,
                "subject": r.subject,
                "from": list(r.reasons),
                "prs": list(r.prs),
                "also": list(r.also),
            }
            for r in result.rows
        ],
        "cells": [c.as_dict() for c in result.cells],
        "notes": list(result.notes),
        "release_order": "fork point committer date, then version numbers in the name",
    }
    return data
