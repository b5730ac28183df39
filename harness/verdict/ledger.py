"""Findings ledger across review rounds: new, still present, resolved, retracted."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from harness.errors import UsageError
from harness.git import GitRepo
from harness.report.model import Finding, Report, Section, Table

SCHEMA = "harness.report/1"


@dataclass
class PreviousRound:
    """What an earlier report said: its findings and the head tree it looked at."""

    findings: dict[str, dict]
    head_tree: str
    path: str
    commits: tuple[str, ...] = ()  # the 12-hex base and head commits its inputs name


MAX_PREVIOUS = 64 << 20  # a report.json bigger than this is not one the harness wrote
_SEVERITIES = ("P1", "P2", "info")
_TEXT_FIELDS = ("id", "kind", "title", "detail", "key", "status", "waived")
_COMMIT = re.compile(r" @ ([0-9a-f]{7,64})$")


def _shape_problem(doc: dict[str, Any]) -> str | None:
    """Why ``doc`` (a ``harness.report/1`` object) is not shaped like a report the harness wrote."""
    inputs = doc.get("inputs", {})
    if not isinstance(inputs, dict) or not all(isinstance(v, str) for v in inputs.values()):
        return "'inputs' must be a mapping of strings"
    sections = doc.get("sections", [])
    if not isinstance(sections, list):
        return "'sections' must be a list"
    for i, section in enumerate(sections):
        if not isinstance(section, dict):
            return f"sections[{i}] must be a mapping"
        if not isinstance(section.get("id", ""), str):
            return f"sections[{i}].id must be a string"
        findings = section.get("findings", [])
        if not isinstance(findings, list):
            return f"sections[{i}].findings must be a list"
        for j, f in enumerate(findings):
            where = f"sections[{i}].findings[{j}]"
            if not isinstance(f, dict):
                return f"{where} must be a mapping"
            if not isinstance(f.get("id"), str) or not f["id"]:
                return f"{where}.id must be a non-empty string"
            for name in _TEXT_FIELDS:
                if not isinstance(f.get(name, ""), str):
                    return f"{where}.{name} must be a string"
            if f.get("severity", "info") not in _SEVERITIES:
                return f"{where}.severity must be one of {', '.join(_SEVERITIES)}"
    return None


def load_previous(path: str) -> PreviousRound:
    """Read an earlier ``report.json`` and check its whole shape; a bad file is a usage error
    (exit 2), found before any work."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_PREVIOUS + 1)
    except FileNotFoundError:
        raise UsageError(f"--previous {path}: no such file") from None
    except OSError as exc:
        raise UsageError(f"--previous {path}: cannot read it ({exc.strerror})") from None
    if len(raw) > MAX_PREVIOUS:
        raise UsageError(f"--previous {path}: over {MAX_PREVIOUS >> 20} MiB, not a report")
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # RecursionError: arrays nested 100000 deep
        raise UsageError(
            f"--previous {path}: not a JSON report ({exc.__class__.__name__})"
        ) from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise UsageError(f"--previous {path}: not a {SCHEMA} report")
    problem = _shape_problem(doc)
    if problem is not None:
        raise UsageError(f"--previous {path}: not a report the harness wrote: {problem}")
    found: dict[str, dict] = {}
    for section in doc.get("sections", []):
        for f in section.get("findings", []):
            if f.get("status") in ("resolved", "retracted"):
                continue
            found[f["id"]] = {**f, "section": section.get("id", "")}
    inputs = doc.get("inputs", {})
    commits = tuple(
        m.group(1)
        for m in (_COMMIT.search(inputs.get(k, "")) for k in ("base", "head"))
        if m is not None
    )
    return PreviousRound(found, inputs.get("head tree", ""), path, commits)


def check_same_repository(previous: PreviousRound, repo: GitRepo) -> None:
    """Refuse a previous round that names commits of which none is in ``repo``: a report of another
    repository would list all its findings as resolved here."""
    if previous.commits and not any(repo.try_resolve(c) for c in previous.commits):
        raise UsageError(
            f"--previous {previous.path}: none of its commits ({', '.join(previous.commits)}) is in "
            "this repository; a report of another repository?"
        )


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
