"""Results keyed by content: probe definition hash, column tree + edits, interpreter, engine.

Stored as one small JSON file per key under ``HARNESS_CACHE_DIR`` (default
``$XDG_CACHE_HOME/harness``, else ``~/.cache/harness``): ``{"key": …, "value": …, "digest": …}``,
sealed by ``harness/infra/digest.py`` (the digest covers the key and the value). Writes are atomic;
an entry that does not match its digest or its key is a miss, said once on stderr; a cache that
cannot be written is said once on stderr and the run goes on without keeping (``unwritable``).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from harness.infra.atomic import write_atomic
from harness.infra.digest import file_stamp, opened, say_mismatch, seal, unwritable

_MAX_ENTRY = 256 << 20  # a larger entry is not one this code wrote


def cache_dir() -> Path:
    """The cache folder (or, where it is refused, this run's own throwaway one)."""
    from harness.infra.workarea import usable_cache

    return usable_cache()


def content_key(*parts: Any) -> str:
    """A stable sha256 over JSON-able parts."""
    return hashlib.sha256(
        json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str).encode(
            "utf-8",
            "surrogateescape",  # a path that is not UTF-8 keys by its own bytes
        )
    ).hexdigest()


def file_digest(path: Path) -> str:
    return (
        hashlib.sha256(Path(path).read_bytes()).hexdigest() if Path(path).is_file() else "missing"
    )


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
        """The value kept under ``key``, or None: absent, unreadable, or not matching its digest
        or its key (ignored whole; said once on stderr)."""
        if not self.enabled:
            return None
        path = self._path(key)
        try:
            with open(path, "rb") as fh:
                stamp = file_stamp(os.fstat(fh.fileno()))
                raw = fh.read(_MAX_ENTRY + 1)
        except OSError:
            self.misses += 1
            return None
        entry: Any = None
        if opened(raw):
            try:
                entry = json.loads(raw)
            except (ValueError, RecursionError):
                entry = None
        if not (isinstance(entry, dict) and entry.get("key") == key and "value" in entry):
            self.misses += 1
            say_mismatch(f"{self.root.name}/{key[:2]}/{key[2:]}.json", stamp)
            return None
        self.hits += 1
        return entry["value"]

    def reject(self) -> None:
        """The last hit was found stale by its reader: count it as a miss."""
        self.hits -= 1
        self.misses += 1

    def put(self, key: str, value: Any) -> None:
        if self.enabled:
            self.put_text(key, json.dumps(value, sort_keys=True))

    def put_text(self, key: str, text: str) -> None:
        """Store ``text``, the JSON of a value (``json.dumps(value, sort_keys=True)``)."""
        if not self.enabled:
            return
        path = self._path(key)
        entry = ('{"key": ' + json.dumps(key) + ', "value": ', text, "}")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, seal(entry), prefix=".tmp-", shared=False)
        except OSError as exc:
            unwritable(self.root.parent, exc)


def provenance_text(prov: list[tuple[str, str]]) -> str:
    """``measured: k1 k2 · from cache: k3`` — how each cell or row was obtained, by key (8 hex)."""
    parts = []
    for how, label in (("run", "measured"), ("cache", "from cache")):
        keys = [k[:8] for k, h in prov if h == how]
        if keys:
            parts.append(f"{label}: {' '.join(keys)}")
    return " · ".join(parts) or "—"


# A report section cached by content: the sections that only read git (fidelity, drift, shape,
# conflicts, trace, pins) are keyed by the resolved commits, the options, the harness code and the
# git version; a hit is the same Section object the run would have built, except its provenance
# control. The encoding is tagged so that tuples, non-string keys and cells survive the round trip.


