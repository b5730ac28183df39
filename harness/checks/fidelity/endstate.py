"""End state: each file a pick touches, at HEAD, against the same file right after the source.

The two blobs are diffed in order (a moved line is a difference: an increment above a read is not
the same code as below it). Each differing line is classed as pre-existing (the same ordered
difference already separated the fork point from the source's parent, or it lies outside the lines
the source wrote and no other pick changed it), other picks (a line another pick of the range adds
or removes in that file) or introduced (the rest, inside what the source wrote); the lines are kept
so a row that is not "same" always shows what differs.
"""

from __future__ import annotations

import bisect
import difflib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.checks.fidelity.compare import FileResult
from harness.checks.fidelity.memo import NO_MEMO, Memo
from harness.git import GitRepo
from harness.git.patch import FilePatch, Patch
from harness.git.picks import objects
from harness.infra.background import Background
from harness.infra.futures import Future, ThreadPoolExecutor
from harness.report.safe import line_shown

if TYPE_CHECKING:
    from harness.infra.offload import Worker

SHOWN_LINES = 20  # differing lines kept per file (the counts cover all of them)
AHEAD_PATHS = 4096  # HEAD ids asked ahead at most (past it, each row's paths as they come)


@dataclass
class EndState:
    """Whether a pick's change to one file still holds at HEAD, and its lines by class."""

    path: str
    # same, pre-existing, other-picks, introduced, binary-differs (binary, or over the size limit
    # on one side), newline-differs
    status: str
    pre_existing: int = 0
    other_picks: int = 0
    introduced: int = 0
    head_blob: str | None = None
    source_blob: str | None = None
    lines: list[tuple[str, str]] = field(
        default_factory=list
    )  # (class, signed line), in file order

    def as_dict(self) -> dict[str, object]:
        # Spelled out: dataclasses.asdict deep-copies every line pair.
        return {
            "path": self.path,
            "status": self.status,
            "pre_existing": self.pre_existing,
            "other_picks": self.other_picks,
            "introduced": self.introduced,
            "head_blob": self.head_blob,
            "source_blob": self.source_blob,
            "lines": list(self.lines),
        }


def _lines(data: bytes | None) -> list[bytes]:
    if not data:
        return []
    out = data.split(b"\n")
    return out[:-1] if out[-1] == b"" else out


def _binary(data: bytes | None) -> bool:
    return data is not None and b"\0" in data[:8000]


def ordered_diff(old: Sequence[bytes], new: Sequence[bytes]) -> list[bytes]:
    """Signed lines (b"-x" in ``old`` only, b"+y" in ``new`` only) of an ordered line diff."""
    return [line for line, _ in diff_at(old, new)]


def diff_at(old: Sequence[bytes], new: Sequence[bytes]) -> list[tuple[bytes, int]]:
    """Signed lines of an ordered line diff, each with its place in ``old`` (a removed line's index;
    the index an added line goes before).

    Patience-style: lines unique to both sides anchor the match (longest increasing run), the gaps
    between anchors are diffed exactly when small; a long file costs about n·log n, not n·m.
    """
    out: list[tuple[bytes, int]] = []
    _diff(list(old), list(new), 0, out)
    return out


_EXACT = 40_000  # below this many line pairs a gap is diffed exactly (difflib)


def _diff(a: list[bytes], b: list[bytes], at: int, out: list[tuple[bytes, int]]) -> None:
    lo = _shared(a, b, min(len(a), len(b)), at_end=False)
    hi = _shared(a, b, min(len(a), len(b)) - lo, at_end=True)
    a, b, at = a[lo : len(a) - hi], b[lo : len(b) - hi], at + lo
    if not a or not b:
        _emit(a, b, at, out)
        return
    if len(a) * len(b) <= _EXACT:
        _exact(a, b, at, out)
        return
    anchors = _anchors(a, b)
    if not anchors:
        _exact(a, b, at, out, approximate=True)
        return
    i = j = 0
    for ai, bj in anchors:
        # Most gaps between anchors hold the same repeated lines on both sides (blank lines,
        # closing brackets): compared in place, without a recursive call and its slices.
        if (ai > i or bj > j) and not (ai - i == bj - j and a[i:ai] == b[j:bj]):
            _diff(a[i:ai], b[j:bj], at + i, out)
        i, j = ai + 1, bj + 1
    _diff(a[i:], b[j:], at + i, out)


