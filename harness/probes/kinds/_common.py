"""Helpers shared by kinds that run one process per row (command, pytest)."""

from __future__ import annotations

import re
from typing import Any

from harness.columns.trees import diff_listing, listing_of

_FIELD = re.compile(r"\{(\w+)\}")


def substitute(text: str, values: dict[str, Any]) -> str:
    """Replace ``{name}`` for known names only (other braces, e.g. Rust's ``{}``, stay)."""
    return _FIELD.sub(
        lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), text
    )


def row_values(row: dict[str, Any], python: str, tree: str) -> dict[str, Any]:
    return {**{k: ("" if v is None else v) for k, v in row.items()}, "python": python, "tree": tree}


def writes_between(tree: Any, before: dict[str, list[int]]) -> list[str]:
    return diff_listing(before, listing_of(tree))


def writes_detail(writes: list[str]) -> str:
    return f"wrote into the tree: {', '.join(writes[:3])}{' …' if len(writes) > 3 else ''}"
