"""The JSON text of a section's ``data`` list items, reused by their content.

A fidelity re-run after one new pick renders the same entries again for every pick it kept
(``data.picks``: ~60 % of the section's megabytes, ~12 ms of a 0.2 s run). An item's text is a
function of the item alone: it is kept under the digest of the item's content (``item_key``: its
``marshal`` bytes, version 2, which name every value and its type, with no reference or interning
marks), and written in its place (``jsontext.Rendered``) wherever an equal item comes again. An
item that is not plain data (a cell, a dataclass) has no key and is rendered as ever.
"""

from __future__ import annotations

import dataclasses
import hashlib
import marshal
from collections.abc import Mapping, Sequence
from typing import Any

from harness.report.json import SECTION_NL
from harness.report.jsontext import Rendered, dumps_at
from harness.report.model import Section

# Where an item of ``data[name]`` sits in the document: the section's fields, ``data``'s, the list's.
ITEM_NL = SECTION_NL + 3 * "  "


def item_key(item: Any) -> str | None:
    """The digest of ``item``'s content, or None where it is not plain data."""
    try:
        raw = marshal.dumps(item, 2)
    except ValueError:  # (a value marshal does not know: a cell, a dataclass, a str subclass)
        return None
    return hashlib.sha256(b"json item\0" + raw).hexdigest()


def items_text(
    items: Sequence[Any], keys: Sequence[str | None], kept: Mapping[str, bytes]
) -> tuple[list[Any], dict[str, bytes]]:
    """``items`` as the document writes them: each with a key (``keys``: ``item_key`` of each) as
    its text, the one ``kept`` has under its key, else rendered now; the others as they are. With
    every keyed item's text (UTF-8) by its key."""
    out: list[Any] = []
    texts: dict[str, bytes] = {}
    for item, key in zip(items, keys, strict=True):
        if key is None:
            out.append(item)
            continue
        text = texts.get(key) or kept.get(key)
        if text is None:
            text = dumps_at(item, ITEM_NL).encode("utf-8")
        texts[key] = text
        out.append(Rendered(text, ITEM_NL))
    return out, texts


def with_items(section: Section, name: str, items: list[Any]) -> Section:
    """A copy of ``section`` whose ``data[name]`` is ``items`` (the section itself unchanged)."""
    return dataclasses.replace(section, data={**section.data, name: items})
