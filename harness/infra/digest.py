"""A kept file that carries a digest of its own content, checked on every load.

Every file the cache keeps (a section, a cell, a whole answer, a memo, the history index) is one
JSON object whose last member is ``"digest": "<sha256>"``: the sha256 of every byte before it (the
object's text up to that member, so its stamp and key, what it was computed from, are covered
too). ``seal`` writes it as the text is produced (a large index is never held twice); ``opened``
checks it on the bytes read back before they are parsed. A file that is cut short, has a flipped
bit, or was edited into another well-formed answer fails the check: it is ignored whole and
recomputed, with one line on stderr (``say_mismatch``) so the user learns why.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

_HEAD = b',"digest":"'
_TAIL = b'"}'
TRAILER = len(_HEAD) + 64 + len(_TAIL)  # bytes after the sealed body
_HEX = frozenset(b"0123456789abcdef")


def seal(parts: str | Iterable[str]) -> Iterator[str]:
    """The text of a JSON object (given whole or in parts, ending with its ``}``) with a last
    member ``"digest"``: the sha256 of every byte before it."""
    h = hashlib.sha256()
    held: str | None = None
    before = False  # any text yielded before the last part
    for part in [parts] if isinstance(parts, str) else parts:
        if held is not None:
            h.update(held.encode("utf-8"))
            before = before or bool(held)
            yield held
        held = part
    body = (held or "").rstrip()
    last = body[:-1]
    if not body.endswith("}") or not (before or last.strip() not in ("", "{")):
        raise ValueError("only a non-empty JSON object is sealed")
    h.update(last.encode("utf-8"))
    yield last
    yield (_HEAD + h.hexdigest().encode() + _TAIL).decode()


def sealed_text(text: str) -> str:
    """``seal`` of one text, as one string."""
    return "".join(seal(text))


def opened(raw: bytes) -> bool:
    """Whether ``raw`` ends with a digest of the bytes before it."""
    if len(raw) <= TRAILER or not raw.endswith(_TAIL):
        return False
    head = len(raw) - TRAILER
    if raw[head : head + len(_HEAD)] != _HEAD:
        return False
    digest = raw[head + len(_HEAD) : -len(_TAIL)]
    if not set(digest) <= _HEX:
        return False
    return hashlib.sha256(memoryview(raw)[:head]).hexdigest().encode() == digest


_said: set[tuple[str, tuple[int, ...]]] = set()
_lock = threading.Lock()


def say_mismatch(what: str, stamp: tuple[int, ...] = ()) -> None:
    """One stderr line for a kept file that failed its digest (once per file as it was read:
    ``stamp`` tells a file rewritten since from the one already reported)."""
    with _lock:
        if (what, stamp) in _said:
            return
        _said.add((what, stamp))
    sys.stderr.write(f"harness: kept answer for {what} did not match its digest: recomputed\n")


def unwritable(root: Path, exc: OSError) -> None:
    """One stderr line, once per cache folder, when it cannot be written (a full disk, a
    read-only folder): the run's answer is the same, only the next run is not faster."""
    with _lock:
        if (f"unwritable {root}", ()) in _said:
            return
        _said.add((f"unwritable {root}", ()))
    why = exc.strerror or str(exc)
    sys.stderr.write(f"harness: cache {root} cannot be written ({why}): this run keeps nothing\n")


def reset() -> None:
    """Forget what was said (a new run in this process says it again)."""
    with _lock:
        _said.clear()


def file_stamp(st: os.stat_result) -> tuple[int, ...]:
    """What tells one version of a file from another (inode, size, mtime, ctime)."""
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