def _shared(a: list[bytes], b: list[bytes], n: int, *, at_end: bool) -> int:
    """How many of their first (or last) ``n`` lines ``a`` and ``b`` share. Galloping slice
    comparisons: lines are compared in C, so a long equal run costs a few calls, not a Python
    step per line."""
    la, lb = len(a), len(b)

    def same(lo: int, hi: int) -> bool:  # lines lo..hi counted from the start (or the end)
        return a[la - hi : la - lo] == b[lb - hi : lb - lo] if at_end else a[lo:hi] == b[lo:hi]

    lo, step = 0, 1  # the first lo lines are shared
    while lo < n:
        hi = min(n, lo + step)
        if same(lo, hi):
            lo, step = hi, step * 2
            continue
        while hi - lo > 1:  # the first difference lies in [lo, hi)
            mid = (lo + hi) // 2
            if same(lo, mid):
                lo = mid
            else:
                hi = mid
        break
    return lo


def _emit(a: Sequence[bytes], b: Sequence[bytes], at: int, out: list[tuple[bytes, int]]) -> None:
    out += [(b"-" + x, at + k) for k, x in enumerate(a)] + [(b"+" + x, at + len(a)) for x in b]


def _exact(
    a: list[bytes], b: list[bytes], at: int, out: list[tuple[bytes, int]], approximate: bool = False
) -> None:
    if not approximate and _in_order(a, b, at, out):
        return
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
        None, a, b, autojunk=approximate
    ).get_opcodes():
        if tag != "equal":
            _emit(a[i1:i2], b[j1:j2], at + i1, out)


def _in_order(a: list[bytes], b: list[bytes], at: int, out: list[tuple[bytes, int]]) -> bool:
    """The exact diff without difflib when no line repeats on either side and the lines both sides
    hold are in the same order (generated and config-like files): difflib then matches every
    common line, so the gaps between them are its opcodes. False (nothing written) otherwise."""
    where = dict(zip(b, range(len(b)), strict=True))
    if len(where) != len(b) or len(set(a)) != len(a):
        return False
    pairs = [(i, where[x]) for i, x in enumerate(a) if x in where]
    js = [j for _, j in pairs]
    if js != sorted(js):
        return False
    i = j = 0
    for ai, bj in pairs:
        if ai > i or bj > j:
            _emit(a[i:ai], b[j:bj], at + i, out)
        i, j = ai + 1, bj + 1
    if i < len(a) or j < len(b):
        _emit(a[i:], b[j:], at + i, out)
    return True


def _touched(diff: Sequence[tuple[bytes, int]], new_len: int, old_len: int) -> set[int]:
    """Indices of the new side that a change wrote or borders (``diff`` = diff_at(old, new)).

    Walks only the places the diff names (not every line of the file): before old line ``k`` the
    new side has advanced by ``k`` minus the removals and plus the additions before it."""
    added: Counter[int] = Counter(pos for line, pos in diff if line[:1] == b"+")
    removed = {pos for line, pos in diff if line[:1] == b"-"}
    out: set[int] = set()
    gone = grown = 0  # removals and additions before the current old line
    for k in sorted(set(added) | removed):
        if k > old_len:
            break
        new_i = k - gone + grown
        out.update(range(new_i, new_i + added[k]))
        new_i += added[k]
        grown += added[k]
        if k == old_len:
            break
        if k in removed:  # a removal borders the new lines before and after it
            out.update((new_i - 1, new_i))
            gone += 1
    return {i for i in out if 0 <= i < new_len}


