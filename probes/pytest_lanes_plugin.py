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
    except ImportError:
        MarkMatcher = None  # noqa: N806
    if MarkMatcher is not None and hasattr(MarkMatcher, "from_markers"):
        return MarkMatcher.from_markers(marks)
    # older pytest (7.x has a MarkMatcher without from_markers): a predicate over marker names
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


_MARK_WALK = ("iter_markers", "iter_markers_with_node", "iter_parents", "listchain", "parent")


def _plain_walk(cls: type) -> bool:
    """Whether items of ``cls`` find their marks as pytest's own ``Node`` does (their own, then each
    parent's ``own_markers``): then the marks of a parent chain are read once for all its items."""
    from _pytest.nodes import Node

    return all(getattr(cls, name, None) is getattr(Node, name, None) for name in _MARK_WALK)


class _Groups:
    """Items by what their verdicts and counts depend on: the identity of their marks. Each group's
    marks are read, named and evaluated once; an item costs a few dictionary look-ups."""

    def __init__(self, compiled: dict[str, Any]) -> None:
        self.compiled = compiled
        self.plain: dict[type, bool] = {}
        self.chains: dict[int, list[Any]] = {}  # id of a collector → its marks and its parents'
        self.of_key: dict[tuple[int, ...], int] = {}  # ids of an item's marks → group number
        self.marks: list[list[Any]] = []  # group number → its marks (alive: their ids stay unique)
        self.verdicts: dict[Any, tuple[str, ...]] = {}  # a set of marks' signature → its lanes
        self.lanes: dict[int, tuple[str, ...]] = {}  # group number → its lanes

    def _chain(self, node: Any) -> list[Any]:
        """``node``'s own marks, then its parents' (what ``iter_markers`` walks above an item)."""
        if node is None:
            return []
        got = self.chains.get(id(node))
        if got is None:
            got = self.chains[id(node)] = [*node.own_markers, *self._chain(node.parent)]
        return got

    def of(self, item: Any) -> int:
        """The group number of ``item``."""
        cls = type(item)
        plain = self.plain.get(cls)
        if plain is None:
            plain = self.plain[cls] = _plain_walk(cls)
        if plain:
            parent = item.parent
            key = (id(parent), *map(id, item.own_markers))
            group = self.of_key.get(key)
            if group is None:
                marks = [*item.own_markers, *self._chain(parent)]
                group = self.of_key[key] = len(self.marks)
                self.marks.append(marks)
            return group
        marks = list(item.iter_markers())  # kept in self.marks: the ids in the key stay unique
        key = (-1, *map(id, marks))
        group = self.of_key.get(key)
        if group is None:
            group = self.of_key[key] = len(self.marks)
            self.marks.append(marks)
        return group

    def selected(self, group: int) -> tuple[str, ...]:
        """The lanes that select the items of ``group`` (each distinct set of marks evaluated once)."""
        known = self.lanes.get(group)
        if known is not None:
            return known
        marks = self.marks[group]
        sig = _signature(marks)
        selected = self.verdicts.get(sig) if sig is not None else None
        if selected is None:
            matcher = _matcher(marks)
            selected = tuple(
                name
                for name, expr in self.compiled.items()
                if expr is None or expr.evaluate(matcher)
            )
            if sig is not None:
                self.verdicts[sig] = selected
        self.lanes[group] = selected
        return selected


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
    # One pass over the items counts them by (file, group of identical marks); names, verdicts and
    # counts are then worked out per group, not per item.
    groups = _Groups(compiled)
    tally: dict[tuple[str, int], int] = {}
    nodes_group: dict[str, int] = {}  # each test of the files asked about → its group
    wanted = {f.rstrip("/") for f in files}
    for item in session.items:
        group = groups.of(item)
        nodeid = item.nodeid
        path = nodeid.partition("::")[0]
        key = (path, group)
        tally[key] = tally.get(key, 0) + 1
        if path in wanted:
            nodes_group[nodeid] = group

    counts = {name: 0 for name in compiled}
    per_file: dict[str, dict[str, int]] = {}
    marker_items: dict[str, int] = {}
    for (path, group), n in tally.items():
        row = per_file.setdefault(path, {"__all__": 0})
        row["__all__"] += n
        for name in groups.selected(group):
            counts[name] += n
            row[name] = row.get(name, 0) + n
        for mark_name in {m.name for m in groups.marks[group]}:
            marker_items[mark_name] = marker_items.get(mark_name, 0) + n
    nodes = {nodeid: list(groups.selected(g)) for nodeid, g in nodes_group.items()}

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
        "unknown_markers_used": {n: marker_items[n] for n in unknown_used},
        "unknown_markers_in_lanes": {k: v for k, v in unknown_in_lanes.items() if v},
    }
    tmp = out_path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(result, fh, sort_keys=True, separators=(",", ":"))
    os.replace(tmp, out_path)
