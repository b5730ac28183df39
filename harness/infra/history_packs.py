"""The history index's diff packs: raw ``diff-tree`` chunks end to end in ``diffs-<sha1>.pack``
files named by the sha1 of their bytes. A table (``diffs.json``, kept by the index) names each
chunk's pack, offset, length and sha1; a chunk is read back only when its bytes hash to that sha1.
Files are written through the index's writer (``write``: ``write_atomic`` as the index calls it)."""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeGuard

Writer = Callable[..., None]  # ``write_atomic``'s signature
PACK_NAME = re.compile(r"[0-9a-f]{40}\Z")  # a pack's name: the sha1 of its bytes
MAX_PACK_BYTES = 1 << 40  # an offset past this is not one this code wrote


def valid_table(diffs: Any, max_chunk: int) -> TypeGuard[dict[str, list[Any]]]:
    """Whether ``diffs`` is a pack table: key → [last run used, pack, offset, length (at most
    ``max_chunk``), sha1 of the chunk]."""
    return isinstance(diffs, dict) and all(
        isinstance(k, str)
        and isinstance(v, list)
        and len(v) == 5
        and type(v[0]) is int
        and isinstance(v[1], str)
        and PACK_NAME.match(v[1]) is not None
        and type(v[2]) is int
        and type(v[3]) is int
        and 0 <= v[2] <= MAX_PACK_BYTES
        and 0 <= v[3] <= max_chunk
        and isinstance(v[4], str)
        and PACK_NAME.match(v[4]) is not None
        for k, v in diffs.items()
    )


def packs(folder: Path) -> dict[str, int]:
    """The packs in ``folder`` (regular files named by a sha1), by name, with their sizes; a
    link or other thing of such a name is removed (it is not one this code wrote)."""
    out: dict[str, int] = {}
    for p in folder.glob("diffs-*.pack"):
        name = p.name[6:-5]
        try:
            st = p.lstat()
        except OSError:
            continue
        if PACK_NAME.match(name) and stat.S_ISREG(st.st_mode):
            out[name] = st.st_size
        elif not stat.S_ISDIR(st.st_mode):
            p.unlink(missing_ok=True)
    return out


def read_chunks(path: Path, spans: Sequence[Sequence[Any]]) -> list[bytes | None]:
    """The chunks at ``spans`` ([offset, length, sha1]) of a pack, each None where the pack is
    missing or its bytes there do not hash to the sha1 kept."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return [None] * len(spans)
    try:
        out: list[bytes | None] = []
        for at, size, sha in spans:
            try:
                chunk = os.pread(fd, size, at)
            except (OSError, OverflowError):
                out.append(None)
                continue
            ok = len(chunk) == size and hashlib.sha1(chunk).hexdigest() == sha
            out.append(chunk if ok else None)
        return out
    finally:
        os.close(fd)


def write_pack(
    folder: Path, chunks: Sequence[tuple[str, bytes]], write: Writer
) -> dict[str, list[Any]]:
    """One pack of these chunks (named by the sha1 of its bytes, written a chunk at a time);
    each key's [pack, offset, length, sha1 of the chunk]."""
    named = hashlib.sha1()
    for _, c in chunks:
        named.update(c)
    pack = named.hexdigest()
    data = (c for _, c in chunks)
    write(folder / f"diffs-{pack}.pack", data, prefix=".tmp-", shared=False)
    out, at = {}, 0
    for k, c in chunks:
        out[k] = [pack, at, len(c), hashlib.sha1(c).hexdigest()]
        at += len(c)
    return out


def merge_packs(folder: Path, table: dict[str, list[Any]], write: Writer) -> None:
    """Every live chunk into one new pack (a chunk that does not read back is dropped)."""
    by_pack: dict[str, list[str]] = {}
    for k, v in table.items():
        by_pack.setdefault(v[1], []).append(k)
    live: list[tuple[str, bytes]] = []
    for pack, keys in by_pack.items():
        got = read_chunks(folder / f"diffs-{pack}.pack", [table[k][2:] for k in keys])
        live += [(k, c) for k, c in zip(keys, got, strict=True) if c is not None]
    used = {k: table[k][0] for k, _ in live}
    table.clear()
    for k, v in write_pack(folder, live, write).items():
        table[k] = [used[k], *v]


def keep_table(
    folder: Path,
    table: dict[str, list[Any]],
    theirs: dict[str, list[Any]],
    fresh: dict[str, bytes],
    limits: tuple[int, int, int],
    write: Writer,
) -> set[str]:
    """The table of ``folder`` with another run's (``theirs``) merged in and one new pack of the
    chunks diffed now (``fresh``, used in run ``limits[0]``); past ``limits[1]`` bytes the chunks
    unused for the most runs go, and past ``limits[2]`` packs, or with more dead bytes than live
    ones, the packs are merged into one. Returns the packs nothing points at any more (removed
    once the table that no longer names them is written)."""
    run, max_bytes, max_packs = limits
    for k, v in theirs.items():
        mine = table.get(k)
        if mine is None or mine[1] != v[1]:  # theirs, or where another run moved it
            table[k] = [max(v[0], mine[0] if mine else 0), *v[1:]]
    new = [(k, c) for k, c in fresh.items() if k not in table]
    if new:
        for k, v in write_pack(folder, new, write).items():
            table[k] = [run, *v]
    total = sum(v[3] for v in table.values())
    if total > max_bytes:
        for k in sorted(table, key=lambda k: table[k][0]):
            total -= table.pop(k)[3]
            if total <= max_bytes:
                break
    sizes = packs(folder)
    for k in [k for k, v in table.items() if v[1] not in sizes]:
        del table[k]  # its pack is gone
    live = {v[1] for v in table.values()}
    if len(live) > max_packs or sum(sizes[p] for p in live) > 2 * total + (1 << 20):
        merge_packs(folder, table, write)
        live = {v[1] for v in table.values()}
    return set(sizes) - live
