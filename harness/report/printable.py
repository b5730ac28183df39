"""Text from the reviewed repository that is not UTF-8 (paths, subjects) is shown escaped, never fatal.

Internally such bytes travel as ``surrogateescape`` strings, which round-trip to the exact bytes (the
git layer reads and writes paths that way). At the report boundary each undecodable byte becomes the
four characters ``\\xNN``, so every renderer can encode the report and the same bytes give the same text.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, TypeVar

T = TypeVar("T")
_LONE = re.compile("[\udc80-\udcff]")
_OTHER = re.compile("[\ud800-\udfff]")


def escape(text: str) -> str:
    """``caf\\udce9`` (surrogate-escaped byte 0xE9) → ``caf\\xe9``; other text unchanged."""
    if text.isascii():
        return text
    text = _LONE.sub(lambda m: f"\\x{ord(m.group()) - 0xDC00:02x}", text)
    return _OTHER.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_LEAVES = frozenset({int, float, bool, type(None), bytes})  # nothing to escape inside
_FIELDS: dict[type, tuple[str, ...]] = {}  # a dataclass's field names, looked up once


def printable(obj: T) -> T:
    """``obj`` with every string escaped; dataclasses are updated in place, containers rebuilt."""
    kind = type(obj)
    if kind is str:
        text: str = obj  # type: ignore[assignment]
        return obj if text.isascii() else escape(text)  # type: ignore[return-value]
    if kind in _LEAVES:
        return obj
    if isinstance(obj, str):
        return escape(obj)  # type: ignore[return-value]
    if isinstance(obj, list):
        return [printable(x) for x in obj]  # type: ignore[return-value]
    if isinstance(obj, tuple):
        return (
            type(obj)(printable(x) for x in obj)
            if not hasattr(obj, "_fields")
            else type(obj)(*(printable(x) for x in obj))
        )
    if isinstance(obj, dict):
        return {printable(k): printable(v) for k, v in obj.items()}  # type: ignore[return-value]
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