def _enc(x: Any) -> Any:
    from harness.report.model import Code, Sha

    if x is None or isinstance(x, bool | int | float | str):
        return x
    if isinstance(x, list):
        return ["L", [_enc(v) for v in x]]
    if isinstance(x, tuple):
        return ["T", [_enc(v) for v in x]]
    if isinstance(x, dict):
        return ["D", [[_enc(k), _enc(v)] for k, v in x.items()]]
    if isinstance(x, Code):
        return ["C", x.text]
    if isinstance(x, Sha):
        return ["S", x.sha]
    from dataclasses import fields, is_dataclass

    if is_dataclass(x) and not isinstance(x, type) and type(x).__name__ in _SECTION_PARTS:
        return ["O", type(x).__name__, {f.name: _enc(getattr(x, f.name)) for f in fields(x)}]
    raise TypeError(f"not cacheable: {type(x).__name__}")


_SECTION_PARTS = ("Section", "Table", "Finding", "Control", "Details")


def _dec(x: Any) -> Any:
    """The value ``_enc`` encoded (as JSON reads it back)."""
    from harness.report import model

    return _decode(x, model) if type(x) is list else x


def _decode(x: list[Any], model: Any) -> Any:
    # A leaf (most of a section: its strings and numbers) is taken as it is, without a call.
    tag, items = x[0], x[1]
    if tag == "L":
        return [_decode(v, model) if type(v) is list else v for v in items]
    if tag == "T":
        return tuple([_decode(v, model) if type(v) is list else v for v in items])
    if tag == "D":
        return {
            (_decode(k, model) if type(k) is list else k): (
                _decode(v, model) if type(v) is list else v
            )
            for k, v in items
        }
    if tag == "C":
        return model.Code(items)
    if tag == "S":
        return model.Sha(items)
    if tag == "O" and items in _SECTION_PARTS:
        fields = {k: _decode(v, model) if type(v) is list else v for k, v in x[2].items()}
        return getattr(model, items)(**fields)
    raise ValueError(f"unknown tag {tag!r}")


_code: list[str] = []  # this process's code digest, once known


def code_digest() -> str:
    """sha256 over the harness package's Python files (any change to the code is a new key):
    hashed once per process, unless the history index's record kept by the files' stamps gave it
    first (``note_code_digest``; hashing reads ~230 files: ~5 ms of a warm run)."""
    if not _code:
        root = Path(__file__).resolve().parent.parent  # the harness package
        h = hashlib.sha256()
        for path in sorted(root.rglob("*.py")):
            h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
        _code.append(h.hexdigest())
    return _code[0]


def note_code_digest(digest: str) -> None:
    """``code_digest()`` as a record kept by the package files' stamps says it is
    (``history_code.kept_code_digest``): not hashed again in this process."""
    if not _code:
        _code.append(digest)


def cached_value(cache: Cache, parts: tuple[Any, ...], build: Any) -> Any:
    """``build()``'s JSON value, or the one stored under the content key of ``parts`` with the
    harness code (a typed result handed between steps, kept beside its section)."""
    key = content_key("value", code_digest(), *parts)
    hit = cache.get(key)
    if isinstance(hit, dict) and "value" in hit:
        return hit["value"]
    value = build()
    cache.put(key, {"value": value})
    return value


def cached_section(cache: Cache, parts: tuple[Any, ...], build: Any) -> Any:
    """``build()``'s Section, or the one stored under the content key of ``parts`` (what the section
    read: resolved commits and options) with the harness code. A control names the key and how the
    section was obtained; nothing else differs between a measured and a cached section."""
    from harness.report.model import Control, Section

    key = content_key("section", code_digest(), *parts)
    section: Section | None = None
    hit = cache.get(key)
    if hit is not None:
        try:
            section = _dec(hit)
        except (ValueError, TypeError, KeyError, IndexError):
            section = None
        if not isinstance(section, Section):
            cache.reject()
            section = None
    how = "cache"
    if section is None:
        how, section = "run", build()
        if cache.enabled:  # kept only when the stored text reads back as the same section
            try:
                text: str | None = json.dumps(_enc(section), sort_keys=True)
            except TypeError:
                text = None  # something the encoding does not know: not cached
            if text is not None and _dec(json.loads(text)) == section:
                cache.put_text(key, text)
    section.controls.append(
        Control("section cache", provenance_text([(key, how)]) + " (git content key)", None)
    )
    return section
