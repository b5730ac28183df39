"""What a runner reports in words (a skip reason, an error line) without the run's own folders:
the cell's folder is new each run, a tree's is this machine's, the work area holds the run's
folder. Written as ``<tmp>``, ``<tree>``, ``<work>``, so the same run gives the same report."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from harness.infra import workarea

REASON_CHARS = 200  # a skip reason as the report keeps it


def run_places(tree: Path, home: Path) -> list[tuple[str, str]]:
    """The run's folders (and their real paths), longest first: what ``scrub`` replaces."""
    out = {str(home): "<tmp>", str(tree): "<tree>", str(workarea.work_area()): "<work>"}
    for path, name in list(out.items()):
        out.setdefault(os.path.realpath(path), name)
    return sorted(out.items(), key=lambda kv: -len(kv[0]))


def scrub(text: str, places: Sequence[tuple[str, str]]) -> str:
    """``text`` with the run's folders written as their placeholders (before it is cut)."""
    for path, name in places:
        text = text.replace(path, name)
    return text


def reason_text(text: str, places: Sequence[tuple[str, str]]) -> str:
    """A skip reason as the report shows it: scrubbed, on one line, cut."""
    return " ".join(scrub(text, places).split())[:REASON_CHARS] or "skipped"
