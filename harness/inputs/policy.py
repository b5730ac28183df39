"""Gate policy: which finding kinds block, and waivers with a reason and an expiry."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import UsageError
from harness.report.model import Finding


@dataclass
class Waiver:
    """A finding (by id or kind) that does not block until ``expires``, and why."""

    match: str  # a finding id or a kind
    reason: str
    expires: dt.date


@dataclass
class Policy:
    """The gate's policy file: its threshold, kinds that always block, waivers, release paths."""

    fail_on: str | None = None
    block_kinds: list[str] = field(default_factory=list)  # these block whatever their severity
    waivers: list[Waiver] = field(default_factory=list)
    # regular expressions (searched in each path): a pick touching only such paths is release-only
    release_paths: list[str] = field(default_factory=list)


def load(path: str) -> Policy:
    """Read a policy YAML file; errors name the file and key (exit 2)."""
    from harness.inputs import yamlpath  # (YAML, ~10 ms of imports, only where a policy is given)

    try:
        doc = yamlpath.safe_load(Path(path).read_text(encoding="utf-8"), f"--policy {path}") or {}
    except FileNotFoundError:
        raise UsageError(f"--policy {path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"--policy {path}: is a directory") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--policy {path}: cannot read it ({exc.__class__.__name__})") from None
    if not isinstance(doc, dict):
        raise UsageError(f"{path}: a policy must be a mapping")
    unknown = set(doc) - {"fail_on", "block", "waivers", "release_paths"}
    if unknown:
        raise UsageError(
            f"{path}: unknown key {sorted(unknown)[0]!r} "
            "(expected fail_on, block, waivers, release_paths)"
        )
    release_paths = doc.get("release_paths", []) or []
    if not isinstance(release_paths, list) or not all(isinstance(r, str) for r in release_paths):
        raise UsageError(f"{path}: release_paths must be a list of regular expressions")
    for i, pattern in enumerate(release_paths):
        try:
            re.compile(pattern)
        except re.error as exc:
            raise UsageError(
                f"{path}: release_paths[{i}] is not a regular expression ({exc})"
            ) from None
    fail_on = doc.get("fail_on")
    if fail_on is not None and str(fail_on).lower() not in ("p1", "p2", "never"):
        raise UsageError(f"{path}: fail_on must be p1, p2 or never")
    block = doc.get("block", []) or []
    if not isinstance(block, list) or not all(isinstance(b, str) for b in block):
        raise UsageError(f"{path}: block must be a list of finding kinds")
    waivers = []
    listed = doc.get("waivers", []) or []
    if not isinstance(listed, list):
        raise UsageError(f"{path}: waivers must be a list of mappings")
    for i, w in enumerate(listed):
        if not isinstance(w, dict):
            raise UsageError(f"{path}: waivers[{i}] must be a mapping")
        match = w.get("id") or w.get("kind")
        if not match or not w.get("reason") or not w.get("expires"):
            raise UsageError(f"{path}: waivers[{i}] needs id (or kind), reason and expires")
        for name in ("id", "kind", "reason"):
            if name in w and not isinstance(w[name], str):
                raise UsageError(f"{path}: waivers[{i}].{name} must be a string")
        extra = sorted(set(w) - {"id", "kind", "reason", "expires"})
        if extra:
            raise UsageError(
                f"{path}: waivers[{i}]: unknown key {extra[0]!r} (expected id, kind, reason, expires)"
            )
        try:
            if isinstance(w["expires"], dt.datetime):  # a time of day: a date is what expires
                raise ValueError
            expires = (
                w["expires"]
                if isinstance(w["expires"], dt.date)
                else dt.date.fromisoformat(str(w["expires"]))
            )
        except ValueError:
            raise UsageError(f"{path}: waivers[{i}].expires must be a date YYYY-MM-DD") from None
        waivers.append(Waiver(str(match), str(w["reason"]), expires))
    return Policy(str(fail_on).lower() if fail_on else None, block, waivers, release_paths)


def apply(policy: Policy, findings: list[Finding], today: dt.date) -> list[str]:
    """Waive matching findings, raise blocking kinds to P1; returns notes (expired waivers)."""
    notes = []
    for f in findings:
        if f.kind in policy.block_kinds and f.severity != "P1":
            f.detail = (f.detail + " " if f.detail else "") + f"(policy blocks kind {f.kind})"
            f.severity = "P1"
        for w in policy.waivers:
            if w.match in (f.id, f.kind):
                if w.expires < today:
                    notes.append(
                        f"waiver for {w.match} expired on {w.expires.isoformat()}: not applied"
                    )
                else:
                    f.waived = f"{w.reason} (until {w.expires.isoformat()})"
    return sorted(set(notes))
