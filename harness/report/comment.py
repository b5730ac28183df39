"""``comment.md``: the report as one pull request comment, at most ``LIMIT`` characters whatever the range.

GitHub rejects comments over 65,536 characters. The comment opens with a hidden marker (a workflow
finds its own comment by it and edits it each round), the verdict and the causes with their actions;
sections follow, those with open findings in full and the others folded. When the whole does not
fit, sections are trimmed (first rows of each table, long evidence dropped), then reduced to their
summary and findings, and a closing line says what was cut and where the full report is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from harness.report import markdown
from harness.report.model import SEVERITY_RANK, Report, Section, open_findings
from harness.report.printable import printable

MARKER = "<!-- harness-report -->"
Lines = Callable[[Section], list[str]]
LIMIT = 60_000
_ROWS_TRIMMED = 15  # rows kept per table when a section is trimmed
_TABLES_TRIMMED = 3  # tables kept per trimmed section (the first ones: the overview tables)
_FINDINGS_TRIMMED = 10  # findings listed per trimmed section (the causes above list them all by id)
_MAX_NOT_VERIFIED = 25


def _trimmed(s: Section, rows: int) -> tuple[Section, int, int]:
    """The section with its folded tables, long evidence and tables after the first few dropped, and
    every other table cut to its first ``rows`` rows; returns it with the number of rows and tables cut."""
    # The first table (the overview), then the tables backing the most severe findings (a check
    # weighs them), then the others in report order: noise tables go first when space runs out.
    shown = [t for t in s.tables if not t.collapsed or t.weight]
    chosen = {
        id(t) for t in (shown[:1] + sorted(shown[1:], key=lambda t: -t.weight))[:_TABLES_TRIMMED]
    }
    kept = [t for t in shown if id(t) in chosen]  # in report order
    cut = sum(max(0, len(t.rows) - rows) for t in kept)
    tables = [
        t
        if len(t.rows) <= rows
        else replace(
            t, rows=t.rows[:rows], title=f"{t.title} (first {rows} of {len(t.rows)} rows)".strip()
        )
        for t in kept
    ]
    return replace(s, tables=tables, details=[]), cut, len(s.tables) - len(kept)


def _summary_only(s: Section) -> Section:
    return replace(s, tables=[], details=[], controls=[], not_verified=[])


def _block(
    s: Section, is_open: bool, findings: int | None = None, lines: Lines | None = None
) -> str:
    """The section as Markdown (folded unless it has open findings), listing at most ``findings``
    (``lines``: a section's Markdown lines, made once for report.md and this file)."""
    lines = lines or markdown.section
    more = 0 if findings is None else max(0, len(s.findings) - findings)
    # Trimmed, a section lists its most severe findings first (P1 before P2 before info).
    by_severity = sorted(s.findings, key=lambda f: -SEVERITY_RANK[f.severity])
    body = "\n".join(lines(replace(s, findings=by_severity[:findings]) if more else s))
    if more:
        body += f"\n… {more} more finding(s) of this section in the full report\n"
    if is_open:
        return body + "\n"
    n = len(s.findings)
    summary = markdown.text(s.title) + (f" — {n} finding(s)" if n else "")
    return f"<details><summary>{summary}</summary>\n\n{body}\n</details>\n\n"


def _variants(s: Section, is_open: bool, lines: Lines) -> list[tuple[str, str]]:
    """(rendering, what was cut) from the fullest to the smallest."""
    out = [(_block(s, is_open, lines=lines), "")]
    trimmed, rows, folded = _trimmed(s, _ROWS_TRIMMED)
    if rows or folded or s.details:
        what = ", ".join(
            x
            for x in (
                f"{rows} table row(s)" if rows else "",
                f"{folded} table(s)" if folded else "",
                f"{len(s.details)} evidence block(s)" if s.details else "",
            )
            if x
        )
        out.append((_block(trimmed, is_open, _FINDINGS_TRIMMED), f"{s.title}: {what}"))
    if s.tables or s.controls:
        out.append(
            (
                _block(_summary_only(s), is_open, _FINDINGS_TRIMMED),
                f"{s.title}: its tables and controls",
            )
        )
    return out


def _where(full_report: str) -> str:
    """A URL as an autolink (escaping would break it), anything else as escaped text."""
    if re.fullmatch(r"https?://[^\s<>`]+", full_report):
        return f"<{full_report}>"
    return markdown.text(full_report)


def _causes(report: Report, room: int) -> tuple[list[str], str]:
    """The causes block within ``room`` characters: in full, without member lines, then the first ones."""
    full = markdown.causes(report)
    if len("\n".join(full)) <= room:
        return full, ""
    compact = markdown.causes(report, members=False)
    if len("\n".join(compact)) <= room:
        return compact, "each cause's list of findings (their ids stay)"
    keep = len(report.causes)
    while keep > 1 and len("\n".join(markdown.causes(report, members=False, first=keep))) > room:
        keep = max(1, keep * 3 // 4)
    return (
        markdown.causes(report, members=False, first=keep),
        f"causes after the first {keep} of {len(report.causes)}",
    )


def render(
    report: Report,
    full_report: str = "report.md beside this file",
    limit: int = LIMIT,
    *,
    escaped: bool = False,
    made: markdown.Sections | None = None,
) -> str:
    """The comment; never longer than ``limit`` characters (``escaped``: as ``report.render``;
    ``made``: the sections' Markdown lines as report.md was made with them)."""
    if not escaped:
        printable(report)  # bytes that are not UTF-8 shown as \xNN
    head, causes_cut = _head(report, limit)
    tail = _tail(report)
    full_line = f"Full report: {_where(full_report)}."
    opening = "\n".join(head) + "\n"
    closing = "\n".join(tail)
    reserve = 1500  # the cut note
    live = {f.id for f in open_findings(report)}
    sections = [(s, any(f.id in live for f in s.findings)) for s in report.sections]
    lines: Lines = made or markdown.section
    variants = [_variants(s, is_open, lines) for s, is_open in sections]
    budget = limit - len(opening) - len(closing) - len(full_line) - reserve
    # Every section gets its smallest form; then, sections with open findings first, each grows one
    # form at a time while the budget lasts. A section whose smallest form does not fit is left out.
    chosen = _fit(variants, sections, budget)
    parts = [variants[i][level][0] for i, level in enumerate(chosen) if level is not None]
    cuts = ([causes_cut] if causes_cut else []) + [
        variants[i][level][1] for i, level in enumerate(chosen) if level and variants[i][level][1]
    ]
    dropped = [s.title for (s, _), level in zip(sections, chosen, strict=False) if level is None]
    note = ""
    if cuts or dropped:
        what = "; ".join(cuts + ([f"sections left out: {', '.join(dropped)}"] if dropped else []))
        if len(what) > reserve - 200:
            what = what[: reserve - 201] + "…"
        note = f"**Cut to fit a pull request comment ({limit:,} characters):** {markdown.text(what)}.\n\n"
    out = opening + "".join(parts) + closing + "\n" + note + full_line + "\n"
    if len(out) > limit:  # a guard; the budget above keeps this from happening
        keep = limit - len(note) - len(full_line) - 100
        out = (
            out[:keep].rsplit("\n", 1)[0]
            + "\n\n…\n\n"
            + (note or "**Cut to fit a pull request comment.**\n\n")
            + full_line
            + "\n"
        )
    return out


def _head(report: Report, limit: int) -> tuple[list[str], str]:
    """The marker, title, command line, verdict, causes and inputs; what the causes left out."""
    head = [MARKER, f"### {markdown.text(report.title)}", ""]
    if report.generated or report.command:
        meta = markdown.code(report.command) if report.command else ""
        head += [
            f"<sub>Generated {report.generated} · {meta}</sub>"
            if report.generated
            else f"<sub>{meta}</sub>",
            "",
        ]
    head += [f"**Verdict:** {markdown.text(report.verdict or 'not gated')}", ""]
    causes, causes_cut = _causes(report, limit // 4)
    head += causes
    if report.inputs:
        head += [
            "<details><summary>inputs</summary>",
            "",
            "| input | value |",
            "|---|---|",
            *(f"| {markdown.text(k)} | {markdown.code(v)} |" for k, v in report.inputs.items()),
            "",
            "</details>",
            "",
        ]
    return head, causes_cut


def _tail(report: Report) -> list[str]:
    """The not-verified notes, folded."""
    nv = report.all_not_verified()
    tail = [
        "<details><summary>Not verified</summary>",
        "",
        *(f"- {markdown.text(n)}" for n in nv[:_MAX_NOT_VERIFIED]),
        *(
            [f"- … {len(nv) - _MAX_NOT_VERIFIED} more in the full report"]
            if len(nv) > _MAX_NOT_VERIFIED
            else []
        ),
        "",
        "</details>",
        "",
    ]
    return tail


def _fit(
    variants: list[list[tuple[str, str]]], sections: list[tuple[Section, bool]], budget: int
) -> list[int | None]:
    """Which form of each section fits ``budget`` (None: left out)."""
    chosen: list[int | None] = []
    used = 0
    for options in variants:
        fits = len(options[-1][0]) <= budget - used
        chosen.append(len(options) - 1 if fits else None)
        used += len(options[-1][0]) if fits else 0
    order = sorted(range(len(sections)), key=lambda i: (not sections[i][1], i))
    changed = True
    while (
        changed
    ):  # one step up per section per round, so the budget is shared before anyone gets it all
        changed = False
        for i in order:
            level = chosen[i]
            if not level:
                continue
            grow = len(variants[i][level - 1][0]) - len(variants[i][level][0])
            if grow <= budget - used:
                used += grow
                chosen[i] = level - 1
                changed = True
    return chosen
