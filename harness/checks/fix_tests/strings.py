"""Strings the picks removed that the release still looks for: string literals (8 characters or
more; Python, YAML, JSON, TOML) on lines BASE..HEAD deletes from files that are not tests and
does not add back anywhere in the range, that still occur in HEAD's tree (a log line the pick
deleted while a test still polls for it). Each is counted at BASE, HEAD and the source, and its
references at HEAD listed (tests first)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from harness.checks.paths import is_test_path
from harness.git.evidence import grep_at
from harness.git.patch import diff_trees
from harness.git.repo import GitRepo

MIN_LEN = 8
MAX_STRINGS = 30
MAX_REFS = 50
SUFFIXES = (".py", ".pyi", ".yaml", ".yml", ".json", ".toml")
_LITERAL = re.compile(
    r"""(?<![A-Za-z0-9_])(?:[rbuRBUfF]{0,2})("([^"\\\n]{8,200})"|'([^'\\\n]{8,200})')"""
)


@dataclass
class RemovedString:
    text: str
    removed_from: str  # the file whose line lost it
    counts: dict[str, int] = field(default_factory=dict)  # base / head / source → lines
    references: list[str] = field(default_factory=list)  # "path:line" at HEAD, tests first
    left_out: int = 0  # references past MAX_REFS
    source_keeps: bool = False  # the source still has it outside its tests (the pick removed
    # what the source kept or moved), not only in a test that looks for it


def _literals(line: bytes) -> set[str]:
    text = line.decode("utf-8", "replace")
    out: set[str] = set()
    for m in _LITERAL.finditer(text):
        s = m.group(2) or m.group(3) or ""
        if len(s.strip()) >= MIN_LEN and not s.isspace():
            out.add(s)
    return out


def removed_strings(
    repo: GitRepo, base: str, head: str, source: str | None, source_parent: str | None = None
) -> tuple[list[RemovedString], int]:
    """The removed strings still found at HEAD, and how many candidates were past the cap.

    A removal the source made too (the source's parent to the source loses at least as many
    occurrences) is the fix's own intent: it is kept only while a test at HEAD still looks for
    the string."""
    removed: dict[str, str] = {}
    added: set[str] = set()
    for fp in diff_trees(repo, base, head):
        path = fp.new_path or fp.old_path or ""
        if fp.binary or not path.endswith(SUFFIXES) or is_test_path(path):
            continue  # (what a test stops looking for is the test's business)
        for hunk in fp.hunks:
            for line in hunk:
                if line[:1] == b"-":
                    for s in _literals(line[1:]):
                        removed.setdefault(s, path)
                elif line[:1] == b"+":
                    added |= _literals(line[1:])
    candidates = [s for s in sorted(removed) if s not in added]
    over = max(0, len(candidates) - MAX_STRINGS)
    found: list[RemovedString] = []
    revs = [r for r in (base, head, source, source_parent) if r]
    for s in candidates[:MAX_STRINGS]:
        hits = grep_at(repo, s, revs)
        at_head = hits.get(head, [])
        lost = len(hits.get(base, [])) - len(at_head)
        # still referenced, and really removed somewhere (a line rewritten around an unchanged
        # string, e.g. a docstring that grew a line, keeps its count)
        if not at_head or lost <= 0:
            continue
        refs = sorted(at_head, key=lambda h: (not is_test_path(h.path), h.path, h.line))
        in_tests = any(is_test_path(h.path) for h in at_head)
        mirrored = bool(
            source
            and source_parent
            and len(hits.get(source_parent, [])) - len(hits.get(source, [])) >= lost
        )
        if mirrored and not in_tests:
            continue
        item = RemovedString(s, removed[s])
        item.counts = {"base": len(hits.get(base, [])), "head": len(at_head)}
        if source:
            item.counts["source"] = len(hits.get(source, []))
            item.source_keeps = not mirrored and any(
                not is_test_path(h.path) for h in hits.get(source, [])
            )
        item.references = [f"{h.path}:{h.line}" for h in refs[:MAX_REFS]]
        item.left_out = max(0, len(refs) - MAX_REFS)
        found.append(item)
    return found, over
