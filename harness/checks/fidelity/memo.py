"""Per-pick work kept between runs, by the content it is a function of.

A re-run after one new pick should judge that pick, not the whole range again. What fidelity
computes per pick or per source PR (a resolution, a unit's follow-ups, an end-state row) is kept in
the history index (``harness/infra/history_index.py``) under a key built from every input it reads:
the commits (immutable), the source history's tip and fork point, and the harness code (the index's
stamp). A value read back is checked for shape before use; with no index nothing is kept.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from json.encoder import encode_basestring_ascii as _enc  # (C: what json.dumps calls)
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.infra.history_index import HistoryIndex


class Memo:
    """Memos of one run: ``scope`` is what every key shares (the source tip, the fork point)."""

    def __init__(self, index: HistoryIndex | None, scope: Sequence[Any]) -> None:
        self.index, self.scope = index, list(scope)
        self._texts = all(type(x) is str for x in self.scope)  # (a scope of strings: text kept)
        self._scope_text = json.dumps(self.scope) if self._texts else ""

    def __bool__(self) -> bool:
        return self.index is not None

    def _key(self, kind: str, parts: Sequence[Any]) -> str:
        # ASCII JSON: paths that are not UTF-8 travel as surrogate escapes, which have no UTF-8.
        if self._texts and type(kind) is str and all(type(x) is str for x in parts):
            # The text json.dumps writes of strings alone, in C (~440 end-state rows a run).
            text = f"[{_enc(kind)}, {self._scope_text}, [{', '.join(map(_enc, parts))}]]"
        else:
            text = json.dumps([kind, self.scope, list(parts)], ensure_ascii=True, default=str)
        return hashlib.sha256(text.encode("ascii")).hexdigest()

    def get(self, kind: str, parts: Sequence[Any], valid: Callable[[Any], bool]) -> Any | None:
        """The value kept for ``parts``, or None (none kept, or not of the shape ``valid`` wants)."""
        if self.index is None:
            return None
        return self.index.recall(kind, self._key(kind, parts), valid)

    def put(self, kind: str, parts: Sequence[Any], value: Any) -> None:
        if self.index is not None:
            self.index.remember(kind, self._key(kind, parts), value)


NO_MEMO = Memo(None, ())
