"""A persistent, content-keyed index of one repository's history, kept in the private cache.

What fidelity reads of the source history is a function of immutable commits: a commit's parents,
dates, subject and changed paths; whether its message matches a fixed ``--grep`` and its body; the
``diff-tree`` text of a commit against a parent. The index keeps those answers by commit sha, so a
run reads from git only what is new since the last one (the range walk itself is one cheap
``rev-list``), and keeps whole fidelity answers by the resolved commits they were computed from.

Layout, under ``<cache>/history/<repo key>/`` (the cache folder is private: 0700, owner-checked by
``harness/infra/workarea.py``):

- ``index.json``: commit rows (column by column) and grep answers; ``diffs.json``: where each raw ``diff-tree``
  chunk lies (``diffs-<sha1>.pack``: chunks end to end, named by their content; a run appends
  one pack of what it diffed, not a rewrite of every diff) with the chunk's length and sha1,
  checked on every read; ``memo-<kind>.json``: per-pick memos; ``results/<key>.json``: whole
  answers (``<key>.txt``: an answer's JSON rendering, written as it is); ``fragments-<sha1>.pack``
  with ``fragments.json``: the last run's rendered report items (``history_fragments.py``). Each
  JSON file names the
  format, the harness code digest, the git version and the repository it describes (``stamp``)
  and ends with a digest of every byte before it
  (``harness/infra/digest.py``); a file that fails its digest (cut short, bit rot, an edit: said
  once on stderr), does not parse, whose stamp differs, or whose records have the wrong shape is
  ignored whole and rebuilt, never partly trusted; a chunk whose pack is gone or whose bytes do not
  match is diffed again (a damaged pack is said too). JSON and raw git text only (no
  pickle: a planted file must not run code).
- Writes are atomic (``harness/infra/atomic.py``: a killed run leaves the previous file or none) and
  serialised by an ``flock`` on ``lock``: a writer re-reads the file under the lock and adds what
  it learned, so two concurrent runs each keep the other's rows.
- Bounded: at most ``MAX_COMMITS`` commit rows, ``MAX_DIFF_BYTES`` of diff text (in at most
  ``MAX_PACKS`` packs: past that, or with more dead bytes than live ones, they are merged into
  one) and ``MAX_RESULTS`` answers; past a bound the rows unused for the most runs go first.

``--no-cache`` (and a cache that cannot be used) means no index: nothing read, nothing written.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from itertools import compress
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.git import GitRepo
from harness.git.picks import LogEntry, bodies_of, entries, walk
from harness.git.picks import bodies as log_bodies
from harness.git.picks import history as log_history
from harness.infra.atomic import write_atomic
from harness.infra.detach import detachable, run_detached, wait_unlocked
from harness.infra.digest import TRAILER, opened, say_mismatch, seal, unwritable
from harness.infra.history_code import kept_code_digest
from harness.infra.history_codec import hook
from harness.infra.history_packs import keep_table, read_chunks, valid_table
from harness.infra.history_rows import (
    COLUMNS,
    FULL_ID,
    Row,
    has_body,
    merge_rows,
    rows_of,
    set_body,
    shas,
)

if TYPE_CHECKING:
    from harness.git.patch import Patch

FORMAT = "harness.history-index/3"
MAX_COMMITS = 400_000  # ~100 MiB of JSON with paths at most; a 100k-commit history is ~25 MiB
MAX_DIFF_BYTES = 64 << 20
MAX_PACKS = 8
MAX_RESULTS = 32
MAX_MEMO = 50_000  # memo entries per kind (a resolution, a unit's follow-ups, an end-state row)
# A walk is a whole history's commit ids (~0.9 MB at 20k commits); a range its commits' messages.
_MEMO_LIMITS = {"walk": 8, "range": 16, "range-heads": 64}
MAX_FILE_BYTES = 512 << 20  # a larger file is not read: it is not one this code wrote
_SERVED = "commits read diffs diffed answers built recalled remembered fragments".split()
_REST = 0.5  # past this share of commits missing, one walking log is cheaper than the gaps

# (a Row's columns, for C-level maps over many rows)
_PARENT_COL, _AUTHOR_COL, _COMMITTED_COL, _SUBJECT_COL, _PATHS_COL = map(itemgetter, range(5))
_CHECKED_COL = itemgetter(6)


def repo_key(repo: GitRepo) -> str:
    """The index folder of a repository: its git folder's real path, hashed."""
    return hashlib.sha256(
        str(Path(repo.git_dir).resolve()).encode("utf-8", "surrogateescape")
    ).hexdigest()[:32]


