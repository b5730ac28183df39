"""The release matrix's inputs: a candidates file (shas, refs, PR numbers or ``gh pr list``
JSON) or a scenario's list, the candidate rule's subject pattern and ``--since``; each bad entry
a usage error with where it came from."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.errors import UsageError
from harness.git import GitRepo

# The default candidate rule: a fix by its subject ("fix …", "Fix …", "fix(scope): …", "BUG: …",
# after an optional "[tag] "), or a "Fixes #N" line in the message. Linear-time patterns.
DEFAULT_SUBJECT_RULE = (
    r"^(?:\[[^\]\n]{0,80}\]\s{0,8})?(?:[Ff]ix(?:es|ed)?\b|BUG:|fix\([^)\n]{0,80}\)!?:)"
)
_HEXISH = re.compile(r"^[0-9a-fA-F]{7,64}$")
_PR = re.compile(r"^(?:#|PR ?#?|pr ?#?)?(\d{1,6})$")


@dataclass(frozen=True)
class CandidateSpec:
    """One entry of a candidates file: a commit (sha or ref) or a PR number, with its line."""

    where: str  # "FILE:LINE" or "FILE[i]", for messages
    ref: str | None = None
    pr: int | None = None


def read_candidates(path: str) -> list[CandidateSpec]:
    """Entries of a candidates file: one sha, ref or PR number (``123``, ``#123``) a line (blank
    lines and ``# …`` comments skipped), or the JSON of ``gh pr list --json number[,mergeCommit]``
    (a list of ``{"number": N}``, a merge commit's ``oid`` used when given). An unreadable file or
    a line that is neither is a usage error."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise UsageError(f"--candidates {path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"--candidates {path}: is a directory") from None
    except OSError as exc:
        raise UsageError(
            f"--candidates {path}: cannot read it ({exc.__class__.__name__})"
        ) from None
    if len(raw) > 4 << 20:
        raise UsageError(f"--candidates {path}: over 4 MiB")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"--candidates {path}: not UTF-8 text") from None
    if text.lstrip().startswith(("[", "{")):
        return _json_candidates(path, text)
    return parse_candidates([(f"{path}:{n}", line) for n, line in enumerate(text.splitlines(), 1)])


def parse_candidates(items: Sequence[tuple[str, str]]) -> list[CandidateSpec]:
    """``(where, text)`` entries (a file's lines, a scenario's list) as candidates: a sha or ref, or
    a PR number (``123``, ``#123``, ``PR #123``); blank entries and ``# …`` comments skipped."""
    out: list[CandidateSpec] = []
    for where, line in items:
        item = line.strip()
        if not item or item.startswith("# ") or item == "#":
            continue
        m = _PR.match(item)
        if m and not (len(item) >= 7 and _HEXISH.match(item)):
            out.append(CandidateSpec(where, pr=int(m.group(1))))
        elif " " in item or "\t" in item or item.startswith("-") or len(item) > 200:
            raise UsageError(f"{where}: expected a commit or a PR number, got {item[:60]!r}")
        else:
            out.append(CandidateSpec(where, ref=item))
    return out


def _json_candidates(path: str, text: str) -> list[CandidateSpec]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"--candidates {path}: not valid JSON ({exc.msg}, line {exc.lineno})"
        ) from None
    if isinstance(doc, dict):
        doc = [doc]
    if not isinstance(doc, list):
        raise UsageError(f'--candidates {path}: expected a JSON list of {{"number": N}}')
    out: list[CandidateSpec] = []
    for i, item in enumerate(doc):
        where = f"{path}[{i}]"
        if isinstance(item, int) and not isinstance(item, bool) and item > 0:
            out.append(CandidateSpec(where, pr=item))
            continue
        if not isinstance(item, dict):
            raise UsageError(f'{where}: expected {{"number": N}} or a number')
        number = item.get("number")
        merge = item.get("mergeCommit")
        oid = merge.get("oid") if isinstance(merge, dict) else None
        if isinstance(oid, str) and _HEXISH.match(oid):
            out.append(
                CandidateSpec(where, ref=oid, pr=number if isinstance(number, int) else None)
            )
        elif isinstance(number, int) and not isinstance(number, bool) and number > 0:
            out.append(CandidateSpec(where, pr=number))
        else:
            raise UsageError(f'{where}: expected a positive "number"')
    return out


def compile_rule(pattern: str | None, where: str = "--rule") -> re.Pattern[str]:
    """The candidate rule's subject pattern (default: a fix by its subject)."""
    try:
        return re.compile(pattern if pattern is not None else DEFAULT_SUBJECT_RULE)
    except re.error as exc:
        raise UsageError(f"{where}: not a regular expression ({exc})") from None


def since_of(repo: GitRepo, value: str | None) -> tuple[str, str] | None:
    """``--since``: ("ref", sha) when it names a commit, ("date", text) for YYYY-MM-DD[ HH:MM[:SS]]."""
    if value is None:
        return None
    sha = repo.try_resolve(value) if not value.startswith("-") else None
    if sha:
        return ("ref", sha)
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?", value):
        import datetime as dt

        try:  # the shape alone let 2024-02-30 and 0000-00-00 through (git reads them its own way)
            dt.datetime.fromisoformat(value)
        except ValueError:
            raise UsageError(f"--since {value}: not a calendar date") from None
        return ("date", value)
    raise UsageError(f"--since {value}: not a commit or a YYYY-MM-DD date")