def _anchors(a: list[bytes], b: list[bytes]) -> list[tuple[int, int]]:
    """Positions of lines that occur once on each side, longest run increasing on both sides."""
    ca, cb = Counter(a), Counter(b)
    # Built in C; only a line once on both sides reads it, and there it is the line's one place.
    where_b = dict(zip(b, range(len(b)), strict=True))
    in_b = cb.get
    pairs = [(i, where_b[x]) for i, x in enumerate(a) if in_b(x) == 1 and ca[x] == 1]
    ordered = [bj for _, bj in pairs]
    if ordered == sorted(ordered):  # in the same order on both sides (the usual case): all of them
        return pairs
    tails: list[int] = []  # patience sorting on the b positions
    tail_at: list[int] = []
    prev: list[int] = []
    for k, (_, bj) in enumerate(pairs):
        pos = bisect.bisect_left(tails, bj)
        if pos == len(tails):
            tails.append(bj)
            tail_at.append(k)
        else:
            tails[pos], tail_at[pos] = bj, k
        prev.append(tail_at[pos - 1] if pos else -1)
    run: list[tuple[int, int]] = []
    k = tail_at[-1] if tail_at else -1
    while k >= 0:
        run.append(pairs[k])
        k = prev[k]
    return run[::-1]


class _MadeBy:
    """Which picks left which blob at which path: a file compared by blob id (binary, or over the
    size limit) whose HEAD blob another pick of the range wrote differs because of other picks.
    Asked only when such a row comes up (one ``cat-file --batch-check``)."""

    def __init__(self, repo: GitRepo, lines_by_pick: dict[str, dict[str, Counter[bytes]]]) -> None:
        self.repo, self.lines_by_pick = repo, lines_by_pick
        self.by: dict[tuple[str, str], set[str]] | None = None  # (path, blob) -> picks

    def other(self, pick: str, paths: tuple[str, str], blob: str | None) -> str | None:
        """The status "other-picks" when a pick other than ``pick`` left ``blob`` at one of
        ``paths``; else None."""
        if self.by is None:
            asked = [(q, path) for q, per in self.lines_by_pick.items() for path in per]
            self.by = {}
            for (q, path), got in zip(
                asked, objects(self.repo, [f"{q}:{p}" for q, p in asked]), strict=True
            ):
                if got:
                    self.by.setdefault((path, got[0]), set()).add(q)
        makers = set().union(*(self.by.get((p, blob or ""), set()) for p in paths))
        return "other-picks" if makers - {pick} else None


def pick_lines(
    patches: dict[str, list], paths: set[str] | None = None
) -> dict[str, dict[str, Counter[bytes]]]:
    """Per pick, per path (of ``paths``, where given): the signed lines it changes (b"+x"/b"-y")."""
    out: dict[str, dict[str, Counter[bytes]]] = {}
    for pick, files in patches.items():
        per: dict[str, Counter[bytes]] = {}
        for f in files:
            if paths is not None and f.path not in paths:
                continue
            c = per.setdefault(f.path, Counter())
            c.update(map(b"+".__add__, f.added))
            c.update(map(b"-".__add__, f.removed))
        out[pick] = per
    return out


Row = tuple[str, list[tuple[str, str, str, str]], list[str]]  # pick, file_paths, sources


def file_paths(results: Sequence[FileResult]) -> list[tuple[str, str, str, str]]:
    """Per file of a pick: its path, the source's path after and before the source, and the
    path before the pick: all ``end_states`` reads of a file result."""
    out = []
    for r in results:
        side = r.pick or r.source
        assert side is not None
        hp = side.path
        sp = r.source.path if r.source else hp
        pp = (r.source.old_path or sp) if r.source else hp
        bp = (r.pick.old_path or hp) if r.pick else hp
        out.append((hp, sp, pp, bp))
    return out


def _at_head(path: str, renamed: dict[str, str]) -> str:
    """Where HEAD holds ``path``: followed through the moves of later picks (a cycle stops)."""
    at_head, seen = path, {path}
    while at_head in renamed and renamed[at_head] not in seen:
        at_head = renamed[at_head]
        seen.add(at_head)
    return at_head


