"""Which columns of a table fit a terminal's width (layout only: nothing is computed from the data
but the widths of its text).

A column needs at least its longest header word and its longest word in any cell (capped: a long
path may still fold inside its cell), so that short words and SHAs are never broken. Columns are
kept in their order (checks put the identifying and deciding columns first) while their needs fit
the width; those that do not are left out, and the note under the table names them.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len

from harness.report.model import Cell, Code, Sha, Table
from harness.report.safe import shown

WORD_CAP = 24  # a longer unbroken token (a path, a command) may fold inside its cell
_EDGE = 1  # the table's left border
_PER_COLUMN = 3  # one space of padding each side and one border


@dataclass(frozen=True)
class Fit:
    columns: list[int]  # indices of the columns shown, in order
    widths: list[int]  # the width of each shown column (same order), padding and borders aside
    left_out: list[str]  # names of the columns left out
    note: str  # the line under the table, "" when every column is shown


def _text(c: Cell) -> str:
    if c is None:
        return ""
    if isinstance(c, Sha):
        return c.short
    if isinstance(c, Code):
        return shown(c.text)
    return shown(str(c))


def _longest_word(text: str) -> int:
    return max((cell_len(w) for w in text.split()), default=0)


def _cells(t: Table, i: int) -> list[str]:
    return [_text(row[i]) if i < len(row) else "" for row in t.rows]


def need(t: Table, i: int) -> int:
    """The narrowest column ``i`` may be without breaking a word of its header or cells."""
    word = max((min(_longest_word(c), WORD_CAP) for c in _cells(t, i)), default=0)
    return max(1, _longest_word(t.columns[i]), word)


def natural(t: Table, i: int) -> int:
    """The width at which column ``i`` wraps nothing (its longest line of header or cell)."""
    texts = [t.columns[i], *_cells(t, i)]
    return max(1, *(cell_len(line) for x in texts for line in x.splitlines() or [""]))


def fit(t: Table, width: int) -> Fit:
    """The columns of ``t`` that fit ``width`` characters (the first one always), and their widths:
    each its need, the space left shared out to the columns that would still wrap, narrowest first."""
    needs = [need(t, i) for i in range(len(t.columns))]
    kept: list[int] = []
    used = _EDGE
    for i, n in enumerate(needs):
        if not kept or used + n + _PER_COLUMN <= width:
            kept.append(i)
            used += n + _PER_COLUMN
    widths = [needs[i] for i in kept]
    wants = [max(natural(t, i), needs[i]) for i in kept]
    spare = width - used
    while spare > 0:
        short = [k for k in range(len(kept)) if widths[k] < wants[k]]
        if not short:
            break
        k = min(short, key=lambda k: (widths[k], k))
        widths[k] += 1
        spare -= 1
    left = [t.columns[i] for i in range(len(t.columns)) if i not in kept]
    note = (
        f"{len(left)} of {len(t.columns)} columns left out to fit {width} characters: "
        f"{', '.join(shown(c) for c in left)} (every column: a wider terminal, report.md or report.html)"
        if left
        else ""
    )
    return Fit(kept, widths, left, note)
