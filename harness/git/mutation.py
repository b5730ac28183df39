"""Git plumbing for mutation work: which lines of the new side a change touches."""

from __future__ import annotations

import re
from collections.abc import Sequence

from harness.git.repo import EMPTY_TREE, GitRepo

_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def changed_lines(
    repo: GitRepo, old: str, new: str, paths: Sequence[str] = ()
) -> dict[str, set[int]]:
    """New-side line numbers each file's change adds or rewrites, from ONE ``diff-tree -U0``.

    A pure deletion marks the line it follows, so the function that lost code still counts.
    Deleted files are left out (nothing of them exists in ``new``).
    """
    args = [
        "diff-tree",
        "-r",
        "-U0",
        "--no-renames",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        old or EMPTY_TREE,
        new,
        "--",
        *paths,
    ]
    out = repo.run(args)
    result: dict[str, set[int]] = {}
    current: str | None = None
    for line in out.split(b"\n"):
        if line.startswith(b"+++ "):
            target = line[4:]
            current = None if target == b"/dev/null" else _path(target)
            if current is not None:
                result.setdefault(current, set())
            continue
        m = _HUNK.match(line)
        if m and current is not None:
            start, count = int(m.group(1)), int(m.group(2) or b"1")
            if count == 0:
                result[current].add(max(start, 1))
            else:
                result[current].update(range(start, start + count))
    return result


def _path(raw: bytes) -> str:
    text = raw.decode("utf-8", "surrogateescape")
    if text.startswith('"'):
        text = (
            bytes(text[1:-1], "utf-8", "surrogateescape")
            .decode("unicode_escape")
            .encode("latin-1")
            .decode("utf-8", "surrogateescape")
        )
    return text[2:] if text.startswith("b/") else text
