"""Which hunk of the fix each test needs: every hunk of BASE..HEAD in a code file (not tests,
docs or changelogs) reverted alone on HEAD, the tests section's files run on each; a test that
passes at HEAD and fails with the hunk reverted needs it. The liveness control is the whole-fix
revert, the ``without_fix`` column."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from harness.checks.paths import is_test_path
from harness.columns.edits import Edit
from harness.columns.trees import Column
from harness.git.patch import FilePatch, diff_trees
from harness.git.repo import GitRepo

MAX_HUNKS = 20
NOT_CODE = (
    ".md",
    ".rst",
    ".txt",
    ".adoc",
    ".toml",
    ".cfg",
    ".ini",
    ".yaml",
    ".yml",
    ".json",
    ".lock",
)


@dataclass
class Hunk:
    file: str
    start: int  # the hunk's first line on HEAD's side (context included)
    end: int
    added: int
    removed: int
    diff: str  # the reverse patch, applied on HEAD
    failing: list[str] = field(default_factory=list)  # pass at HEAD, fail with it reverted
    problem: str = ""  # the revert does not apply, or the run failed

    @property
    def label(self) -> str:
        return f"{self.file}:{self.start}-{self.end}"


def is_code(path: str) -> bool:
    base = posixpath.basename(path).lower()
    return not (
        is_test_path(path)
        or path.endswith(NOT_CODE)
        or base.startswith(("changelog", "changes", "news", "readme", "license"))
        or path.startswith(("docs/", "doc/", ".github/"))
    )


def _reverse(fp: FilePatch, body: list[bytes], start: int) -> tuple[str, int, int, int, int]:
    new = [ln for ln in body if ln[:1] in (b" ", b"+")]
    old = [ln for ln in body if ln[:1] in (b" ", b"-")]
    flip = {b"+": b"-", b"-": b"+", b" ": b" "}
    lines = [flip[ln[:1]] + ln[1:] for ln in body]
    path = fp.new_path or ""
    text = (
        f"--- a/{path}\n+++ b/{path}\n@@ -{start},{len(new)} +{start},{len(old)} @@\n".encode()
        + b"\n".join(lines)
        + b"\n"
    )
    added = sum(1 for ln in body if ln[:1] == b"+")
    removed = sum(1 for ln in body if ln[:1] == b"-")
    return (
        text.decode("utf-8", "surrogateescape"),
        start,
        start + max(len(new), 1) - 1,
        added,
        removed,
    )


def fix_hunks(repo: GitRepo, base: str, head: str) -> tuple[list[Hunk], int]:
    """The code hunks of BASE..HEAD (capped), and how many were past the cap."""
    found: list[Hunk] = []
    for fp in diff_trees(repo, base, head, renames=False):
        path = fp.new_path
        if path is None or fp.binary or fp.status != "M" or not is_code(path):
            continue
        for body, start in zip(fp.hunks, fp.new_starts, strict=False):
            diff, s, e, added, removed = _reverse(fp, body, start)
            found.append(Hunk(path, s, e, added, removed, diff))
    return found[:MAX_HUNKS], max(0, len(found) - MAX_HUNKS)


def hunk_columns(head_column: Column, hunks: list[Hunk]) -> list[Column]:
    """HEAD with one hunk reverted each (then the tests the head column runs)."""
    return [
        Column(
            f"revert {h.label}",
            head_column.ref,
            [Edit(kind="patch", path=h.file, diff=h.diff), *head_column.edits],
            role="control",
        )
        for h in hunks
    ]