class HistoryIndex:
    """The index of ``repo`` under ``root`` (``<cache>/history``); loaded part by part on first use,
    written by ``save``."""

    def __init__(self, repo: GitRepo, root: Path) -> None:
        from harness.git.history import git_version

        self.repo = repo
        self.dir = root / repo_key(repo)
        self.root = root
        wait_unlocked(self.dir / "lock")  # a run just ended may still be writing (``finish``)
        code, self._code_record = kept_code_digest(root)
        self.stamp = [FORMAT, code, git_version(repo), str(Path(repo.git_dir).resolve())]
        self._lock = threading.RLock()
        self._walk_lock = threading.Lock()
        self.commits: dict[str, Row] | None = None  # None: not loaded yet
        self.greps: list[str] = []
        self.run = 1
        # key → [last run used, pack, offset, length, sha1 of the chunk]
        self._diffs: dict[str, list[Any]] | None = None
        self._fresh: dict[str, bytes] = {}  # chunks diffed by this run, packed at ``save``
        self._seen: dict[str, tuple[int, ...]] = {}  # a file's stamp when this run read it
        self._order: dict[tuple[tuple[str, ...], tuple[str, ...]], list[str]] = {}
        self._pending: list[tuple[tuple[str, ...], tuple[str, ...], str, dict[str, str]]] = []
        self._new_commits = False
        self._new_diffs = False
        self._memos: dict[str, dict[str, list[Any]]] = {}  # kind → key → [last run used, value]
        self._new_memos: set[str] = set()
        self._used: list[Path] = []  # answers served, touched at ``save`` (after validation)
        # Writes left for ``finish`` (``defer``), None: written at once; the lock a detached writer
        # holds from before it is forked (``_locked`` then takes no other).
        self._later: list[Callable[[], object]] | None = None
        self._save_wanted = False
        self._held: int | None = None
        self.rebuilt: list[str] = []  # why a stored file was not used (tests read it)
        # What came from the index and what from git (tests and bench read it): commit rows,
        # diffs, whole answers.
        self.served = dict.fromkeys(_SERVED, 0)

    # -- files -------------------------------------------------------------------------------
    def _read(
        self, name: str, hook: Callable[[dict[str, Any]], Any] | None = None
    ) -> dict[str, Any] | None:
        """A stored file of this index, or None where it is absent, foreign or malformed."""
        path = self.dir / name
        try:
            with open(path, "rb") as fh:
                st = os.fstat(fh.fileno())
                self._seen[name] = _stamp(st)
                raw = fh.read(MAX_FILE_BYTES + 1)
        except FileNotFoundError:
            self._seen[name] = ()
            return None
        except OSError as e:
            self.rebuilt.append(f"{name}: {e.strerror}")
            return None
        if len(raw) > MAX_FILE_BYTES:
            self.rebuilt.append(f"{name}: larger than {MAX_FILE_BYTES} bytes")
            return None
        if not opened(raw):  # cut short, bit rot, an edit: ignored whole, said once
            self.rebuilt.append(f"{name}: did not match its digest")
            say_mismatch(f"{self.root.name}/{self.dir.name}/{name}", _stamp(st))
            return None
        try:
            data = json.loads(raw, object_hook=hook)
        except (ValueError, TypeError, KeyError, RecursionError):
            self.rebuilt.append(f"{name}: not JSON")
            return None
        if not isinstance(data, dict) or data.get("stamp") != self.stamp:
            self.rebuilt.append(f"{name}: another format, harness, git or repository")
            return None
        return data

    def _say_damaged(self, name: str) -> None:
        """The note for a pack whose chunk did not match its sha1 (not for one another run merged
        away: a pack that is gone is no damage)."""
        try:
            st = os.stat(self.dir / name)
        except OSError:
            return
        say_mismatch(f"{self.root.name}/{self.dir.name}/{name}", _stamp(st))

    def _theirs(self, name: str) -> dict[str, Any] | None:
        """``name`` as another run left it since this run read it (None: unchanged or gone): a
        file replaced has another stamp (``_stamp``)."""
        try:
            st = os.stat(self.dir / name)
        except FileNotFoundError:
            return None
        if self._seen.get(name) == _stamp(st):
            return None
        return self._read(name)

    def _write(self, name: str, text: str | Iterable[str]) -> None:
        """Write a file of the index (under the lock), sealed with its digest; this run knows it
        as written."""
        write_atomic(self.dir / name, seal(text), prefix=".tmp-", shared=False)
        st = os.stat(self.dir / name)
        self._seen[name] = _stamp(st)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        if self._held is not None:  # a detached writer: the lock was taken before it was forked
            self._clean()
            yield
            return
        fd = self._lock_file()
        try:
            self._clean()
            yield
        finally:
            os.close(fd)

    def _lock_file(self) -> int:
        """The index's lock file, opened and locked (exclusive) for this process."""
        import fcntl

        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.dir / "lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _clean(self) -> None:
        """Under the lock: every writer writes under it, so a temporary file seen now is a killed
        run's; ``code.json`` is written at the first lock (opening writes nothing)."""
        for folder in (self.dir, self.dir / "results"):
            for tmp in folder.glob(".tmp-*"):
                tmp.unlink(missing_ok=True)
        if self._code_record is not None:
            self._write_code_record()

    def _write_code_record(self) -> None:
        """``code.json``, under the lock of the history folder that holds it (every index
        shares it): a temporary file seen there now is a killed run's."""
        import fcntl

        assert self._code_record is not None
        fd = os.open(self.root / "lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            for tmp in self.root.glob(".tmp-*"):
                tmp.unlink(missing_ok=True)
            write_atomic(self.root / "code.json", self._code_record, prefix=".tmp-", shared=False)
            self._code_record = None
        finally:
            os.close(fd)

    def _load_commits(self) -> dict[str, Row]:
        with self._lock:
            if self.commits is None:
                self.commits, self.greps, self.run = self._parse_commits(self._read("index.json"))
            return self.commits

    def _parse_commits(self, data: dict[str, Any] | None) -> tuple[dict[str, Row], list[str], int]:
        if data is None:
            return {}, [], 1
        greps, run = data.get("greps"), data.get("run")
        commits = (
            rows_of(data, len(greps))
            if isinstance(greps, list)
            and all(isinstance(g, str) for g in greps)
            and len(greps) <= 30
            and type(run) is int
            and run >= 0
            else None
        )
        if commits is None:
            self.rebuilt.append("index.json: records of the wrong shape")
            return {}, [], 1
        assert isinstance(greps, list) and isinstance(run, int)
        return commits, greps, run + 1

    def _load_diffs(self) -> dict[str, list[Any]]:
        with self._lock:
            if self._diffs is None:
                self._diffs = self._parse_diffs(self._read("diffs.json"))
            return self._diffs

    def _parse_diffs(self, data: dict[str, Any] | None) -> dict[str, list[Any]]:
        diffs = data.get("diffs") if data is not None else {}
        if not valid_table(diffs, MAX_DIFF_BYTES):
            self.rebuilt.append("diffs.json: records of the wrong shape")
            return {}
        return diffs

    # -- history -----------------------------------------------------------------------------
    def _walk(self, include: Sequence[str], exclude: Sequence[str]) -> list[str]:
        """The commits of ``include ^exclude`` in ``git log`` order. Between commits named by
        their full ids the walk never changes: it is kept as a memo (a 20k-commit history is one
        ``rev-list`` of ~0.13 s against ~10 ms to read back)."""
        key = (tuple(include), tuple(exclude))
        with self._walk_lock:
            if key not in self._order:
                fixed = all(FULL_ID.match(x) for x in (*include, *exclude))
                kept = self.recall("walk", json.dumps(key), shas) if fixed else None
                self._order[key] = kept if kept is not None else walk(self.repo, include, exclude)
                if fixed and kept is None:
                    self.remember("walk", json.dumps(key), self._order[key])
            return self._order[key]

    def history(
        self, include: Sequence[str], exclude: Sequence[str] = (), *, paths: bool = False
    ) -> list[LogEntry]:
        """``git/picks.history``'s answer: from the index where it has the commits, the rest
        from git."""
        commits = self._load_commits()
        key = (tuple(include), tuple(exclude))
        with self._walk_lock:
            order = self._order.get(key)
        if order is None and not commits:  # nothing kept yet: one walking log, as without an index
            got = log_history(self.repo, include, exclude, paths=paths)
            with self._walk_lock:
                if key not in self._order and all(FULL_ID.match(x) for x in (*include, *exclude)):
                    self.remember("walk", json.dumps(key), [e.sha for e in got])
                self._order.setdefault(key, [e.sha for e in got])
            self._keep(got, paths)
            self.served["read"] += len(got)
            return got
        order = order if order is not None else self._walk(include, exclude)
        with self._lock:
            missing = [s for s in order if s not in commits or (paths and commits[s][4] is None)]
        if len(missing) > _REST * len(order):
            got = log_history(self.repo, include, exclude, paths=paths)
            if [e.sha for e in got] != order:  # the walk moved under us: git's answer stands
                self._keep(got, paths)
                return got
        else:
            got = entries(self.repo, missing, paths=paths)
        self._keep(got, paths)
        self.served["read"] += len(got)
        self.served["commits"] += len(order) - len(got)
        with self._lock:
            rows = list(map(commits.__getitem__, order))
            for r in rows:
                r[5] = self.run
            # LogEntry._make without its keyword wrapper, column by column in C.
            columns = (
                order,
                map(tuple, map(_PARENT_COL, rows)),
                map(_AUTHOR_COL, rows),
                map(_SUBJECT_COL, rows),
                map(tuple, map(_PATHS_COL, rows)) if paths else [None] * len(rows),
                map(_COMMITTED_COL, rows),
            )
            return list(map(partial(tuple.__new__, LogEntry), zip(*columns, strict=True)))

    def _keep(self, got: Sequence[LogEntry], paths: bool) -> None:
        commits = self._load_commits()
        with self._lock:
            for e in got:
                row = commits.get(e.sha)
                if row is None:
                    # The entry's own tuples and strings: a 100k-commit history holds them once.
                    commits[e.sha] = [
                        e.parents, e.author_time, e.commit_time, e.subject,
                        e.paths if paths else None, self.run, 0, None,
                    ]  # fmt: skip
                else:
                    row[5] = self.run
                    if paths and row[4] is None and e.paths is not None:
                        row[4] = e.paths
            if got:
                self._new_commits = True

    def bodies(
        self,
        include: Sequence[str],
        exclude: Sequence[str] = (),
        *,
        merges: bool = False,
        grep: Sequence[str] = (),
    ) -> dict[str, str]:
        """``git/picks.bodies``'s answer (merges only, or the commits matching ``grep``), from
        the index for the commits it has checked against the same filter."""
        gkey = json.dumps([merges, list(grep)])
        commits = self._load_commits()
        with self._lock:
            bit = self.greps.index(gkey) if gkey in self.greps else None
        if bit is None or not commits:
            got = log_bodies(self.repo, include, exclude, merges=merges, grep=grep)
            with self._lock:  # kept at ``save``, once the walk's commits are known
                self._pending.append((tuple(include), tuple(exclude), gkey, got))
            return got
        order = self._walk(include, exclude)
        mask, name = 1 << bit, str(bit)
        with self._lock:
            rows: list[Any] = list(map(commits.get, order))
            # Every commit known and checked against this grep: tested in C, the common case.
            if None not in rows and all(map(mask.__and__, map(_CHECKED_COL, rows))):
                missing: list[str] = []
            else:
                missing = [
                    s for s, r in zip(order, rows, strict=True) if r is None or not r[6] & mask
                ]
        if len(missing) > _REST * len(order):
            got = log_bodies(self.repo, include, exclude, merges=merges, grep=grep)
            with self._lock:
                self._pending.append((tuple(include), tuple(exclude), gkey, got))
            return got
        fresh = bodies_of(self.repo, missing, merges=merges, grep=grep)
        with self._lock:
            if missing and all(s in commits for s in missing):
                for s in missing:
                    commits[s][6] |= mask
                    if s in fresh:
                        set_body(commits[s], name, fresh[s])
                self._new_commits = True
            out: dict[str, str] = {}
            # Only rows with a body kept (or a fresh one) can answer, in git log's order (newest
            # first): picked out in C.
            rows = list(map(commits.get, order))
            bodied = compress(order, map(has_body, rows))
            wanted = set(fresh).union(bodied)
            for s in filter(wanted.__contains__, reversed(order)):
                body = fresh.get(s)
                if body is None and s in commits:
                    body = (commits[s][7] or {}).get(name)
                if body is not None:
                    out[s] = body
            return out

    def _settle_pending(self) -> None:
        """Keep the grep answers read by a walking log, for every commit of that walk."""
        if not self._pending:
            return  # (a run served whole never loads the commit rows)
        commits = self._load_commits()
        for include, exclude, gkey, got in self._pending:
            order = self._order.get((include, exclude))
            if order is None or not all(s in commits for s in order):
                continue
            if gkey not in self.greps:
                if len(self.greps) >= 30:
                    continue
                self.greps.append(gkey)
            bit = self.greps.index(gkey)
            mask, name = 1 << bit, str(bit)
            for s in order:
                commits[s][6] |= mask
                set_body(commits[s], name, got.get(s))
            self._new_commits = True
        self._pending.clear()

    # -- diffs -------------------------------------------------------------------------------
    def diffs(
        self, pairs: Sequence[tuple[str, str | None]], *, context: bool = True
    ) -> list[Patch]:
        """``git/patch.diff_many(repo, pairs, context=context)``: the chunks kept, the rest diffed."""
        # (imported here: git/patch loads concurrent.futures, ~5 ms a run served whole never uses)
        from harness.git.patch import Patch, diff_chunks, parse_files

        kept = self._load_diffs()
        keys = [f"{c}:{a or ''}:{'full' if context else 'U0'}" for c, a in pairs]
        chunks: dict[str, bytes] = {}
        with self._lock:
            packed: dict[str, list[tuple[str, list[Any]]]] = {}
            for k in keys:
                if k in self._fresh:
                    chunks[k] = self._fresh[k]
                elif k in kept:
                    packed.setdefault(kept[k][1], []).append((k, kept[k]))
            for pack, hits in packed.items():
                got = read_chunks(self.dir / f"diffs-{pack}.pack", [h[2:] for _, h in hits])
                for (k, hit), chunk in zip(hits, got, strict=True):
                    if chunk is None:  # the pack is gone (merged by another run) or damaged
                        kept.pop(k, None)
                        self.rebuilt.append(f"diffs-{pack}.pack: {k} not as kept")
                        self._say_damaged(f"diffs-{pack}.pack")
                    else:
                        chunks[k] = chunk
                        hit[0] = self.run
        todo = [(p, k) for p, k in zip(pairs, keys, strict=True) if k not in chunks]
        self.served["diffs"] += len(pairs) - len(todo)
        self.served["diffed"] += len(todo)
        if todo:
            fresh = diff_chunks(self.repo, [p for p, _ in todo], context=context)
            with self._lock:
                for (_, k), chunk in zip(todo, fresh, strict=True):
                    chunks[k] = self._fresh[k] = chunk
                self._new_diffs = True
        return [Patch(c, a, parse_files(chunks[k])) for (c, a), k in zip(pairs, keys, strict=True)]

    # -- whole answers -----------------------------------------------------------------------
    def _answer_path(self, parts: Sequence[Any]) -> tuple[str, Path]:
        from harness.infra.cache import content_key

        key = content_key("answer", self.stamp, *parts)
        return key, self.dir / "results" / f"{key}.json"

    def kept(self, parts: Sequence[Any], valid: Callable[[Any], bool]) -> Any | None:
        """The JSON value kept under the content key of ``parts`` (with the stamp) where
        ``valid`` accepts it, else None."""
        key, path = self._answer_path(parts)
        stored = self._read(f"results/{key}.json", hook)
        if stored is None or stored.get("key") != key or "value" not in stored:
            return None
        if not valid(stored["value"]):
            self.rebuilt.append(f"results/{key}.json: an answer of the wrong shape")
            return None
        self._used.append(path)  # the newest answers are the ones kept (touched at ``save``)
        self.served["answers"] += 1
        return stored["value"]

    def keep(self, parts: Sequence[Any], value: Any) -> None:
        """Keep ``value`` (JSON, ``pack``ed) under the content key of ``parts``."""
        key, path = self._answer_path(parts)
        try:
            # Compact, and no cycle check: ``pack`` made it (~20 % less to encode, write and read).
            text = json.dumps(
                {"stamp": self.stamp, "key": key, "value": value},
                separators=(",", ":"),
                check_circular=False,
            )
        except (TypeError, ValueError):
            return  # something JSON does not hold: not kept
        try:
            self._keep_answer(path, text)
        except OSError as e:
            self.rebuilt.append(f"answer not written: {e.strerror or e}")
            unwritable(self.root.parent, e)

    # The answer's rendering (a function of it): kept raw, the JSON value of "text" in a sealed
    # object; read back by slicing, never parsed.
    def _text_head(self, key: str) -> str:
        return f'{{"stamp":{json.dumps(self.stamp)},"key":{json.dumps(key)},"text":'

    def kept_text(self, parts: Sequence[Any]) -> bytes | None:
        """The text kept beside the answer for ``parts`` (``keep_text``), UTF-8, or None."""
        key, _ = self._answer_path(parts)
        try:
            with open(self.dir / "results" / f"{key}.txt", "rb") as fh:
                st, raw = os.fstat(fh.fileno()), fh.read()
        except OSError:
            return None
        if not opened(raw):  # (said once, as for every file of the index)
            say_mismatch(f"{self.root.name}/{self.dir.name}/results/{key}.txt", _stamp(st))
            return None
        head = self._text_head(key).encode()
        return raw[len(head) : len(raw) - TRAILER] if raw.startswith(head) else None

    def keep_text(self, parts: Sequence[Any], text: str) -> None:
        """Keep ``text`` (a JSON value) beside the answer kept for ``parts``, where there is one."""
        key, path = self._answer_path(parts)
        if not path.is_file():
            return
        try:
            with self._locked():
                sealed = seal([self._text_head(key), text, "}"])
                write_atomic(path.with_suffix(".txt"), sealed, prefix=".tmp-", shared=False)
        except OSError as e:
            self.rebuilt.append(f"answer text not written: {e.strerror or e}")

    def _keep_answer(self, path: Path, text: str) -> None:
        with self._locked():
            (self.dir / "results").mkdir(exist_ok=True, mode=0o700)
            write_atomic(path, seal(text), prefix=".tmp-", shared=False)
            kept = sorted(
                (p for p in (self.dir / "results").glob("*.json")),
                key=lambda p: p.stat().st_mtime_ns,
                reverse=True,
            )
            for old in kept[MAX_RESULTS:]:
                old.unlink(missing_ok=True)
                old.with_suffix(".txt").unlink(missing_ok=True)  # its rendered text (answers)

    # -- memos -------------------------------------------------------------------------------
    # Per-pick work kept by the content it is a function of (fidelity's resolutions, a unit's
    # follow-ups, end-state rows): the caller builds the key from every input and checks the
    # value's shape on the way back (``valid``); a value that fails is dropped, never used.
    def _memo(self, kind: str) -> dict[str, list[Any]]:
        with self._lock:
            if kind not in self._memos:
                self._memos[kind] = self._parse_memo(kind, self._read(f"memo-{kind}.json"))
            return self._memos[kind]

    def _parse_memo(self, kind: str, data: dict[str, Any] | None) -> dict[str, list[Any]]:
        entries = data.get("entries") if data is not None else {}
        if not isinstance(entries, dict) or not all(
            isinstance(k, str) and isinstance(v, list) and len(v) == 2 and type(v[0]) is int
            for k, v in entries.items()
        ):
            self.rebuilt.append(f"memo-{kind}.json: records of the wrong shape")
            return {}
        return entries

    def holds(self, kind: str) -> bool:
        """Whether any ``kind`` memo is kept."""
        return bool(self._memo(kind))

    def recall(self, kind: str, key: str, valid: Callable[[Any], bool]) -> Any | None:
        """The value remembered under ``key`` where ``valid`` accepts it, else None."""
        memo = self._memo(kind)
        with self._lock:
            hit = memo.get(key)
            if hit is None:
                return None
            if not valid(hit[1]):
                del memo[key]
                self.rebuilt.append(f"memo-{kind}.json: an entry of the wrong shape")
                return None
            hit[0] = self.run
            self.served["recalled"] += 1
            self.served[f"recalled {kind}"] = self.served.get(f"recalled {kind}", 0) + 1
            return hit[1]

    def remember(self, kind: str, key: str, value: Any) -> None:
        """Keep a JSON ``value`` under ``key`` (written at ``save``)."""
        memo = self._memo(kind)
        with self._lock:
            memo[key] = [self.run, value]
            self._new_memos.add(kind)
            self.served["remembered"] += 1

    def _save_memo(self, kind: str) -> None:
        memo = self._memos[kind]
        for k, v in self._parse_memo(kind, self._theirs(f"memo-{kind}.json")).items():
            memo.setdefault(k, v)  # another run's entries
        most = min(MAX_MEMO, _MEMO_LIMITS.get(kind, MAX_MEMO))
        if len(memo) > most:  # the entries unused for the most runs go first
            for k in sorted(memo, key=lambda k: memo[k][0])[: len(memo) - most]:
                del memo[k]
        try:
            text = json.dumps({"stamp": self.stamp, "entries": memo}, separators=(",", ":"))
        except (TypeError, ValueError):
            return
        self._write(f"memo-{kind}.json", text)

    # -- the range (infra/history_ranges.py) ---------------------------------------------------
    def prime_range(self, base: str, head: str) -> None:
        """Seed the repository's caches of ``base..head`` (``git/history.py``) from the index."""
        from harness.infra.history_ranges import prime_range

        prime_range(self, base, head)

    def keep_range(self, base: str, head: str) -> bool:
        """Remember what the repository's caches hold of ``base..head``; whether anything was
        new."""
        from harness.infra.history_ranges import keep_range

        return keep_range(self, base, head)

    # -- writing -----------------------------------------------------------------------------
    def defer(self) -> None:
        """From now on this run's writes (``save``, and what its callers give ``later``) wait for
        ``finish``: a command calls it once its report is out."""
        if self._later is None:
            self._later = []

    @property
    def deferring(self) -> bool:
        return self._later is not None

    def later(self, job: Callable[..., object], *args: Any) -> None:
        """``job(*args)`` now, or at ``finish`` after ``defer`` (its arguments are not changed
        meanwhile: the caller's answer is final)."""
        if self._later is None:
            job(*args)
        else:
            self._later.append(partial(job, *args))

    def finish(self) -> None:
        """The writes deferred since ``defer``, in order, then ``save``: by a detached process
        (``infra/detach.py``) holding the index's lock from before it is forked (a run opening
        the index meanwhile waits for it: ``detach.wait_unlocked``), else here. A cache that cannot
        be written is said here, as ever: where taking the lock or writing a byte fails."""
        jobs, self._later = self._later or [], None
        if self._save_wanted:
            jobs.append(self.save)
            self._save_wanted = False
        quick = jobs == [self.save] and not (
            self._new_commits or self._new_diffs or self._new_memos or self._pending
        )  # (a run served whole: the answers it used touched, nothing written)
        if quick or not detachable():
            for job in jobs:
                job()
            return
        try:
            fd = self._lock_file()
        except OSError as e:
            return self._unwritable(e)
        try:
            try:  # a byte written: a full disk is said now, as a run writing itself would say it
                write_atomic(self.dir / ".tmp-probe", "probe\n", prefix=".tmp-", shared=False)
                (self.dir / ".tmp-probe").unlink()
            except OSError as e:
                return self._unwritable(e)
            self._held = fd
            try:
                run_detached(jobs, self._after_fork, fd)
            except OSError:  # no process to be had (a limit): written here, as elsewhere
                for job in jobs:
                    job()
        finally:
            self._held = None
            os.close(fd)  # this process's copy: the writer's keeps the lock until it is done

    def _after_fork(self, fd: int) -> None:
        """In the detached writer: new locks (the run's threads may have held its own); ``fd``'s."""
        self._lock, self._walk_lock, self._held = threading.RLock(), threading.Lock(), fd

    def save(self) -> None:
        """Write what this run learned, merged with what another run wrote meanwhile. The index
        only saves work: a cache that cannot be written (full, read-only) costs the next run its
        speed, not this run its answer. After ``defer``: written by ``finish``."""
        if self._later is not None:
            self._save_wanted = True
            return
        try:
            self._save()
        except OSError as e:
            self._unwritable(e)

    def _unwritable(self, e: OSError) -> None:
        self.rebuilt.append(f"not written: {e.strerror or e}")
        unwritable(self.root.parent, e)

    def _save(self) -> None:
        with self._lock:
            for path in self._used:
                try:
                    os.utime(path)
                except OSError:
                    pass
            self._used.clear()
            self._settle_pending()
            if not self._new_commits and not self._new_diffs and not self._new_memos:
                if (
                    self._code_record is not None  # code.json to write again
                    or any(self.dir.glob(".tmp-*"))
                    or any((self.dir / "results").glob(".tmp-*"))
                ):
                    with self._locked():  # a killed writer's temporary file: removed under it
                        pass
                return
            with self._locked():
                if self._new_commits and self.commits is not None:
                    self._save_commits()
                if self._new_diffs and self._diffs is not None:
                    self._save_diffs()
                for kind in sorted(self._new_memos):
                    self._save_memo(kind)
            self._new_commits = self._new_diffs = False
            self._new_memos.clear()

    def _save_commits(self) -> None:
        assert self.commits is not None
        theirs, their_greps, their_run = self._parse_commits(self._theirs("index.json"))
        run = max(self.run, their_run - 1)
        merge_rows(self.commits, self.greps, theirs, their_greps, MAX_COMMITS)
        commits = self.commits
        rows = list(commits.values())
        head = json.dumps({"stamp": self.stamp, "run": run, "greps": self.greps})
        bodies = {s: r[7] for s, r in commits.items() if r[7]}

        def parts() -> Iterator[str]:  # one column at a time (100k commits: ~20 MB of text)
            yield head[:-1] + ', "columns": {'
            for i, name in enumerate(COLUMNS):
                column = list(commits) if i == 0 else list(map(itemgetter(i - 1), rows))
                yield ("," if i else "") + json.dumps(name) + ":"
                yield json.dumps(column, separators=(",", ":"))
            yield '}, "bodies": ' + json.dumps(bodies, separators=(",", ":")) + "}"

        self._write("index.json", parts())

    def _save_diffs(self) -> None:
        """One pack of the chunks this run diffed, the table merged with another run's and kept
        in bounds (``history_packs.keep_table``); then packs nothing points at go."""
        assert self._diffs is not None
        theirs = self._parse_diffs(self._theirs("diffs.json"))
        fresh = dict(self._fresh)
        self._fresh.clear()
        limits = (self.run, MAX_DIFF_BYTES, MAX_PACKS)
        dead = keep_table(self.dir, self._diffs, theirs, fresh, limits, write_atomic)
        text = json.dumps({"stamp": self.stamp, "diffs": self._diffs}, separators=(",", ":"))
        self._write("diffs.json", text)
        for name in dead:
            (self.dir / f"diffs-{name}.pack").unlink(missing_ok=True)


def wait_for_writers(cache: Path, limit_s: float = 60.0) -> None:
    """Wait for the detached writers of every index under ``cache`` to end (as a run opening
    an index does for its own): ``harness cache`` before it reads or clears, tests, benches."""
    for lock in sorted((cache / "history").glob("*/lock")):
        wait_unlocked(lock, limit_s)


def _stamp(st: os.stat_result) -> tuple[int, ...]:
    """What tells a replaced file from the one this run read (a new inode may reuse a freed
    number, and a same-size rewrite may share an mtime tick: the change time moves too)."""
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def open_index(repo: GitRepo, enabled: bool = True) -> HistoryIndex | None:
    """The index of ``repo`` in the cache, or None with ``--no-cache`` (``enabled=False``)."""
    if not enabled:
        return None
    from harness.infra.cache import cache_dir

    return HistoryIndex(repo, cache_dir() / "history")
