"""Findings ledger across review rounds: new, still present, resolved, retracted."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from harness.errors import UsageError
from harness.report.model import Finding, Report, Section, Table

SCHEMA = "harness.report/1"


@dataclass
class PreviousRound:
    """What an earlier report said: its findings and the head tree it looked at."""

    findings: dict[str, dict]
    head_tree: str
    path: str


def load_previous(path: str) -> PreviousRound:
    """Read an earlier ``report.json``; bad files are usage errors (exit 2)."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"--previous {path}: no such file") from None
    except (OSError, ValueError) as exc:
        raise UsageError(
            f"--previous {path}: not a JSON report ({exc.__class__.__name__})"
        ) from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise UsageError(f"--previous {path}: not a {SCHEMA} report")
    found: dict[str, dict] = {}
    for section in doc.get("sections", []):
        for f in section.get("findings", []):
            if f.get("status") in ("resolved", "retracted"):
                continue
            found[f["id"]] = {**f, "section": section.get("id", "")}
    return PreviousRound(found, str(doc.get("inputs", {}).get("head tree", "")), path)


def apply(report: Report, previous: PreviousRound, head_tree: str) -> Section:
    """Mark each finding of ``report`` and add the earlier ones that disappeared.

    A finding that disappeared while the head's tree is unchanged was *retracted* (the harness or
    the scenario no longer raises it); when the head's tree changed, it was *resolved*.
    """
    current = {f.id for f in report.findings}
    for f in report.findings:
        f.status = "still present" if f.id in previous.findings else "new"
    gone_status = (
        "retracted" if previous.head_tree and previous.head_tree == head_tree else "resolved"
    )
    rows = []
    gone: list[Finding] = []
    for fid, old in sorted(previous.findings.items()):
        if fid in current:
            continue
        gone.append(
            Finding(
                kind=old.get("kind", "finding"),
                severity=old.get("severity", "info"),
                title=old.get("title", fid),
                detail=old.get("detail", ""),
                id=fid,
                status=gone_status,
            )
        )
    counts = {s: 0 for s in ("new", "still present", "resolved", "retracted")}
    for f in [*report.findings, *gone]:
        counts[f.status] += 1
        rows.append([f.id, f.severity, f.status, f.title])
    table = Table(
        "Findings across rounds",
        ["id", "severity", "status", "finding"],
        rows,
        legend="new: not in the previous round; still present: in both; resolved: gone after "
        "the head changed; retracted: gone while the head's tree is the same",
        control=f"previous round: {previous.path} ({len(previous.findings)} open findings, "
        f"head tree {previous.head_tree[:12] or 'unknown'})",
    )
    return Section(
        "ledger",
        "Review rounds",
        summary=", ".join(f"{v} {k}" for k, v in counts.items()),
        tables=[table],
        findings=gone,
        data={"counts": counts, "previous": previous.path},
        not_verified=[
            "that a resolved finding was fixed by the change rather than hidden "
            "by a changed scenario"
        ],
    )
