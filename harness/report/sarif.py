"""SARIF 2.1.0 rendering: the findings as one run's results, for code-scanning views.

One rule per finding kind, one result per finding: its level from the severity, its files and
lines from ``Finding.anchors["where"]`` (a result without a known place has no location), its id
as the partial fingerprint that keeps it the same alert across runs, the ledger's status as
``baselineState`` and a waiver as an accepted suppression.
"""

from __future__ import annotations

from typing import Any

from harness import __version__
from harness.report.jsontext import dumps
from harness.report.model import Finding, Location, Report

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"P1": "error", "P2": "warning", "info": "note"}
BASELINE = {
    "new": "new",
    "still present": "unchanged",
    "resolved": "absent",
    "retracted": "absent",
}
FINGERPRINT = "harness/findingId/v1"
ROOT = "SRCROOT"  # the reviewed repository's root (the CI's checkout of HEAD)


def _location(w: Location) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": w["path"], "uriBaseId": ROOT}}
    if w["line"]:
        physical["region"] = {"startLine": w["line"]}
    return {"physicalLocation": physical}


def _message(f: Finding) -> str:
    return f"{f.title}\n{f.detail}" if f.detail else f.title


def _result(f: Finding, section: str, rule: int, blocking: set[str]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": f.kind,
        "ruleIndex": rule,
        "level": LEVELS[f.severity],
        "message": {"text": _message(f)},
    }
    where = f.anchors.get("where", ())
    if where:
        result["locations"] = [_location(w) for w in where]
    result["partialFingerprints"] = {FINGERPRINT: f.id}
    if f.status in BASELINE:
        result["baselineState"] = BASELINE[f.status]
    if f.waived:
        result["suppressions"] = [
            {"kind": "external", "status": "accepted", "justification": f.waived}
        ]
    result["properties"] = {
        "id": f.id,
        "severity": f.severity,
        "section": section,
        "blocking": f.id in blocking,
    }
    return result


def render(report: Report) -> str:
    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}  # a kind's rule
    results = []
    blocking = set(report.blocking)
    for section in report.sections:
        for f in section.findings:
            if f.kind not in index:
                index[f.kind] = len(rules)
                rules.append(
                    {
                        "id": f.kind,
                        "shortDescription": {"text": f"{f.kind} ({section.id})"},
                        "properties": {"section": section.id},
                    }
                )
            results.append(_result(f, section.id, index[f.kind], blocking))
    run = {
        "tool": {
            "driver": {
                "name": "harness",
                "version": __version__,
                "rules": rules,
            }
        },
        "originalUriBaseIds": {
            ROOT: {"description": {"text": "the root of the reviewed repository at HEAD"}}
        },
        "invocations": [
            {
                "commandLine": report.command,
                # a crashed section is a harness-error finding (harness/compare.py)
                "executionSuccessful": all(f.kind != "harness-error" for f in report.findings),
            }
        ],
        "results": results,
        "properties": {
            "title": report.title,
            "generated": report.generated,
            "inputs": report.inputs,
            "verdict": report.verdict,
            "failOn": report.fail_on,
            "notVerified": report.all_not_verified(),
        },
    }
    doc = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
    return dumps(doc) + "\n"
