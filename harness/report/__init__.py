"""Report model and renderers (renderers never compute)."""

from __future__ import annotations

from harness.report import html, json, markdown
from harness.report.model import Code, Control, Details, Finding, Report, Section, Sha, Table
from harness.report.printable import printable

FORMATS = ("term", "md", "json", "html")


def render(report: Report, fmt: str, *, full: bool = True) -> str:
    """Render a report in one of FORMATS (``full=False``: the terminal view's one-screen summary);
    text that is not UTF-8 is shown escaped first."""
    printable(report)
    if fmt == "term":
        from harness.report import (
            terminal,  # rich is imported only when a terminal view is asked for
        )

        return terminal.render(report, full=full)
    return {"md": markdown.render, "json": json.render, "html": html.render}[fmt](report)


__all__ = [
    "FORMATS",
    "Code",
    "Control",
    "Details",
    "Finding",
    "Report",
    "Section",
    "Sha",
    "Table",
    "render",
]
