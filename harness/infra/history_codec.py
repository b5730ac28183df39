"""A kept answer's encoding: a report Section (dataclasses, tuples, cells) as JSON and back.

A fidelity answer is a Section of tens of thousands of nodes. Plain JSON values stay as they are;
the rest become objects tagged by ``_TAG`` (a key no section uses: a dict that has it, or a key
that is not a string, is itself tagged). Reading back is ``json.loads`` with an ``object_hook``
(``hook``): only tagged objects cost Python work."""

from __future__ import annotations

import json
from itertools import chain
from typing import Any

from harness.infra.history_rows import strings

_TAG = "\x00harness"
_PARTS = ("Section", "Table", "Finding", "Control", "Details", "Code", "Sha")
_LEAF = (str, int, float, bool, type(None))


def pack(x: Any) -> Any:
    """``x`` as a JSON value ``unpack`` turns back into an equal object; TypeError for what it
    does not know."""
    if _CODE is None:
        _cells()
    return _pack(x)


def _pack(x: Any) -> Any:
    t = type(x)
    if t in _LEAF:
        return x
    if t is list:
        if strings(x):  # lines and paths: checked in C
            return x[:]
        if x and set(map(type, x)) == {tuple} and strings(chain.from_iterable(x)):
            return {_TAG: "L", "v": [list(v) for v in x]}  # an end state's classed lines
        return [v if type(v) in _LEAF else _pack(v) for v in x]
    if t is dict:
        if _TAG not in x and strings(x):  # (its keys)
            return {k: v if type(v) in _LEAF else _pack(v) for k, v in x.items()}
        return {_TAG: "D", "v": [[_pack(k), _pack(v)] for k, v in x.items()]}
    if t is tuple:
        return {_TAG: "T", "v": list(x) if strings(x) else [_pack(v) for v in x]}
    if t is _CODE:  # cells: thousands in a report, one small object each
        return {_TAG: "C", "v": x.text}
    if t is _SHA_CELL:
        return {_TAG: "S", "v": x.sha}
    names = _FIELDS.get(t)
    if names is None:
        if t.__name__ not in _PARTS or t.__module__ != "harness.report.model":
            raise TypeError(f"not kept: {t.__name__}")
        from dataclasses import fields

        names = _FIELDS[t] = tuple(f.name for f in fields(x))
    values = {}
    for n in names:
        v = getattr(x, n)
        values[n] = v if type(v) in _LEAF else _pack(v)
    return {_TAG: t.__name__, "v": values}


_FIELDS: dict[type, tuple[str, ...]] = {}  # a report part's field names, looked up once
_CODE: Any = None  # harness.report.model's Code and Sha, once ``pack`` or ``hook`` needs them
_SHA_CELL: Any = None


def _cells() -> None:
    global _CODE, _SHA_CELL
    from harness.report.model import Code, Sha

    _CODE, _SHA_CELL = Code, Sha


def hook(d: dict[str, Any]) -> Any:
    tag = d.get(_TAG)
    if tag is None:
        return d
    v = d["v"]
    if tag == "T" and isinstance(v, list):
        return tuple(v)
    if tag == "L" and isinstance(v, list) and all(type(x) is list for x in v):
        return [tuple(x) for x in v]
    if tag == "D" and isinstance(v, list):
        return {k: x for k, x in v}
    if tag in ("C", "S") and type(v) is str:
        if _CODE is None:
            _cells()
        return _CODE(v) if tag == "C" else _SHA_CELL(v)
    if tag in _PARTS and isinstance(v, dict):
        from harness.report import model

        return getattr(model, tag)(**v)
    raise ValueError(f"unknown tag {tag!r}")


def unpack(text: str | bytes) -> Any:
    """The object ``pack`` encoded, from its JSON text; ValueError/TypeError when malformed."""
    return json.loads(text, object_hook=hook)
