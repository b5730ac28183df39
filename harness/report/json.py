"""JSON rendering (schema ``harness.report/1``)."""

from __future__ import annotations

from harness.report.jsontext import dumps
from harness.report.model import Report, open_findings

SCHEMA = "harness.report/1"


def render(report: Report) -> str:
    doc = {
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
    return dumps(doc) + "\n"
