"""Terminal view with rich."""

from __future__ import annotations

import io

from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

from harness.report.model import Cell, Code, Report, Sha, Table, open_findings

_SEV_STYLE = {"P1": "bold red", "P2": "yellow", "info": "cyan"}


def _cell(c: Cell) -> str:
    if c is None:
        return ""
    if isinstance(c, Sha):
        return f"[magenta]{c.short}[/]"
    if isinstance(c, Code):
        return f"[green]{escape(c.text)}[/]"
    return escape(str(c))


def _table(t: Table) -> RichTable:
    rt = RichTable(title=escape(t.title) if t.title else None, title_justify="left", show_lines=False,
                   caption=escape(" · ".join(x for x in (t.legend, f"Control: {t.control}" if t.control else "")
                                             if x)) or None, caption_justify="left")
    for col in t.columns:
        rt.add_column(escape(col), overflow="fold")
    for row in t.rows:
        rt.add_row(*(_cell(c) for c in row))
    return rt


def render_to(console: Console, report: Report) -> None:
    console.rule(f"[bold]{escape(report.title)}")
    if report.command:
        console.print(f"[dim]{escape(report.command)}[/]")
    console.print(f"[bold]Verdict:[/] {escape(report.verdict or 'not gated')}")
    for f in open_findings(report):
        console.print(f"  [{_SEV_STYLE[f.severity]}]{f.severity}[/] {escape(f.title)} ({escape(f.id)})")
    for s in report.sections:
        console.print()
        console.rule(escape(s.title), align="left")
        if s.summary:
            console.print(escape(s.summary))
        for t in s.tables:
            console.print(_table(t))
        for f in s.findings:
            waived = f" (waived: {escape(f.waived)})" if f.waived else ""
            status = f" [{escape(f.status)}]" if f.status else ""
            console.print(f"[{_SEV_STYLE[f.severity]}]{f.severity}[/] {escape(f.id)}{escape(status)} "
                          f"{escape(f.title)}{waived}")
            if f.detail:
                console.print(f"    [dim]{escape(f.detail)}[/]")
        for c in s.controls:
            mark = {True: "[green]ok[/]", False: "[red]FAILED[/]", None: "[cyan]info[/]"}[c.ok]
            console.print(f"control {mark} {escape(c.name)}: {escape(c.result)}")
        for d in s.details:
            lines = d.body.splitlines()
            console.print(f"[dim]{escape(d.summary)} ({len(lines)} lines, see the Markdown/HTML report)[/]")
    console.print()
    console.rule("Not verified", align="left")
    for n in report.all_not_verified():
        console.print(f"- {escape(n)}")


def render(report: Report, width: int = 120) -> str:
    buf = io.StringIO()
    render_to(Console(file=buf, width=width, color_system=None, force_terminal=False, highlight=False), report)
    return buf.getvalue()