def end_states(
    repo: GitRepo,
    fork: str,
    head: str,
    items: Sequence[Row],
    lines_by_pick: dict[str, dict[str, Counter[bytes]]],
    renamed: dict[str, str] | None = None,
) -> dict[str, list[EndState]]:
    """``items``: (pick, ``file_paths`` of its file results, sources in history order); picks
    without source are skipped.

    ``fork`` is where the range starts on the pick's own line (the merge base when BASE is the
    source tip), so both ways of naming the range give the same verdicts. ``renamed``: paths a
    later pick of the range moved (old → new); HEAD's file is read at the new path.
    """
    renamed = renamed or {}
    plan = _plan(items, fork, head, renamed)
    info = objects(repo, [s for _, _, specs in plan for s in specs])
    ids = [x[0] if x else None for x in info]
    # A file over the size limit is binary to git's diffs too: its row compares blob ids only.
    big = {x[0] for x in info if x and x[1] > repo.big_file}
    quads = [ids[i * 4 : i * 4 + 4] for i in range(len(plan))]
    read_rows = [q for q in quads if q[0] != q[1] and big.isdisjoint(q)]
    # Blobs stream in the order rows first need them: a row is diffed while git reads the next.
    need = list(dict.fromkeys(x for q in read_rows for x in q if x))
    arriving = zip(need, repo.iter_blobs(need), strict=True)
    blobs: dict[str, bytes] = {}
    read: set[str] = set()

    def fetch(*oids: str | None) -> None:
        for oid in oids:
            while oid and oid not in read:
                got, data = next(arriving)
                read.add(got)
                if data is not None:
                    blobs[got] = data

    # A blob's lines are split once and kept only while a later row still reads them.
    uses = Counter(x for q in read_rows for x in q)
    split: dict[str | None, list[bytes]] = {}

    def lines_of(oid: str | None) -> list[bytes]:
        uses[oid] -= 1
        got = split.pop(oid) if oid in split else _lines(blobs.get(oid) if oid else None)
        if uses[oid] > 0:
            split[oid] = got
        return got

    totals: dict[str, Counter[bytes]] = {}
    for per in lines_by_pick.values():
        for path, c in per.items():
            totals.setdefault(path, Counter()).update(c)
    pre_cache: dict[tuple[str | None, str | None], Counter[bytes]] = {}
    made_by = _MadeBy(repo, lines_by_pick)
    out: dict[str, list[EndState]] = {}
    for (pick, path, specs), (h, a, par, b) in zip(plan, quads, strict=True):
        st = EndState(path, "same", head_blob=h, source_blob=a)
        out.setdefault(pick, []).append(st)
        if h == a:
            continue
        at_head = specs[0].split(":", 1)[1]  # HEAD's path for it (a later pick may move it)
        if not big.isdisjoint((h, a, par, b)):
            st.status = made_by.other(pick, (path, at_head), h) or "binary-differs"
            continue
        fetch(h, a, par, b)
        hb, ab = blobs.get(h) if h else None, blobs.get(a) if a else None
        if _binary(hb) or _binary(ab):
            st.status = made_by.other(pick, (path, at_head), h) or "binary-differs"
            continue
        _classify(
            st, pick, path, at_head, (h, a, par, b), lines_of, lines_by_pick, totals, pre_cache
        )
    for _ in arriving:  # every blob was read: this lets cat-file finish and checks its exit
        pass
    return out


def _plan(
    items: Sequence[Row], fork: str, head: str, renamed: dict[str, str]
) -> list[tuple[str, str, list[str]]]:
    """Per pick with sources, per file: the four blobs a row compares (HEAD, after the source,
    the source's parent, the fork point), as ``rev:path`` specs."""
    plan: list[tuple[str, str, list[str]]] = []
    for pick, files, sources in items:
        if not sources:
            continue
        for hp, sp, pp, bp in files:
            at_head = _at_head(hp, renamed)
            plan.append(
                (
                    pick,
                    hp,
                    [
                        f"{head}:{at_head}",
                        f"{sources[-1]}:{sp}",
                        f"{sources[0]}^:{pp}",
                        f"{fork}:{bp}",
                    ],
                )
            )
    return plan


