"""The history index's rendered fragments: the JSON text of report items by the digest of their
content (``report/json_items.py``), so that a re-run writes an unchanged item as the last run
wrote it. One run's texts, end to end in ``fragments-<sha1>.pack`` (named by its bytes), and their
table ``fragments.json`` (sealed and stamped as every file of the index: the pack, and per key its
offset, length and sha1), both replaced by the next run that renders any. A chunk is used only
when its bytes hash to the sha1 kept (a damaged pack is said, as a diff pack is)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from harness.infra.atomic import write_atomic
from harness.infra.history_packs import PACK_NAME, read_chunks

if TYPE_CHECKING:
    from harness.infra.history_index import HistoryIndex

TABLE = "fragments.json"
_MAX_BYTES = 512 << 20  # an offset or length past this is not one this code wrote


def fragments(index: HistoryIndex, keys: Sequence[str]) -> dict[str, bytes]:
    """The texts kept for these keys (UTF-8); a key not kept, or whose bytes are not the ones
    kept, is left out."""
    data = index._read(TABLE) if keys else None
    table = data.get("fragments") if data is not None else None
    pack = data.get("pack") if data is not None else None
    if not isinstance(table, dict) or not isinstance(pack, str) or not PACK_NAME.match(pack):
        return {}
    spans = {k: table[k] for k in dict.fromkeys(keys) if _valid_span(table.get(k))}
    name = f"fragments-{pack}.pack"
    got = read_chunks(index.dir / name, list(spans.values()))
    out = {k: chunk for k, chunk in zip(spans, got, strict=True) if chunk is not None}
    if len(out) < len(spans):
        index.rebuilt.append(f"{name}: a fragment not as kept")
        index._say_damaged(name)
    index.served["fragments"] += len(out)
    return out


def keep_fragments(index: HistoryIndex, texts: Mapping[str, bytes]) -> None:
    """Keep ``texts`` (this run's, by key) in place of the last run's (under the index's lock)."""
    if not texts:
        return
    named = hashlib.sha1()
    table: dict[str, list[Any]] = {}
    at = 0
    for k, text in texts.items():
        named.update(text)
        table[k] = [at, len(text), hashlib.sha1(text).hexdigest()]
        at += len(text)
    pack = f"fragments-{named.hexdigest()}.pack"
    try:
        with index._locked():
            write_atomic(index.dir / pack, list(texts.values()), prefix=".tmp-", shared=False)
            head = {"stamp": index.stamp, "pack": pack[10:-5], "fragments": table}
            index._write(TABLE, json.dumps(head, separators=(",", ":")))
            for old in index.dir.glob("fragments-*.pack"):
                if old.name != pack:
                    old.unlink(missing_ok=True)
    except OSError as e:
        index.rebuilt.append(f"fragments not written: {e.strerror or e}")


def _valid_span(v: Any) -> bool:
    """[offset, length, sha1] of a chunk of the pack."""
    return (
        isinstance(v, list)
        and len(v) == 3
        and type(v[0]) is int
        and type(v[1]) is int
        and 0 <= v[0] <= _MAX_BYTES
        and 0 <= v[1] <= _MAX_BYTES
        and isinstance(v[2], str)
        and len(v[2]) == 40
    )
