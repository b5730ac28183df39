"""No merge left its conflict markers in the code or the docs (one was found in docs/ once)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"^(<{7} |>{7} |={7}$)", re.MULTILINE)
# Where conflict markers are the data under test (trial-merge fixtures), not leftovers.
DATA = {Path("tests/checks/test_conflicts.py")}


def _files() -> list[Path]:
    out = [ROOT / "README.md", ROOT / "CONTRIBUTING.md"]
    for folder, pattern in (
        ("docs", "*.md"),
        ("harness", "*.py"),
        ("tests", "*.py"),
        ("bench", "*.py"),
    ):
        out += sorted((ROOT / folder).rglob(pattern))
    return [p for p in out if p.is_file() and p.relative_to(ROOT) not in DATA]


def test_the_scan_sees_the_docs_and_the_code() -> None:
    seen = {p.relative_to(ROOT).parts[0] for p in _files()}
    assert {"docs", "harness", "tests", "bench"} <= seen


def test_no_conflict_markers_are_left() -> None:
    left = [
        f"{p.relative_to(ROOT)}:{p.read_text(encoding='utf-8', errors='replace')[: m.start()].count(chr(10)) + 1}"
        for p in _files()
        for m in MARKER.finditer(p.read_text(encoding="utf-8", errors="replace"))
    ]
    assert not left, f"conflict markers left: {left}"