def _classify(
    st: EndState,
    pick: str,
    path: str,
    at_head: str,
    quad: Sequence[str | None],
    lines_of: Callable[[str | None], list[bytes]],
    lines_by_pick: dict[str, dict[str, Counter[bytes]]],
    totals: dict[str, Counter[bytes]],
    pre_cache: dict[tuple[str | None, str | None], Counter[bytes]],
) -> None:
    """Each line by which HEAD's file differs from the source's: pre-existing (the fork point
    already differed, or outside what the source wrote), another pick's, or introduced."""
    h, a, par, b = quad
    after_l, parent_l = lines_of(a), lines_of(par)
    pre: Counter[bytes] | None = (
        None  # what separated the fork point from the source's parent (lazily)
    )
    # Where the source wrote: differences elsewhere come from the fork point or from other picks.
    wrote = _touched(diff_at(parent_l, after_l), len(after_l), len(parent_l)) if after_l else None
    mine = lines_by_pick.get(pick, {})
    others = (totals.get(path, Counter()) - mine.get(path, Counter())) + (
        totals.get(at_head, Counter()) - mine.get(at_head, Counter())
        if at_head != path
        else Counter()
    )
    for line, pos in diff_at(after_l, lines_of(h)):
        inside = wrote is None or pos in wrote or (line[:1] == b"+" and pos - 1 in wrote)
        if inside and pre is None:
            if (par, b) not in pre_cache:
                pre_cache[(par, b)] = Counter(ordered_diff(parent_l, lines_of(b)))
            pre = pre_cache[(par, b)].copy()
        if (not inside and not others[line]) or (inside and pre is not None and pre[line] > 0):
            if pre is not None:
                pre[line] -= 1
            st.pre_existing += 1
            cls = "pre-existing"
        elif others[line] > 0:
            others[line] -= 1
            st.other_picks += 1
            cls = "other-picks"
        else:
            st.introduced += 1
            cls = "introduced"
        if len(st.lines) < SHOWN_LINES:
            st.lines.append((cls, line_shown(line)))
    st.status = (
        "introduced"
        if st.introduced
        else "other-picks"
        if st.other_picks
        else "pre-existing"
        if st.pre_existing
        else "newline-differs"
    )


# One thread: the jobs of a run follow each other (they would only contend for the GIL).
_JOBS = ThreadPoolExecutor(max_workers=1, thread_name_prefix="harness-endstate")


