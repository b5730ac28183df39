"""A job's ``strategy.matrix`` as the list of combinations GitHub runs (bounded).

GitHub's rules: the cartesian product of the matrix keys, minus ``exclude`` entries, then each
``include`` entry extends every combination whose original keys it does not contradict, or becomes a
combination of its own; a matrix of ``include`` entries only is one combination per entry. Values keep
their file and line (``LStr``). The product is capped at ``MAX_COMBOS`` and the cap is reported.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from harness.checks.lanes.gha_expr import UNKNOWN, LStr, has_expression
from harness.inputs import yamlpath

MAX_COMBOS = 256
MAX_NODES = 20_000  # YAML nodes turned into values for one matrix (aliases can multiply them)


@dataclass
class Matrix:
    """Combinations to evaluate (``None`` entries: the matrix is computed at run time)."""

    combos: list[Any] = field(default_factory=lambda: [{}])
    total: int = 1  # combinations GitHub would run (before the cap)
    capped: bool = False
    too_big: bool = False  # more than MAX_NODES values: not read at all


class _Budget:
    def __init__(self) -> None:
        self.left = MAX_NODES

    def spend(self) -> bool:
        self.left -= 1
        return self.left >= 0


def plain(node: Node | None, path: str, budget: _Budget) -> Any:
    """A YAML node as Python values with LStr scalars (UNKNOWN past the budget)."""
    if node is None or not budget.spend():
        return UNKNOWN if node is not None else None
    if isinstance(node, ScalarNode):
        if node.tag == "tag:yaml.org,2002:null":
            return None
        return LStr(str(node.value), path, yamlpath.line_of(node))
    if isinstance(node, SequenceNode):
        items = [plain(n, path, budget) for n in node.value]
        return UNKNOWN if any(v is UNKNOWN for v in items) else items
    if isinstance(node, MappingNode):
        out: dict[str, Any] = {}
        for k, _kn, v in yamlpath.items(node):
            out[k] = plain(v, path, budget)
            if out[k] is UNKNOWN and budget.left < 0:
                return UNKNOWN
        return out
    return UNKNOWN


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return str(a) == str(b)
    return bool(a == b)


def _entries(node: Node | None, path: str, budget: _Budget) -> list[dict[str, Any]]:
    value = plain(node, path, budget) if isinstance(node, SequenceNode) else []
    return [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []


def expand_matrix(strategy: Node | None, path: str) -> Matrix:
    """The combinations of ``strategy.matrix`` (one empty combination when there is no matrix)."""
    node = yamlpath.get(strategy, "matrix")
    if node is None:
        return Matrix()
    if not isinstance(node, MappingNode):
        return Matrix([None])  # e.g. ${{ fromJSON(needs.plan.outputs.matrix) }}
    budget = _Budget()
    axes: list[tuple[str, list[Any]]] = []
    for key, _kn, v in yamlpath.items(node):
        if key in ("include", "exclude"):
            continue
        if isinstance(v, SequenceNode):
            values = plain(v, path, budget)
            axes.append((key, values if isinstance(values, list) else [UNKNOWN]))
        elif isinstance(v, ScalarNode) and has_expression(str(v.value)):
            axes.append((key, [UNKNOWN]))  # a list computed at run time
        else:
            axes.append((key, [UNKNOWN]))
    include = _entries(yamlpath.get(node, "include"), path, budget)
    exclude = _entries(yamlpath.get(node, "exclude"), path, budget)
    if budget.left < 0:
        return Matrix([None], 0, True, True)
    total = 1
    for _key, values in axes:
        total *= max(len(values), 1)
    keys = [k for k, _ in axes]
    product = (
        itertools.islice(itertools.product(*(values for _, values in axes)), MAX_COMBOS)
        if axes
        else iter(())
    )
    combos = [dict(zip(keys, row, strict=False)) for row in product]
    combos = [
        c
        for c in combos
        if not any(all(k in c and _same(c[k], v) for k, v in e.items()) for e in exclude)
    ]
    if not keys:
        combos = [dict(e) for e in include[:MAX_COMBOS]]
        return Matrix(combos or [{}], max(len(include), 1), len(include) > MAX_COMBOS)
    extra: list[dict[str, Any]] = []
    for entry in include:
        matched = False
        for c in combos:
            if all(_same(c[k], v) for k, v in entry.items() if k in keys):
                c.update({k: v for k, v in entry.items() if k not in keys})
                matched = True
        if not matched:
            extra.append(dict(entry))
    capped = total > MAX_COMBOS or len(combos) + len(extra) > MAX_COMBOS
    total = total + len(extra) if capped else len(combos) + len(extra)
    return Matrix((combos + extra)[:MAX_COMBOS], total, capped)
