"""JSON rendering (schema ``harness.report/1``)."""

from __future__ import annotations

import json

from harness.report.model import Report, open_findings, to_jsonable
from harness.report.safe import json_escape_controls

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
        "causes": [to_jsonable(c) for c in report.causes],
        "sections": [to_jsonable(s) for s in report.sections],
        "not_verified": report.all_not_verified(),
    }
    return (
        json_escape_controls(json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=False)) + "\n"
    )
