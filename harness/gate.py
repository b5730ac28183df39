"""The CI gate: an exit code from findings and a threshold."""

from __future__ import annotations

from typing import Iterable

from harness.errors import EXIT_BLOCKED, EXIT_OK, UsageError
from harness.report.model import SEVERITY_RANK, Finding

FAIL_ON = ("p1", "p2", "never")


def blocking(findings: Iterable[Finding], fail_on: str) -> list[Finding]:
    """Findings at or above the threshold that are neither waived nor resolved."""
    if fail_on not in FAIL_ON:
        raise UsageError(f"--fail-on must be one of {', '.join(FAIL_ON)}, got {fail_on!r}")
    if fail_on == "never":
        return []
    floor = SEVERITY_RANK[fail_on.upper()]
    return [f for f in findings if SEVERITY_RANK[f.severity] >= floor and f.severity != "info"
            and not f.waived and f.status not in ("resolved", "retracted")]


def exit_code(findings: Iterable[Finding], fail_on: str) -> int:
    return EXIT_BLOCKED if blocking(findings, fail_on) else EXIT_OK
