"""Text from the reviewed repository that is not UTF-8 (paths, subjects) is shown escaped, never fatal.

Internally such bytes travel as ``surrogateescape`` strings, which round-trip to the exact bytes (the
git layer reads and writes paths that way). At the report boundary each undecodable byte becomes the
four characters ``\\xNN``, so every renderer can encode the report and the same bytes give the same text.
"""

from __future__ import annotations

import dataclasses
from itertools import chain
from typing import Any, TypeVar

from harness.infra.lean import lazy_re
from harness.report.model import Code, Sha

T = TypeVar("T")
_LONE = lazy_re("[\udc80-\udcff]")
_OTHER = lazy_re("[\ud800-\udfff]")


def escape(text: str) -> str:
    """``caf\\udce9`` (surrogate-escaped byte 0xE9) → ``caf\\xe9``; other text unchanged."""
    if text.isascii():
        return text
    text = _LONE.sub(lambda m: f"\\x{ord(m.group()) - 0xDC00:02x}", text)
    return _OTHER.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_LEAVES = frozenset({int, float, bool, type(None), bytes})  # nothing to escape inside
_FIELDS: dict[type, tuple[str, ...]] = {}  # a dataclass's field names, looked up once


def printable(obj: T) -> T:
    """``obj`` with every string escaped; dataclasses are updated in place, a container that holds
    something to escape is rebuilt (one that does not is returned as it is)."""
    kind = type(obj)
    if kind is str:
        text: str = obj  # type: ignore[assignment]
        return obj if text.isascii() else escape(text)  # type: ignore[return-value]
    if kind in _LEAVES:
        return obj
    if kind is Code:  # cells: tens of thousands in a long report
        code: Any = obj
        return obj if code.text.isascii() else Code(escape(code.text))  # type: ignore[return-value]
    if kind is Sha:
        sha: Any = obj
        return obj if sha.sha.isascii() else Sha(escape(sha.sha))  # type: ignore[return-value]
    if isinstance(obj, str):
        return escape(obj)  # type: ignore[return-value]
    if isinstance(obj, (list, tuple)):
        return _sequence(obj)  # type: ignore[return-value]
    if isinstance(obj, dict):
        return _mapping(obj)  # type: ignore[return-value]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        names = _FIELDS.get(kind)
        if names is None:
            names = _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(obj))
        for name in names:
            value: Any = getattr(obj, name)
            new = printable(value)
            if new is not value:
                try:
                    object.__setattr__(obj, name, new)
                except (AttributeError, TypeError):
                    pass
        return obj
    return obj


def _ascii_strings(seq: Any) -> bool:  # (a dict: its keys)
    """Every item a str and all of them ASCII (checked in C: lines and paths, the bulk of a
    report, cost no Python step each)."""
    try:
        return "".join(seq).isascii()
    except TypeError:
        return False


def _sequence(obj: list[Any] | tuple[Any, ...]) -> list[Any] | tuple[Any, ...]:
    if _ascii_strings(obj):
        return obj
    # Pairs of strings (an end state's classed lines): all checked in C as well.
    if obj and set(map(type, obj)) == {tuple} and _ascii_strings(chain.from_iterable(obj)):
        return obj
    items: list[Any] | None = None
    for i, x in enumerate(obj):
        new = _escaped(x)
        if new is not x:
            if items is None:
                items = list(obj)
            items[i] = new
    if items is None:
        return obj
    if isinstance(obj, list):
        return items
    return type(obj)(*items) if hasattr(obj, "_fields") else type(obj)(items)


def _mapping(obj: dict[Any, Any]) -> dict[Any, Any]:
    changed: dict[Any, Any] | None = None
    for k, v in obj.items():
        new = _escaped(v)
        if new is not v:
            if changed is None:
                changed = {}
            changed[k] = new
    if changed is None and _ascii_strings(obj):
        return obj
    changed = changed or {}
    return {printable(k): changed.get(k, v) for k, v in obj.items()}


def _escaped(x: Any) -> Any:
    """``printable(x)``, without a call for the leaves a report is mostly made of."""
    kind = type(x)
    if kind is str:
        return x if x.isascii() else escape(x)
    if kind in _LEAVES:
        return x
    return printable(x)