class EndStateJobs:
    """End states computed in a thread, or in a worker interpreter, as picks get their sources,
    while the remaining picks are still being resolved. Rows are independent of each
    other, so the union of the jobs' answers is the answer of one call over all rows. A pick whose
    files or sources are not, at the end, what its job was given is computed again.

    With a ``memo``, a pick whose every row is kept is not computed: a row is a function of its
    four blobs (HEAD's is looked up, the others are named by commit and path), the lines the other
    picks change at its paths, named by those picks (``_row_key``)."""

    def __init__(
        self,
        repo: GitRepo,
        fork: str,
        head: str,
        worker: Worker | None = None,
        memo: Memo = NO_MEMO,
        spawn: Callable[[], Worker | None] | None = None,
        offload_at: int = 16,
    ) -> None:
        self.repo, self.fork, self.head = repo, fork, head
        self.worker = worker  # a second interpreter running ``end_states`` (else the thread)
        self.memo = memo
        # Starts a worker (or says None) once ``offload_at`` picks' rows are to be computed.
        self.spawn, self.offload_at = spawn, offload_at
        self.computed = 0
        self.sent: dict[str, Row] = {}
        self.jobs: list[Future[dict[str, list[EndState]]]] = []
        self._patches: dict[str, list[FilePatch]] | None = None  # every pick's, once given
        self._lines: dict[str, dict[str, Counter[bytes]]] | None = None
        self._counted: set[str] = set()  # the paths whose lines ``_lines`` holds
        self.renamed: dict[str, str] = {}
        self.kept: dict[str, list[EndState]] = {}  # picks answered by the memo (their last row)
        self.keys: dict[str, list[str]] = {}  # a computed pick's row keys, to keep its answer
        self._head_blobs: dict[str, str | None] = {}
        self._ahead: Background[dict[str, str | None]] | None = None
        self._touching: dict[str, list[str]] = {}  # path → the picks that change it

    @property
    def given(self) -> bool:
        """Whether every pick's diff was given (``picks``)."""
        return self._patches is not None

    def lines(self, wanted: set[str]) -> dict[str, dict[str, Counter[bytes]]]:
        """The lines each pick changes at the ``wanted`` paths, per path: what the rows at those
        paths read (a row reads the picks' lines at its own path and where HEAD holds it). Each
        path's are counted once, when a row there must first be computed: rows kept by the memo
        never need them, nor do the other picks' paths."""
        assert self._patches is not None  # (the picks were given)
        counted = self._lines = self._lines if self._lines is not None else {}
        todo = wanted - self._counted
        if todo:
            for pick, per in pick_lines(self._patches, todo).items():
                counted.setdefault(pick, {}).update(per)
            self._counted |= todo
        return {
            pick: {p: c for p, c in counted.get(pick, {}).items() if p in wanted}
            for pick in self._patches
        }

    def picks(self, patches: dict[str, list[FilePatch]]) -> None:
        """Every pick's full diff (before any ``add``): the lines each pick changes and the paths
        later picks moved."""
        self._patches, self._lines, self._counted = patches, None, set()
        self._touching.clear()
        self.renamed = {
            f.old_path: f.path
            for files in patches.values()
            for f in files
            if f.status == "R" and f.old_path
        }

    def ahead(self, early: Future[list[Patch]]) -> None:
        """HEAD's ids of the paths the likely picks change (``read_early``'s diffs), asked in a
        thread of their own once those diffs are read: the memo's row keys need them, and git
        answers them on another core while this one reads the history (~50 µs a path)."""
        if self.memo and self._ahead is None:
            self._ahead = Background(self._head_ids, early)

    def _head_ids(self, early: Future[list[Patch]]) -> dict[str, str | None]:
        patches = early.result()
        moved = {
            f.old_path: f.path for p in patches for f in p.files if f.status == "R" and f.old_path
        }
        paths = sorted({_at_head(f.path, moved) for p in patches for f in p.files})
        if len(paths) > AHEAD_PATHS:
            return {}
        found = objects(self.repo, [f"{self.head}:{x}" for x in paths])
        return {x: b[0] if b else None for x, b in zip(paths, found, strict=True)}

    def add(self, rows: Sequence[Row]) -> None:
        """Start the end states of these picks (the ones not started yet)."""
        new = [r for r in rows if r[0] not in self.sent and r[2]]
        if not new or self._patches is None:
            return
        self.sent.update((r[0], r) for r in new)
        new = self._recall(new)
        if not new:
            return
        self.computed += len(new)
        if self.worker is None and self.spawn is not None and self.computed >= self.offload_at:
            self.worker = self.spawn()
        # A row reads the picks' lines at its own path and where HEAD holds it, no others: a job
        # is given those (a worker is not sent, for every job, a pick vendoring thousands of files).
        wanted = {x for r in new for f in r[1] for x in (f[0], _at_head(f[0], self.renamed))}
        args = (self.repo, self.fork, self.head, new, self.lines(wanted), self.renamed)
        if self.worker is None:
            self.jobs.append(_JOBS.submit(end_states, *args))
        else:
            self.jobs.append(self.worker.submit(*args))

    def _recall(self, rows: Sequence[Row]) -> list[Row]:
        """The rows the memo does not answer (the others' answers are kept in ``kept``)."""
        for r in rows:
            self.kept.pop(r[0], None)
            self.keys.pop(r[0], None)
        if not self.memo:
            return list(rows)
        if self._ahead is not None:  # (facts about HEAD, whichever renames chose the paths)
            self._head_blobs.update(self._ahead.result())
            self._ahead = None
        at_head = {_at_head(f[0], self.renamed) for r in rows for f in r[1]}
        todo = sorted(x for x in at_head if x not in self._head_blobs)
        for path, blob in zip(
            todo, objects(self.repo, [f"{self.head}:{x}" for x in todo]), strict=True
        ):
            self._head_blobs[path] = blob[0] if blob else None
        out: list[Row] = []
        for r in rows:
            keys = [self._row_key(r, f) for f in r[1]]
            got = [self.memo.get("end-state", [k], _valid_row) for k in keys]
            if all(g is not None for g in got):
                self.kept[r[0]] = [_row_of(g) for g in got if g is not None]
            else:
                self.keys[r[0]] = keys
                out.append(r)
        return out

    def _row_key(self, row: Row, f: tuple[str, str, str, str]) -> str:
        """What one row of ``end_states`` reads, as text (``_plan`` and ``_classify``)."""
        pick, _, sources = row
        hp, sp, pp, bp = f
        at_head = _at_head(hp, self.renamed)
        others = [q for p in dict.fromkeys((hp, at_head)) for q in self._at(p) if q != pick]
        return "\0".join(
            [
                hp, at_head, self._head_blobs.get(at_head) or "", f"{sources[-1]}:{sp}",
                f"{sources[0]}^:{pp}", f"{self.fork}:{bp}", str(self.repo.big_file), *others,
            ]
        )  # fmt: skip

    def _at(self, path: str) -> list[str]:
        """The picks that change ``path``. The lines a pick changes there are a function of the
        pick commit itself (its diff against its parent): its id stands for them."""
        if not self._touching and self._patches:  # first use: who changes which path
            for q in sorted(self._patches):
                for p in dict.fromkeys(f.path for f in self._patches[q]):
                    self._touching.setdefault(p, []).append(q)
        return self._touching.get(path, [])

    def finish(self, rows: Sequence[Row], patches: dict[str, list[FilePatch]]) -> None:
        """Every pick's final row: the ones not started yet, or started with another row, start."""
        if self._patches is None:
            self.picks(patches)
        for r in rows:
            if self.sent.get(r[0], r) != r:
                del self.sent[r[0]]
        self.add(rows)
        final = {r[0] for r in rows if r[2]}
        self.sent = {k: v for k, v in self.sent.items() if k in final}

    def result(self) -> dict[str, list[EndState]]:
        """The end states of every pick ``finish`` was given."""
        out: dict[str, list[EndState]] = {}
        for job in self.jobs:  # in start order: a pick started again is answered by its last job
            out.update(job.result())
        out.update(self.kept)  # a pick answered by the memo was not started again since
        for pick, keys in self.keys.items():
            got = out.get(pick)
            if pick in self.sent and got is not None and len(got) == len(keys):
                for k, st in zip(keys, got, strict=True):
                    self.memo.put("end-state", [k], _row_value(st))
        return {k: v for k, v in out.items() if k in self.sent}


