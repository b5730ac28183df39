"""Report objects as indented JSON text in one pass.

``dumps(obj)`` writes dataclasses as objects of their fields (but those marked ``UNRENDERED``),
``Sha`` and ``Code`` cells as their strings, tuples as arrays and dictionary keys as ``str(k)``,
indented by two spaces, non-ASCII kept: the bytes of ``json.dumps(indent=2, ensure_ascii=False)``
over that conversion. What is not printable (surrogate-escaped bytes, shown as ``\\xNN`` as
``report.printable`` shows them; DEL, C1 controls, bidi overrides, which stay the same once parsed)
is escaped in the finished text by one scan. tests/report/test_jsontext.py holds it to the walks it
replaced.
"""

from __future__ import annotations

import re
from dataclasses import fields, is_dataclass
from itertools import chain
from json.encoder import encode_basestring  # the C encoder where CPython has it
from operator import attrgetter
from typing import Any

from harness.report.model import Code, Sha


class Rendered:
    """An object's JSON text as ``dumps_at(obj, nl)`` wrote it, UTF-8: written in its place as it
    is (an answer kept whole is not rendered again); re-indented where it sits deeper or higher."""

    __slots__ = ("data", "nl")

    def __init__(self, data: bytes, nl: str) -> None:
        self.data, self.nl = data, nl


class _Keys(dict[str, str]):
    """A key's ``"key": `` prefix, encoded once. Only exact ``str`` keys are kept (no key of
    another type can then be found equal to one), and at most ``_MAX_KEYS`` of them (a dict keyed
    by paths or commits would otherwise grow it in a long-lived process)."""

    def __missing__(self, k: str) -> str:
        prefix = encode_basestring(k) + ": "
        if type(k) is str and len(self) < _MAX_KEYS:
            self[k] = prefix
        return prefix


