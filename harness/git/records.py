"""Commit records of ``git log -z`` / ``diff-tree -z`` output, read without trusting the text.

Subjects, bodies, author names and paths come from the reviewed repository and may hold any
character but NUL (a subject with \\x01 or \\x1f once split a record and crashed the harness). So
every field is introduced by a NUL (``--format=%x00F1%x00F2…``): the record starts at an empty item
(paths and the -z separators are never empty), its fields are the next ``fields`` items, and the
non-empty items after them are its file list (``--name-only``, ``--raw``).

``log_records`` is the one way the harness reads ``git log``: the fields asked for, a walk of
``include ^exclude`` or the very commits ``shas`` fed on stdin, every record framed as above.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import repeat
from typing import Protocol

# 9999-12-31T23:59:59Z, the last second ``time.gmtime`` shows everywhere
LAST_TIME = 253_402_300_799


class RunsGit(Protocol):
    """What ``log_records`` asks of a repository: ``GitRepo.run`` and ``GitRepo.stream``
    (repo.py builds on this module, so the type is named by what it does)."""

    def run(self, args: Sequence[str], *, input: bytes | None = None) -> bytes: ...

    def stream(self, args: Sequence[str], size: int = ...) -> Iterator[bytes]: ...


def git_time(text: str) -> int | None:
    """Seconds since the epoch of a ``%at``/``%ct`` field, or None when git could not date the
    commit: an ident without email or date, a negative or out-of-range timestamp (git prints
    nothing, or a 20-digit number that no date function takes)."""
    text = text.strip()
    if not text.isdigit() or len(text) > 12:
        return None
    value = int(text)
    return value if value <= LAST_TIME else None


def log_format(*fields: str) -> str:
    """``--format=`` for ``fields`` (placeholders such as ``%H``), each introduced by a NUL."""
    return "--format=" + "".join(f"%x00{f}" for f in fields)


def records(text: str, fields: int) -> Iterator[tuple[Sequence[str], list[str]]]:
    """(the fields, the items after them) of each record of ``text`` (the output decoded whole);
    the first item after the fields loses the newline git puts before a file list. A record cut
    short at the end is dropped."""
    items = text.split("\0")
    k = fields + 1
    # Every record its fields alone (no file list: each starts k items after the last, an empty
    # item, and the text ends with git's NUL): read column by column, in C. A record with a file
    # list puts its first name (never empty) where the next record would start: scanned below.
    if items[-1] == "" and (len(items) - 1) % k == 0 and not any(items[0:-1:k]):
        heads = zip(*(items[i:-1:k] for i in range(1, k)), strict=True)
        return zip(heads, map(list, repeat((), len(items) // k)), strict=True)
    return _scan(items, fields)


def _scan(items: list[str], fields: int) -> Iterator[tuple[Sequence[str], list[str]]]:
    i, n = 0, len(items)
    while i < n:
        if items[i] or i + fields >= n:
            i += 1
            continue
        head = items[i + 1 : i + 1 + fields]
        i += 1 + fields
        rest: list[str] = []
        while i < n and items[i]:
            rest.append(items[i])
            i += 1
        yield head, _names(rest)


def _names(rest: list[str]) -> list[str]:
    """A record's items after its fields: its file list, the newline git puts before it gone."""
    if rest and rest[0].startswith("\n"):
        rest[0] = rest[0][1:]
        if not rest[0]:
            rest.pop(0)
    return rest


def streamed_log_records(
    repo: RunsGit,
    fields: Sequence[str],
    options: Sequence[str] = (),
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    errors: str = "surrogateescape",
) -> Iterator[list[tuple[Sequence[str], list[str]]]]:
    """``log_records`` of a walk, read as git writes them (a listing of 20k commits' paths is
    parsed while git still walks, not after): the same records in the same order, in batches,
    each given once it is whole. Items are cut at NULs (no UTF-8 character is split) and read in
    order by the scan ``records`` makes (``_whole``): a record starts where the scan says, never
    where the text looks like a start (a commit's text decides how the bytes look)."""
    args = ["log", "-z", log_format(*fields), *options, *include, *(f"^{x}" for x in exclude)]
    held, pending = b"", [""]  # bytes after the last NUL read; items from a record's start on
    for chunk in repo.stream([*args, "--"]):
        buf = held + chunk
        last = buf.rfind(b"\0")
        if last < 0:
            held = buf
            continue
        held = buf[last + 1 :]
        # The item before the first NUL continues the last one read.
        items = buf[:last].decode("utf-8", errors).split("\0")
        pending[-1] += items[0]
        pending += items[1:]
        pending.append("")  # (the item the next NUL closes: continued by what follows)
        done, at = _whole(pending, len(fields))
        if done:
            yield done
        pending = pending[at:]
    pending[-1] += held.decode("utf-8", errors)
    rest = list(_scan(pending, len(fields)))
    if rest:
        yield rest


def _whole(items: list[str], fields: int) -> tuple[list[tuple[Sequence[str], list[str]]], int]:
    """The records ``_scan`` reads from the start of ``items`` that a later item closes (their
    file lists end before the last item, which may still grow), and where the next one starts."""
    out: list[tuple[Sequence[str], list[str]]] = []
    i, n = 0, len(items) - 1  # items[n] is still open
    while True:
        while i < n and items[i]:  # (what ``_scan`` skips: no record starts there)
            i += 1
        if i + fields >= n:
            return out, i
        j = i + 1 + fields
        rest: list[str] = []
        while j < n and items[j]:
            rest.append(items[j])
            j += 1
        if j >= n:
            return out, i
        out.append((items[i + 1 : i + 1 + fields], _names(rest)))
        i = j


def log_records(
    repo: RunsGit,
    fields: Sequence[str],
    options: Sequence[str] = (),
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    paths: Sequence[str] = (),
    shas: Sequence[str] | None = None,
    errors: str = "surrogateescape",
) -> Iterator[tuple[Sequence[str], list[str]]]:
    """``records`` of one ``git log -z`` with ``fields`` (placeholders such as ``%H``) and
    ``options``: of the walk ``include ^exclude -- paths``, or, with ``shas``, of those very
    commits in that order (``--no-walk=unsorted``, fed on stdin). Text decoded as UTF-8 with
    ``errors``."""
    args = ["log", "-z", log_format(*fields), *options]
    if shas is not None:
        out = repo.run(
            [*args, "--no-walk=unsorted", "--stdin"], input="".join(s + "\n" for s in shas).encode()
        )
    else:
        out = repo.run([*args, *include, *(f"^{x}" for x in exclude), "--", *paths])
    return records(out.decode("utf-8", errors), len(fields))
