"""The CI gate: an exit code from findings and a threshold."""

from __future__ import annotations

from collections.abc import Iterable

from harness.errors import UsageError
from harness.report.model import SEVERITY_RANK, Finding, Report

FAIL_ON = ("p1", "p2", "never")


def blocking(findings: Iterable[Finding], fail_on: str) -> list[Finding]:
    """Findings at or above the threshold that are neither waived nor resolved."""
    if fail_on not in FAIL_ON:
        raise UsageError(f"--fail-on must be one of {', '.join(FAIL_ON)}, got {fail_on!r}")
    if fail_on == "never":
        return []
    floor = SEVERITY_RANK[fail_on.upper()]
    return [
        f
        for f in findings
        if SEVERITY_RANK[f.severity] >= floor
        and f.severity != "info"
        and not f.waived
        and f.status not in ("resolved", "retracted")
    ]


def verdict(report: Report, fail_on: str, crashed: bool = False) -> tuple[str, list[Finding]]:
    """The report's opening line and the findings that block it (computed once, for every renderer,
    and kept on the report with the threshold: JUnit's failures); group ``report.causes`` first and
    the line says how many root causes the blocking findings have."""
    blocked = blocking(report.findings, fail_on)
    report.fail_on, report.blocking = fail_on, [f.id for f in blocked]
    if crashed:
        return "HARNESS ERROR: a section crashed (exit 3); the rest of the report stands.", blocked
    if blocked:
        kinds = ", ".join(sorted({f.kind for f in blocked}))
        ids = {f.id for f in blocked}
        n_causes = sum(1 for c in report.causes if ids.intersection(c.findings))
        causes = f" from {n_causes} root cause(s)" if n_causes else ""
        return (
            f"BLOCKED: {len(blocked)} open finding(s) at or above {fail_on.upper()}{causes} ({kinds}).",
            blocked,
        )
    unjudged = f" Not judged: {report.unjudged}." if report.unjudged else ""
    if fail_on == "never":
        return f"NOT GATED (--fail-on never): open findings are listed below.{unjudged}", blocked
    return (
        f"PASS at --fail-on {fail_on}: no open finding at or above the threshold.{unjudged}",
        blocked,
    )
