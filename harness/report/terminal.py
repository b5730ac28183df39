"""Terminal view with rich: by default one screen (verdict, causes with actions, a line per section);
``full=True`` adds every table, finding and control."""

from __future__ import annotations

import io

from rich.console import Console
from rich.markup import escape as _escape
from rich.table import Table as RichTable

from harness.report.fit import fit
from harness.report.model import Cell, Code, Finding, Report, Section, Sha, Table, open_findings
from harness.report.printable import printable
from harness.report.safe import shown

_SEV_STYLE = {"P1": "bold red", "P2": "yellow", "info": "cyan"}


def escape(text: str) -> str:
    """Repository data as rich markup: no terminal escapes or control characters, markup escaped."""
    return _escape(shown(text))


def _cell(c: Cell) -> str:
    if c is None:
        return ""
    if isinstance(c, Sha):
        return f"[magenta]{c.short}[/]"
    if isinstance(c, Code):
        return f"[green]{escape(c.text)}[/]"
    return escape(str(c))


def _table(t: Table, width: int = 120) -> RichTable:
    shown_cols = fit(t, width)  # the columns that fit without breaking words (report/fit.py)
    legend = " · ".join(x for x in (t.legend, f"Control: {t.control}" if t.control else "") if x)
    rt = RichTable(
        title=escape(t.title) if t.title else None,
        title_justify="left",
        show_lines=False,
        caption=escape("\n".join(x for x in (legend, shown_cols.note) if x)) or None,
        caption_justify="left",
    )
    for i, w in zip(shown_cols.columns, shown_cols.widths, strict=True):
        rt.add_column(escape(t.columns[i]), overflow="fold", width=w)
    for row in t.rows:
        rt.add_row(*(_cell(row[i]) if i < len(row) else "" for i in shown_cols.columns))
    return rt


SCREEN = 40  # lines of the default view, whatever the range
_SECTIONS_SHOWN = 12  # section lines before "… N more"


def _one(console: Console, text: str) -> None:
    """One screen line: never wrapped (an ellipsis instead)."""
    console.print(text, no_wrap=True, overflow="ellipsis")


