"""Report model and renderers (renderers never compute)."""

from __future__ import annotations

from importlib import import_module

from harness.report.model import Code, Control, Details, Finding, Report, Section, Sha, Table
from harness.report.printable import printable

FORMATS = ("term", "md", "json", "html", "junit", "sarif")
_MODULES = {"md": "markdown", "json": "json", "html": "html", "junit": "junit", "sarif": "sarif"}


def render(report: Report, fmt: str, *, full: bool = True, escaped: bool = False) -> str:
    """Render a report in one of FORMATS (``full=False``: the terminal view's one-screen summary);
    text that is not UTF-8 is shown escaped first (JSON escapes it as it writes), unless the caller
    did (``escaped``: ``printable(report)`` once for every format it writes)."""
    if fmt != "json" and not escaped:
        printable(report)
    if fmt == "term":  # rich is imported only when a terminal view is asked for
        from harness.report import terminal

        return terminal.render(report, full=full)
    # Only the asked renderer is imported (start-up time: html alone costs ~10 ms).
    module = import_module(f"harness.report.{_MODULES[fmt]}")
    return str(module.render(report))


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
