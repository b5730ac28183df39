"""Wide tables in the terminal: the columns that fit are shown whole, the others named under the table.

The tables are the demo report's own (``harness demo``, a real compare with a mutation table of 13
columns), rebuilt from its report.json and rendered at several terminal widths.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.cells import cell_len

from harness.report import terminal
from harness.report.fit import fit
from harness.report.model import Report, Section, Sha, Table

NOTE = re.compile(r"(\d+) of (\d+) columns left out to fit (\d+) characters: (.*?) \(every column")


def _cell(v: object) -> object:
    return Sha(v) if isinstance(v, str) and re.fullmatch(r"[0-9a-f]{40}", v) else v


def demo_tables(demo_dir: Path) -> list[Table]:
    doc = json.loads((demo_dir / "report.json").read_text(encoding="utf-8"))
    return [
        Table(t["title"], t["columns"], [[_cell(c) for c in r] for r in t["rows"]])
        for s in doc["sections"]
        for t in s["tables"]
        if t["rows"]
    ]


def _render(t: Table, width: int) -> str:
    report = Report("t", "", sections=[Section("s", "s", tables=[t])], verdict="x")
    return terminal.render(report, width=width, full=True)


@pytest.mark.parametrize("width", [80, 100, 120])
def test_mutation_table_keeps_whole_words_and_names_what_it_left_out(
    demo_dir: Path, width: int
) -> None:
    (table,) = [t for t in demo_tables(demo_dir) if len(t.columns) == 13]  # the mutation table
    out = _render(table, width)
    lines = out.splitlines()
    assert max(cell_len(line) for line in lines) <= width
    top = next(i for i, line in enumerate(lines) if line.startswith("┏"))
    mid = next(i for i, line in enumerate(lines) if line.startswith("┡"))
    header = " ".join(lines[top:mid])
    words = set(re.findall(r"[^\s┃┏┓━┳]+", header))
    joined = " ".join(out.split())
    m = NOTE.search(joined)
    assert m, f"no note of the columns left out at {width}: {out}"
    left = m.group(4).split(", ")
    assert int(m.group(1)) == len(left) and int(m.group(2)) == 13 and int(m.group(3)) == width
    kept = [c for c in table.columns if c not in left]
    assert kept[:3] == ["mutation", "expect", "verdict"]
    for col in kept:  # each word of each shown header whole: no "mutati / on", "verdic / t"
        assert set(col.split()) <= words, (col, header)
    for col in left:
        assert not set(col.split()) <= words, (col, header)
    tokens = set(re.findall(r"[^\s│┃]+", out))
    for row in table.rows:  # the shown cells' words are whole too (a SHA is one word)
        for i, c in enumerate(row):
            text = c.short if isinstance(c, Sha) else str(c or "")
            if table.columns[i] in kept:
                assert {w for w in text.split() if len(w) <= 12} <= tokens, (text, out)


def test_every_demo_table_fits_every_width(demo_dir: Path) -> None:
    for t in demo_tables(demo_dir):
        for width in (60, 100, 200):
            out = _render(t, width)
            assert max(cell_len(line) for line in out.splitlines()) <= width, (t.title, width, out)
            got = fit(t, width)
            assert got.columns[0] == 0 and len(got.columns) + len(got.left_out) == len(t.columns)
            assert (got.note == "") == (not got.left_out)
        assert fit(t, 1000).left_out == []  # a wide terminal shows everything, with no note
        assert "columns left out" not in _render(t, 1000)