def _row_value(st: EndState) -> list[object]:
    return [
        st.path, st.status, st.pre_existing, st.other_picks, st.introduced, st.head_blob,
        st.source_blob, [list(x) for x in st.lines],
    ]  # fmt: skip


def _row_of(v: list[Any]) -> EndState:
    """A row as ``_row_value`` kept it (``_valid_row`` checked its shape)."""
    path, status, pre, other, intro, hb, sb, lines = v
    return EndState(path, status, pre, other, intro, hb, sb, [(c, x) for c, x in lines])


def _valid_row(v: object) -> bool:
    return (
        isinstance(v, list)
        and len(v) == 8
        and isinstance(v[0], str)
        and isinstance(v[1], str)
        and all(type(x) is int for x in v[2:5])
        and all(x is None or isinstance(x, str) for x in v[5:7])
        and isinstance(v[7], list)
        and all(
            isinstance(x, list) and len(x) == 2 and all(isinstance(y, str) for y in x) for x in v[7]
        )
    )


class NoEndStates(EndStateJobs):
    """End states switched off: for callers that need each pick's sources and status alone (the
    backports matrix), so the source finding reads no blob and starts no job."""

    def picks(self, patches: dict[str, list[FilePatch]]) -> None:
        self._patches = {}

    def add(self, rows: Sequence[Row]) -> None:
        return None

    def finish(self, rows: Sequence[Row], patches: dict[str, list[FilePatch]]) -> None:
        return None
