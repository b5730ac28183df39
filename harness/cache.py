"""Results keyed by content: probe definition hash, column tree + edits, interpreter, engine.

Stored as one small JSON file per key under ``HARNESS_CACHE_DIR`` (default
``$XDG_CACHE_HOME/harness``, else ``~/.cache/harness``). Writes are atomic; a corrupt entry is a miss.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from harness import process
from harness.atomic import write_atomic


def cache_dir() -> Path:
    from harness.workarea import cache_area, ensure_private

    return ensure_private(cache_area(), "cache directory")


def content_key(*parts: Any) -> str:
    """A stable sha256 over JSON-able parts."""
    return hashlib.sha256(
        json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str).encode()
    ).hexdigest()


def file_digest(path: Path) -> str:
    return (
        hashlib.sha256(Path(path).read_bytes()).hexdigest() if Path(path).is_file() else "missing"
    )


_DESCRIBE = """import sys, os, importlib.metadata as m
print(os.path.realpath(sys.executable)); print(sys.version); print(sys.prefix)
print(sorted({(d.metadata["Name"] or "").lower() + "==" + d.version for d in m.distributions()}))
"""


@lru_cache(maxsize=16)
def interpreter_fingerprint(python: str) -> str:
    """Realpath, version, prefix and installed distributions of an interpreter (a different pytest
    or plugin set is a different key). Always a fresh process started in ``/``: what the running
    harness has on its own ``sys.path`` (its working directory, an editable checkout) must not
    enter the key. One child process per interpreter per run."""
    proc = process.run([python, "-c", _DESCRIBE], capture_output=True, text=True, cwd=os.sep)
    if proc.returncode != 0:
        return f"unusable:{python}"
    return content_key(proc.stdout)


class Cache:
    """A directory of JSON entries keyed by content (``namespace/ab/cdef….json``)."""

    def __init__(
        self, root: Path | None = None, namespace: str = "probes", enabled: bool = True
    ) -> None:
        self.root = (root or cache_dir()) / namespace
        self.enabled = enabled
        self.hits = 0
        self.misses = 0

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key[2:]}.json"

    def get(self, key: str) -> Any | None:
        if not self.enabled:
            return None
        try:
            value = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.misses += 1
            return None
        self.hits += 1
        return value

    def reject(self) -> None:
        """The last hit was found stale by its reader: count it as a miss."""
        self.hits -= 1
        self.misses += 1

    def put(self, key: str, value: Any) -> None:
        if not self.enabled:
            return
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(value, sort_keys=True), prefix=".tmp-", shared=False)


def provenance_text(prov: list[tuple[str, str]]) -> str:
    """``measured: k1 k2 · from cache: k3`` — how each cell or row was obtained, by key (8 hex)."""
    parts = []
    for how, label in (("run", "measured"), ("cache", "from cache")):
        keys = [k[:8] for k, h in prov if h == how]
        if keys:
            parts.append(f"{label}: {' '.join(keys)}")
    return " · ".join(parts) or "—"
