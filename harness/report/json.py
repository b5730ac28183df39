"""JSON rendering (schema ``harness.report/1``)."""

from __future__ import annotations

from harness.report.jsontext import dump_utf8, dumps
from harness.report.model import Report, open_findings

SCHEMA = "harness.report/1"


def render(report: Report) -> str:
    return dumps(_document(report)) + "\n"


def render_utf8(report: Report) -> list[bytes]:
    """``render(report).encode()``, in pieces (what ``--output`` writes: never the whole text)."""
    return dump_utf8(_document(report), end="\n")


def _document(report: Report) -> dict[str, object]:
    return {
        "schema": SCHEMA,
        "title": report.title,
        "command": report.command,
        "generated": report.generated,
        "inputs": report.inputs,
        "verdict": report.verdict,
        "open_findings": [f.id for f in open_findings(report)],
        "causes": report.causes,
        "sections": report.sections,
        "not_verified": report.all_not_verified(),
    }
