"""The patch store: diffs of commits read in batches (through the history index where there is
one) and kept, full for what is compared and ± lines only for search candidates; the signed
lines and patch id of a change."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import repeat
from typing import TYPE_CHECKING

from harness.checks.fidelity.compare import norm
from harness.git import GitRepo
from harness.git.patch import FilePatch, Patch, diff_many
from harness.infra.futures import Future, ThreadPoolExecutor

if TYPE_CHECKING:
    from harness.infra.history_index import HistoryIndex

_PREFETCH = ThreadPoolExecutor(max_workers=1, thread_name_prefix="harness-prefetch")


class PatchStore:
    """Diffs of commits, fetched in batches and kept: full diffs (with context) for what is
    compared, ± lines only (``-U0``) for candidates that are only searched."""

    def __init__(
        self,
        repo: GitRepo,
        merge_parents: dict[str, str] | None = None,
        index: HistoryIndex | None = None,
    ) -> None:
        self.repo = repo
        self.index = index  # the history index: diffs kept by commit, the same text git writes
        self.merge_parents = (
            merge_parents or {}
        )  # a merge's change is its diff against the first parent
        self.full: dict[str, Patch] = {}
        self.lines: dict[str, Patch] = {}  # -U0 diffs of search candidates
        self._keys: dict[str, Counter[tuple[str, bytes]]] = {}
        self._coming: dict[str, Future[None]] = {}  # full diffs being read by ``prefetch``
        self.batches = 0  # diff-tree processes started (a control reports it)

    def prefetch(self, shas: Sequence[str]) -> None:
        """Start reading these full diffs in a thread: ``ensure`` waits only for the ones it is
        asked for (a source found early is read while the search goes on)."""
        todo = sorted({s for s in shas if s not in self.full and s not in self._coming})
        if todo:
            self.batches += 1
            job = _PREFETCH.submit(self._read_full, todo)
            self._coming.update((s, job) for s in todo)

    def _read_full(self, todo: Sequence[str]) -> None:
        for p in self._diff([(s, self.merge_parents.get(s)) for s in todo], True):
            self.full[p.commit] = p

    def _diff(self, pairs: list[tuple[str, str | None]], context: bool) -> list[Patch]:
        if self.index is not None:
            return self.index.diffs(pairs, context=context)
        return diff_many(self.repo, pairs, context=context)

    def adopt(self, shas: Sequence[str], job: Future[list[Patch]]) -> None:
        """Full diffs of these commits (none a merge), read by ``job`` (``read_early``) before
        this store was made: ``ensure`` waits for them as for a prefetch."""
        todo = sorted({s for s in shas if s not in self.full and s not in self._coming})
        if todo:
            self.batches += 1
            kept = _PREFETCH.submit(self._adopt, job)
            self._coming.update((s, kept) for s in todo)

    def _adopt(self, job: Future[list[Patch]]) -> None:
        for p in job.result():
            self.full.setdefault(p.commit, p)

    def ensure(self, shas: Sequence[str]) -> None:
        for job in {self._coming[s] for s in shas if s in self._coming}:
            job.result()
        todo = sorted({s for s in shas if s not in self.full})
        if todo:
            self.batches += 1
            self._read_full(todo)

    def ensure_lines(self, shas: Sequence[str]) -> None:
        """± lines of many commits (no context), for patch ids and the similarity index."""
        todo = sorted({s for s in shas if s not in self.full and s not in self.lines})
        if todo:
            self.batches += 1
            pairs = [(s, self.merge_parents.get(s)) for s in todo]
            for p in self._diff(pairs, False):
                self.lines[p.commit] = p

    def changed(self, sha: str) -> list[FilePatch]:
        """A commit's files with their ± lines (hunks carry context only when read in full)."""
        got = self.full.get(sha) or self.lines[sha]
        return got.files

    def keys(self, sha: str) -> Counter[tuple[str, bytes]]:
        """Signed lines of one commit's change (computed once)."""
        if sha not in self._keys:
            self._keys[sha] = keys_of(self.changed(sha))
        return self._keys[sha]

    def files(self, shas: Sequence[str]) -> list[FilePatch]:
        return [f for s in shas for f in self.full[s].files]


def read_early(
    repo: GitRepo, index: HistoryIndex | None, shas: Callable[[], Sequence[str]]
) -> Future[list[Patch]]:
    """The full diffs of commits (none a merge) that ``shas`` names once it can (it is called in
    the prefetch thread): read while the source history is walked, and handed to the run's store
    by ``PatchStore.adopt``."""

    def read() -> list[Patch]:
        pairs: list[tuple[str, str | None]] = [(s, None) for s in shas()]
        if index is not None:
            return index.diffs(pairs, context=True)
        return diff_many(repo, pairs, context=True)

    return _PREFETCH.submit(read)


def keys_of(files: Sequence[FilePatch]) -> Counter[tuple[str, bytes]]:
    """Signed lines of a change; binary or line-less files count as one token naming the path.
    (``signed_keys`` of each file, counted into one Counter in C: adding Counters is a Python
    loop over every key.)"""
    c: Counter[tuple[str, bytes]] = Counter()
    for f in files:
        plus = list(filter(None, map(b"".join, map(bytes.split, f.added))))
        minus = list(filter(None, map(b"".join, map(bytes.split, f.removed))))
        c.update(zip(repeat("+"), plus))
        c.update(zip(repeat("-"), minus))
        if f.binary or not (plus or minus):
            c[("bin" if f.binary else "file", f.path.encode("utf-8", "surrogateescape"))] += 1
    return c


def patch_id(files: Sequence[FilePatch]) -> str:
    """Whitespace-insensitive id over path and ± lines per file (context and order of files ignored)."""
    h = hashlib.sha1()
    for f in sorted(files, key=lambda f: f.path):
        h.update(f.path.encode("utf-8", "surrogateescape") + b"\0")
        if f.binary:
            h.update(b"bin\0" + (f.new_blob or "").encode())
        for ln in f.removed:
            h.update(b"-" + norm(ln) + b"\n")
        for ln in f.added:
            h.update(b"+" + norm(ln) + b"\n")
    return h.hexdigest()