def _causes(console: Console, report: Report, room: int, full: bool) -> None:
    """The causes within ``room`` lines (two each: title, action), most severe first; the rest
    counted on one line. ``full``: every cause with its findings' ids."""
    live = open_findings(report)
    if not report.causes:
        for f in live[: max(0, room)] if not full else live:
            _one(
                console,
                f"  [{_SEV_STYLE[f.severity]}]{f.severity}[/] {escape(f.title)} ({escape(f.id)})",
            )
        return
    _one(
        console,
        f"[bold]What to do[/] ({len(live)} open finding(s) from {len(report.causes)} cause(s)):",
    )
    shown = report.causes if full else report.causes[: max(0, (room - 2) // 2)]
    if not full and len(shown) < len(report.causes) and (room - 1) // 2 >= len(report.causes):
        shown = report.causes  # the "more" line is not needed after all
    for n, c in enumerate(shown, 1):
        count = f" [dim]({len(c.findings)} finding(s))[/]" if len(c.findings) > 1 else ""
        _one(console, f"{n:>2}. [{_SEV_STYLE[c.severity]}]{c.severity}[/] {escape(c.title)}{count}")
        _one(console, f"    [bold]→[/] {escape(c.action)}")
        if full:
            _one(
                console,
                f"    [dim]{len(c.findings)} finding(s): {escape(', '.join(c.findings))}[/]",
            )
    rest = report.causes[len(shown) :]
    if rest:
        by: dict[str, int] = {}
        for c in rest:
            by[c.severity] = by.get(c.severity, 0) + 1
        what = ", ".join(f"{v} {k}" for k, v in sorted(by.items()))
        _one(console, f"[dim]    … {len(rest)} more cause(s) ({what}): report.md, or --full[/]")


def _section_line(s: Section) -> str:
    counts: dict[str, int] = {}
    for f in s.findings:
        if not f.waived and f.status not in ("resolved", "retracted"):
            counts[f.severity] = counts.get(f.severity, 0) + 1
    shown_counts = [(k, v) for k, v in sorted(counts.items()) if k != "info"]
    plain = " ".join(f"{v} {k}" for k, v in shown_counts) or "ok"
    styled = " ".join(f"[{_SEV_STYLE[k]}]{v} {k}[/]" for k, v in shown_counts) or "[green]ok[/]"
    failed = sum(1 for c in s.controls if c.ok is False)
    extra = f" [red]{failed} control(s) failed[/]" if failed else ""
    pad = " " * max(1, 10 - len(plain))
    return (
        f"  {styled}{pad}[bold]{escape(s.title)}[/]"
        + (f" — {escape(s.summary)}" if s.summary else "")
        + extra
    )


def _full_section(console: Console, s: Section) -> None:
    console.print()
    console.rule(escape(s.title), align="left")
    if s.summary:
        console.print(escape(s.summary))
    for t in s.tables:
        console.print(_table(t, console.width))
    for f in s.findings:
        _finding(console, f)
    for c in s.controls:
        mark = {True: "[green]ok[/]", False: "[red]FAILED[/]", None: "[cyan]info[/]"}[c.ok]
        console.print(f"control {mark} {escape(c.name)}: {escape(c.result)}")
    for d in s.details:
        lines = d.body.splitlines()
        console.print(
            f"[dim]{escape(d.summary)} ({len(lines)} lines, see the Markdown/HTML report)[/]"
        )


def _finding(console: Console, f: Finding) -> None:
    waived = f" (waived: {escape(f.waived)})" if f.waived else ""
    status = f" [{f.status}]" if f.status else ""
    console.print(
        f"[{_SEV_STYLE[f.severity]}]{f.severity}[/] {escape(f.id)}{escape(status)} "
        f"{escape(f.title)}{waived}"
    )
    if f.detail:
        console.print(f"    [dim]{escape(f.detail)}[/]")


def render_to(console: Console, report: Report, full: bool = False) -> None:
    printable(report)  # bytes that are not UTF-8 shown as \xNN
    console.rule(f"[bold]{escape(report.title)}")
    head = 1
    if report.command:
        _one(console, f"[dim]{escape(report.command)}[/]")
        head += 1
    if report.inputs.get("overridden"):
        _one(console, f"[dim]{escape(report.inputs['overridden'])}[/]")
        head += 1
    _one(console, f"[bold]Verdict:[/] {escape(report.verdict or 'not gated')}")
    head += 1
    sections = report.sections if full else _sections_shown(report.sections)
    more_sections = len(report.sections) - len(sections)
    # What is left for the causes: the header lines above, a blank line, the sections' heading,
    # their lines (and a "more" line), the closing line.
    tail = 1 + 1 + len(sections) + (1 if more_sections else 0) + 1
    _causes(console, report, SCREEN - head - tail, full)
    if full:
        for s in report.sections:
            _full_section(console, s)
        console.print()
        console.rule("Not verified", align="left")
        for n in report.all_not_verified():
            console.print(f"- {escape(n)}")
        return
    console.print()
    _one(console, f"[bold]Sections[/] ({len(report.sections)}):")
    for s in sections:
        _one(console, _section_line(s))
    if more_sections:
        _one(console, f"[dim]  … {more_sections} more section(s) without open findings[/]")
    _one(
        console,
        f"[dim]{len(report.all_not_verified())} item(s) not verified · every table: --full, "
        "or report.md / report.html[/]",
    )


def _sections_shown(sections: list[Section]) -> list[Section]:
    """At most ``_SECTIONS_SHOWN`` section lines: those with open findings or failed controls
    first, in report order."""
    if len(sections) <= _SECTIONS_SHOWN:
        return sections

    def busy(s: Section) -> bool:
        return any(
            f.severity != "info" and not f.waived and f.status not in ("resolved", "retracted")
            for f in s.findings
        ) or any(c.ok is False for c in s.controls)

    keep = {id(s) for s in [x for x in sections if busy(x)][: _SECTIONS_SHOWN - 1]}
    for s in sections:
        if len(keep) >= _SECTIONS_SHOWN - 1:
            break
        keep.add(id(s))
    return [s for s in sections if id(s) in keep]


def render(report: Report, width: int = 120, full: bool = False) -> str:
    buf = io.StringIO()
    render_to(
        Console(file=buf, width=width, color_system=None, force_terminal=False, highlight=False),
        report,
        full,
    )
    return buf.getvalue()
