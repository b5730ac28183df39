"""The module path proof, read: which tree each module under test was imported from.

What runs inside a column's tree writes one entry per file of interest (``probes/
pytest_outcomes_plugin.py``, the sweep's mutmut wrapper; they cannot import the harness):
``{"status": "in tree" | "shadowed" | "not imported", "module": name, "file": path}``. ``shadowed``
means an installed copy (or an editable install's import hook) answered the import instead of the
tree's file: whatever ran tested that copy, so its outcomes are no evidence about the tree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

IN_TREE = "in tree"
SHADOWED = "shadowed"
NOT_IMPORTED = "not imported"
_RANK = {IN_TREE: 0, NOT_IMPORTED: 1, SHADOWED: 2}

Proofs = Mapping[str, dict[str, Any]]


def shadowed(proofs: Proofs) -> dict[str, dict[str, Any]]:
    """The entries whose module was imported from outside the tree, in the proofs' order."""
    return {rel: e for rel, e in proofs.items() if e.get("status") == SHADOWED}


def outside(proofs: Proofs) -> list[str]:
    """``path: file it was imported from`` for each shadowed entry, in the proofs' order."""
    return [f"{rel}: {e.get('file')}" for rel, e in shadowed(proofs).items()]


def held(proofs: Proofs) -> bool | None:
    """True when every module was imported from the tree, False when one was shadowed, None
    otherwise (one not imported, or nothing recorded)."""
    states = {str(e.get("status")) for e in proofs.values()}
    if states == {IN_TREE}:
        return True
    return False if SHADOWED in states else None


def _rank(entry: Mapping[str, Any]) -> int:
    return _RANK.get(str(entry.get("status", "")), 3)  # a status not known here outweighs all


def merge(parts: Iterable[Proofs]) -> dict[str, dict[str, Any]]:
    """One proof per file over several runs of the same tree: a shadowed or not-imported entry
    outweighs an in-tree one (a shadowed one every other)."""
    merged: dict[str, dict[str, Any]] = {}
    for proofs in parts:
        for rel, entry in proofs.items():
            if rel not in merged or _rank(entry) > _rank(merged[rel]):
                merged[rel] = dict(entry)
    return dict(sorted(merged.items()))
