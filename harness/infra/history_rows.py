"""The commit records the history index keeps, as JSON, and the checks each passes when read back:
commit rows kept column by column (``rows_of``), a range's walk and commits (``valid_range``), a
commit as a list of its fields; lengths, digits and types are checked in C where they can be."""

from __future__ import annotations

import re
from itertools import chain
from typing import Any

_BIT = re.compile(r"[0-9]{1,2}")  # a grep's number in a commit row
FULL_ID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?\Z")  # a full commit id (SHA-1 or SHA-256)
# A commit row: [parents, author time, commit time, subject, paths or None, last run used,
# greps checked (bit i: the i-th grep key), {grep bit: body} of the greps it matched].
Row = list[Any]
COLUMNS = ("sha", "parents", "author", "committed", "subject", "paths", "used", "checked")


def has_body(row: Any) -> bool:
    return row is not None and bool(row[7])


def rows_of(data: dict[str, Any], greps: int) -> dict[str, Row] | None:
    """The commit rows of ``index.json`` (kept column by column: read back and checked in C on
    every run that is not served whole), or None where any record has the wrong shape."""
    cols, bodies = data.get("columns"), data.get("bodies")
    if not isinstance(cols, dict) or not all(type(cols.get(c)) is list for c in COLUMNS):
        return None
    shas, parents, author, committed, subject, paths, used, checked = (cols[c] for c in COLUMNS)
    n = len(shas)
    if any(len(cols[c]) != n for c in COLUMNS) or not isinstance(bodies, dict):
        return None
    if not (
        ids(shas)
        and set(map(type, parents)) <= {list}
        and ids(chain.from_iterable(parents))
        and all(set(map(type, x)) <= {int} for x in (author, committed, used, checked))
        and (not checked or (min(checked) >= 0 and max(checked) < 1 << greps))
        and strings(subject)
        and set(map(type, paths)) <= {list, type(None)}
        and strings(chain.from_iterable(filter(None, paths)))
    ):
        return None
    text: list[Any] = [None] * n
    if bodies:
        at = dict(zip(shas, range(n), strict=True))
        for sha, b in bodies.items():
            if sha not in at or type(b) is not dict or not b:
                return None
            if not all(
                type(k) is str
                and _BIT.fullmatch(k) is not None
                and int(k) < greps
                and type(v) is str
                for k, v in b.items()
            ):
                return None
            text[at[sha]] = b
    columns = zip(parents, author, committed, subject, paths, used, checked, text, strict=True)
    rows = dict(zip(shas, map(list, columns), strict=True))
    return rows if len(rows) == n else None


_HEX = b"0123456789abcdef"


def ids(xs: Any) -> bool:
    """Every item a full commit id: 40 or 64 hex digits (lengths and digits checked in C)."""
    xs = list(xs)
    try:
        digits = "".join(xs).encode("ascii")
    except (TypeError, UnicodeEncodeError):
        return False
    return set(map(len, xs)) <= {40, 64} and not digits.translate(None, _HEX)


def strings(x: Any) -> bool:
    """Every item a str (``join`` checks it in C)."""
    try:
        "".join(x)
    except TypeError:
        return False
    return True


def set_body(row: Row, name: str, body: str | None) -> None:
    """Row ``row`` matches grep ``name`` with ``body`` (None: it does not match)."""
    if body is not None:
        if row[7] is None:
            row[7] = {}
        row[7][name] = body
    elif row[7] and name in row[7]:
        del row[7][name]
        if not row[7]:
            row[7] = None


def shas(value: Any) -> bool:
    return isinstance(value, list) and ids(value)


_COMMIT_TYPES = (str, tuple, str, str, str, int, str, str, str, int, str, str, str, bool)


def commit_fields(c: Any) -> list[Any]:
    """A ``git.repo.Commit`` as a JSON list (its fields in order)."""
    return [c.sha, list(c.parents), c.tree, c.author_name, c.author_email, c.author_time,
            c.author_tz, c.committer_name, c.committer_email, c.committer_time, c.committer_tz,
            c.subject, c.body, c.dated]  # fmt: skip


def commit_of(f: list[Any]) -> Any:
    from harness.git.repo import Commit

    return Commit(f[0], tuple(f[1]), *f[2:])


def valid_range(v: Any) -> bool:
    """[walk ([sha, *parents] each), merge base (None: none; "": not asked), commits (``commit_fields``
    each, or None: not read)]."""
    if not (isinstance(v, list) and len(v) == 3 and isinstance(v[0], list)):
        return False
    walk, merge_base, commits = v
    if not (
        all(type(c) is list and c for c in walk)
        and ids(chain.from_iterable(walk))
        and (merge_base is None or merge_base == "" or shas([merge_base]))
    ):
        return False
    if commits is None:
        return True
    return type(commits) is list and all(
        type(c) is list
        and len(c) == 14
        and all(
            type(x) is t or (t is tuple and type(x) is list and ids(x))
            for x, t in zip(c, _COMMIT_TYPES, strict=True)
        )
        and ids(c[:1] + c[2:3])
        for c in commits
    )


def merge_rows(
    commits: dict[str, Row],
    greps: list[str],
    theirs: dict[str, Row],
    their_greps: list[str],
    cap: int,
) -> None:
    """Another run's rows (``theirs``, its greps numbered by ``their_greps``) kept beside
    ``commits``, their grep bits renumbered as ``greps``; a changed-paths list either has is kept.
    Past ``cap`` rows, the rows unused for the most runs go first."""
    for sha, row in theirs.items():
        mine = commits.get(sha)
        if mine is None:
            bits, bodies = 0, {}
            for i, g in enumerate(their_greps):
                if row[6] >> i & 1 and g in greps:
                    j = greps.index(g)
                    bits |= 1 << j
                    if str(i) in (row[7] or {}):
                        bodies[str(j)] = row[7][str(i)]
            commits[sha] = [*row[:6], bits, bodies or None]
        elif mine[4] is None and row[4] is not None:
            mine[4] = row[4]
    if len(commits) > cap:
        ranked = sorted(commits, key=lambda s: commits[s][5])
        for sha in ranked[: len(commits) - cap]:
            del commits[sha]
