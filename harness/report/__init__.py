"""Report model and renderers (renderers never compute)."""

from __future__ import annotations

from harness.report import html, json, markdown, terminal
from harness.report.model import Code, Control, Details, Finding, Report, Section, Sha, Table

FORMATS = ("term", "md", "json", "html")


def render(report: Report, fmt: str) -> str:
    """Render a report in one of FORMATS."""
    return {"term": terminal.render, "md": markdown.render, "json": json.render, "html": html.render}[fmt](report)


__all__ = ["FORMATS", "Code", "Control", "Details", "Finding", "Report", "Section", "Sha", "Table", "render"]
