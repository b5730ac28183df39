"""pytest plugin: evaluate every CI lane's marker expression over ONE collection pass.

Runs inside the column's own pytest (``-p pytest_lanes_plugin`` with this folder on
PYTHONPATH); it never imports harness. Input and output go through two environment
variables:

* ``HARNESS_LANES_SPEC``: a JSON file ``{"lanes": {name: expr}, "files": [path, ...]}``
* ``HARNESS_LANES_OUT``: where to write the result JSON.

The items counted are the session's final items: read in ``pytest_collection_finish``,
after every ``pytest_collection_modifyitems`` implementation (the project's own included)
has run. Each lane is evaluated with pytest's own ``-m`` expression evaluator.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

import pytest

_KEYWORDS = {"and", "or", "not", "True", "False", "None"}
_IDENT = re.compile(r"(?:\w|:|\+|-|\.|\[|\]|\\|/)+")

_state: dict[str, Any] = {"errors": [], "modifyitems_done": False}


def _compile(expr: str) -> Any:
    from _pytest.mark.expression import Expression

    return Expression.compile(expr)


def _matcher(marks: list[Any]) -> Any:
    """What ``-m`` matches against: MarkMatcher (pytest ≥ 8.3, keyword args) or mark names."""
    try:
        from _pytest.mark import MarkMatcher

        return MarkMatcher.from_markers(marks)
    except ImportError:  # older pytest: a predicate over marker names
        names = {m.name for m in marks}
        return names.__contains__


def _signature(marks: list[Any]) -> Any:
    """What an item's lane verdicts depend on: its marks' names and keyword arguments (None when a
    keyword value cannot be compared safely: that item is evaluated on its own)."""
    out = []
    for m in marks:
        kwargs = getattr(m, "kwargs", {}) or {}
        if any(type(v) not in (str, int, float, bool, type(None)) for v in kwargs.values()):
            return None
        out.append((m.name, tuple(sorted((k, type(v).__name__, v) for k, v in kwargs.items()))))
    return tuple(sorted(out))


def expression_names(expr: str) -> list[str]:
    """Marker names an expression mentions (keyword arguments in ``mark(k=v)`` dropped)."""
    bare = re.sub(r"\([^)]*\)", " ", expr)
    return sorted({t for t in _IDENT.findall(bare) if t not in _KEYWORDS})


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        text = str(report.longrepr or "").strip().splitlines()
        last = next((ln for ln in reversed(text) if ln.strip()), "collection error")
        _state["errors"].append({"nodeid": report.nodeid or ".", "message": last.strip()[:300]})


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems() -> None:
    _state["modifyitems_done"] = True


def _registered(config: pytest.Config) -> set[str]:
    names = set()
    for line in config.getini("markers"):
        name = line.split(":", 1)[0].split("(", 1)[0].strip()
        if name:
            names.add(name)
    return names


def _file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def pytest_collection_finish(session: pytest.Session) -> None:
    spec_path, out_path = os.environ.get("HARNESS_LANES_SPEC"), os.environ.get("HARNESS_LANES_OUT")
    if not spec_path or not out_path:
        return
    with open(spec_path, encoding="utf-8") as fh:
        spec = json.load(fh)
    lanes: dict[str, str] = spec["lanes"]
    files: list[str] = spec.get("files", [])

    compiled: dict[str, Any] = {}
    invalid: dict[str, str] = {}
    for name, expr in lanes.items():
        try:
            compiled[name] = _compile(expr) if expr.strip() else None
        except Exception as exc:  # pytest's ParseError (its module path moved across versions)
            invalid[name] = str(exc)

    registered = _registered(session.config)
    counts = {name: 0 for name in compiled}
    per_file: dict[str, dict[str, int]] = {}
    marker_items: dict[str, int] = {}
    # Items with the same marks get the same verdicts: each distinct set of marks is evaluated once
    # (most items of a suite carry none, or the same few), not every lane for every item.
    verdicts: dict[Any, tuple[str, ...]] = {}
    nodes: dict[str, list[str]] = {}  # the lanes of each test in the files asked about
    wanted = {f.rstrip("/") for f in files}
    for item in session.items:
        marks = list(item.iter_markers())
        for n in {m.name for m in marks}:
            marker_items[n] = marker_items.get(n, 0) + 1
        sig = _signature(marks)
        selected = verdicts.get(sig) if sig is not None else None
        if selected is None:
            matcher = _matcher(marks)
            selected = tuple(
                name for name, expr in compiled.items() if expr is None or expr.evaluate(matcher)
            )
            if sig is not None:
                verdicts[sig] = selected
        path = _file_of(item.nodeid)
        row = per_file.setdefault(path, {"__all__": 0})
        row["__all__"] += 1
        for name in selected:
            counts[name] += 1
            row[name] = row.get(name, 0) + 1
        if path in wanted:
            nodes[item.nodeid] = list(selected)

    def of_interest(path: str) -> dict[str, int]:
        total: dict[str, int] = {}
        prefix = path.rstrip("/") + "/"
        for fpath, row in per_file.items():
            if fpath == path or fpath.startswith(prefix):
                for k, v in row.items():
                    total[k] = total.get(k, 0) + v
        return total

    unknown_used = sorted(n for n in marker_items if n not in registered)
    unknown_in_lanes = {
        name: [n for n in expression_names(expr) if n not in registered]
        for name, expr in lanes.items()
    }
    result = {
        "pytest": pytest.__version__,
        "total": len(session.items),
        "complete": bool(_state["modifyitems_done"]),
        "counts": counts,
        "invalid": invalid,
        "per_file": per_file,
        "files": {f: of_interest(f) for f in files},
        "nodes": nodes,
        "errors": _state["errors"],
        "registered_markers": sorted(registered),
        "marker_items": marker_items,
        "unknown_markers_used": {n: marker_items[n] for n in unknown_used},
        "unknown_markers_in_lanes": {k: v for k, v in unknown_in_lanes.items() if v},
    }
    tmp = out_path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(result, fh, sort_keys=True)
    os.replace(tmp, out_path)