_MAX_KEYS = 4096
_KEYS = _Keys()
# A dataclass's rendered fields as (its ``"name": ``, a getter of its value), looked up once.
_FIELDS: dict[type, tuple[tuple[str, Any], ...]] = {}
_STEP = "  "
# A lone surrogate is a byte that was not UTF-8 (``printable`` shows it as \xNN, which JSON writes
# with its backslash escaped); DEL, C1 controls and bidi overrides as \u escapes.
_UNSAFE = re.compile(r"[\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _unsafe(m: re.Match[str]) -> str:
    code = ord(m.group(0))
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\\\x{code - 0xDC00:02x}"
    if 0xD800 <= code <= 0xDFFF:
        return f"\\\\u{code:04x}"
    return f"\\u{code:04x}"


def dumps(obj: Any) -> str:
    """The JSON text of ``obj`` (dataclasses as objects of their fields, Sha and Code as strings)."""
    return dumps_at(obj, "\n")


def dumps_at(obj: Any, nl: str) -> str:
    """``dumps(obj)`` as it is written at the depth whose line break and indent is ``nl``."""
    out: list[str] = []
    _write(obj, out, nl)
    return _UNSAFE.sub(_unsafe, "".join(out))


def dump_utf8(obj: Any, end: str = "", nl: str = "\n") -> list[bytes]:
    """``(dumps_at(obj, nl) + end).encode()`` in pieces: the parts are escaped and encoded a few
    thousand at a time, so a report of megabytes never holds its whole text (and its parts, and
    its bytes) at once; text rendered before at its depth (``Rendered``) is a piece as it is, not
    scanned again. A short run pays more for fresh memory than for copies (~3 µs a page on a VM)."""
    sink = _Sink()
    _write(obj, sink, nl)
    sink.append(end)
    sink.flush()
    return sink.pieces


class _Sink(list[str]):
    """Parts written so far; ``flush`` turns them into one piece of UTF-8 (escaping is per
    character, so any cut between parts gives the same bytes)."""

    def __init__(self) -> None:
        super().__init__()
        self.pieces: list[bytes] = []

    def flush(self) -> None:
        if self:
            self.pieces.append(_UNSAFE.sub(_unsafe, "".join(self)).encode("utf-8"))
            self.clear()


_PIECE = 4096  # parts a piece of ``dump_utf8`` holds, about (~150 kB of text)


def _float(x: float) -> str:
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "Infinity" if x > 0 else "-Infinity"
    return float.__repr__(x)


def _write(o: Any, out: list[str], nl: str) -> None:
    kind = type(o)
    if kind is str:
        out.append(encode_basestring(o))
    elif o is None:
        out.append("null")
    elif o is True:
        out.append("true")
    elif o is False:
        out.append("false")
    elif kind is int:
        out.append(int.__repr__(o))
    elif kind is float:
        out.append(_float(o))
    elif kind is list or kind is tuple:
        _items(o, out, nl)
    elif kind is dict:
        _dict(o, out, nl)
    elif kind is Sha:
        out.append(encode_basestring(o.sha))
    elif kind is Code:
        out.append(encode_basestring(o.text))
    elif kind is Rendered:
        _rendered(o, out, nl)
    elif kind in _FIELDS:
        _fields(o, _FIELDS[kind], out, nl)
    else:
        _other(o, out, nl)


def _rendered(o: Rendered, out: list[str], nl: str) -> None:
    """Text rendered before (and escaped: escaping it again changes nothing): as a piece of its own
    where the depth is the same, else re-indented (every line of it starts with its ``nl``)."""
    if nl == o.nl and type(out) is _Sink:
        out.flush()
        out.pieces.append(o.data)
        return
    text = o.data.decode("utf-8")
    out.append(text if nl == o.nl else text.replace(o.nl, nl))


def _other(o: Any, out: list[str], nl: str) -> None:
    """Subclasses and first sightings: cells, dataclasses, mappings, sequences, then scalars."""
    if isinstance(o, Sha):
        _write(o.sha, out, nl)
    elif isinstance(o, Code):
        _write(o.text, out, nl)
    elif is_dataclass(o) and not isinstance(o, type):
        _FIELDS[type(o)] = shape = tuple(
            (_KEYS[f.name], attrgetter(f.name))
            for f in fields(o)
            if f.metadata.get("rendered", True)
        )
        _fields(o, shape, out, nl)
    elif isinstance(o, dict):
        _dict(o, out, nl)
    elif isinstance(o, (list, tuple)):
        _items(o, out, nl)
    elif isinstance(o, str):
        out.append(encode_basestring(o))
    elif isinstance(o, int):
        out.append(int.__repr__(o))
    elif isinstance(o, float):
        out.append(_float(o))
    else:
        raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")


def _items(seq: Any, out: list[str], nl: str) -> None:
    if seq and _strings(seq):  # lines and paths: written in C, one join
        inner = nl + _STEP
        out.append("[" + inner + ("," + inner).join(map(encode_basestring, seq)) + nl + "]")
        return
    if seq and set(map(type, seq)) == {tuple} and _strings(chain.from_iterable(seq)):
        # Pairs of strings (an end state's classed lines): each one join, no call per item.
        inner = nl + _STEP
        deeper = inner + _STEP
        pairs = (
            "[" + deeper + ("," + deeper).join(map(encode_basestring, t)) + inner + "]"
            if t
            else "[]"
            for t in seq
        )
        out.append("[" + inner + ("," + inner).join(pairs) + nl + "]")
        return
    _block((("", x) for x in seq), bool(seq), "[]", out, nl)


def _strings(seq: Any) -> bool:
    try:
        "".join(seq)
    except TypeError:
        return False
    return True


def _dict(o: dict[Any, Any], out: list[str], nl: str) -> None:
    """An object of the dictionary's items, its keys as ``str(k)``."""
    keys = _KEYS
    pairs = ((keys[k] if type(k) is str else keys[str(k)], v) for k, v in o.items())
    _block(pairs, bool(o), "{}", out, nl)


def _fields(o: Any, shape: tuple[tuple[str, Any], ...], out: list[str], nl: str) -> None:
    """An object of a dataclass's rendered fields."""
    _block(((prefix, get(o)) for prefix, get in shape), bool(shape), "{}", out, nl)


def _block(entries: Any, any_: bool, brackets: str, out: list[str], nl: str) -> None:
    """An array or object: each entry (its key written as ``"k": ``, or nothing) on its own line."""
    if not any_:
        out.append(brackets)
        return
    inner = nl + _STEP
    sep = "," + inner
    out.append(brackets[0] + inner)
    first = True
    for prefix, value in entries:
        if first:
            first = False
        else:
            out.append(sep)
        if prefix:
            out.append(prefix)
        kind = type(value)  # the common leaves here, without a call each
        if kind is str:
            out.append(encode_basestring(value))
        elif value is None:
            out.append("null")
        elif kind is int:
            out.append(int.__repr__(value))
        elif kind is Code:  # table cells
            out.append(encode_basestring(value.text))
        elif kind is Sha:
            out.append(encode_basestring(value.sha))
        else:
            _write(value, out, inner)
            if len(out) > _PIECE and type(out) is _Sink:
                out.flush()
    out.append(nl + brackets[1])
