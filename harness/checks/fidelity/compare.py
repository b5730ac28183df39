"""Per-file comparison of a pick's change with its source's change (bytes, context stripped)."""

from __future__ import annotations

import functools
import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any, cast

from harness.checks.paths import is_test_path
from harness.git.patch import FilePatch

EMPTY_SHA1 = hashlib.sha1(b"").hexdigest()[:8]  # "da39a3ee": the control every table states
_DOC_PATH = re.compile(
    r"(^|/)(docs?|changelog|changes|news)/|\.(rst|md|txt)$|(^|/)(CHANGELOG|CHANGES|NEWS|AUTHORS)"
    r"[^/]*$",
    re.IGNORECASE,
)
_RELEASE_PATH = re.compile(
    r"(^|/)(pyproject\.toml|setup\.cfg|setup\.py|package\.json|Cargo\.toml|VERSION|"
    r"_?version\.py|release\.py|\.mailmap|CITATION\.cff|pavement\.py)$"
    r"|(^|/)tools/[^/]*release[^/]*$"  # release tooling (numpy's tools/write_release.py)
)

# Pick statuses, most reassuring first.
PICK_STATUSES = (
    "identical",
    "whitespace-only",
    "superset",
    "subset",
    "adapted",
    "no-source",
    "forward-merged",
)
FILE_STATUSES = (
    "identical",
    "context-only",
    "whitespace-only",
    "adapted",
    "extra-in-pick",
    "missing-from-pick",
    "renamed",
    "binary",
)


def checksum(lines: Iterable[bytes]) -> str:
    """First 8 hex of sha1 over the lines, each followed by "\\n" (empty input → da39a3ee)."""
    got = list(lines)
    return hashlib.sha1(b"\n".join(got) + b"\n" if got else b"").hexdigest()[:8]


def norm(line: bytes) -> bytes:
    """A line with all whitespace removed (re-indentation and spacing do not count)."""
    return b"".join(line.split())  # bytes.split(): ASCII whitespace, as \s in a bytes regex


def is_doc_path(path: str) -> bool:
    """Documentation: docs/, changelog fragments, .rst/.md/.txt, CHANGELOG/NEWS/AUTHORS files."""
    return bool(_DOC_PATH.search(path))


def is_release_path(path: str) -> bool:
    """What a release commit touches: documentation, version and packaging metadata."""
    return is_doc_path(path) or bool(_RELEASE_PATH.search(path))


def signed_keys(added: Sequence[bytes], removed: Sequence[bytes]) -> Counter[tuple[str, bytes]]:
    """Multiset of (sign, whitespace-free line); blank lines carry no evidence and are dropped."""
    c: Counter[tuple[str, bytes]] = Counter()
    for sign, lines in (("+", added), ("-", removed)):
        # norm() of each line, all in C: this runs over every pick and candidate line.
        c.update(zip(repeat(sign), filter(None, map(b"".join, map(bytes.split, lines)))))
    return c


@dataclass
class Side:
    """One side's change to one file (several source commits on the same file are concatenated)."""

    path: str
    old_path: str | None
    status: str
    added: list[bytes]
    removed: list[bytes]
    body: list[bytes]
    binary: bool
    new_blob: str | None
    joined: bool = False  # several commits' patches of the file, concatenated in history order

    def figures(self) -> dict[str, object]:
        return dict(self._figures)

    @functools.cached_property
    def _figures(self) -> dict[str, object]:  # the table and the JSON both show them
        return {
            "added": len(self.added),
            "removed": len(self.removed),
            "added_sha1": checksum(self.added),
            "removed_sha1": checksum(self.removed),
        }

    def net(self) -> tuple[list[bytes], list[bytes]]:
        """Added and removed lines, a line one joined commit adds and a later one removes (or the
        other way) counted once as neither: several commits' net change."""
        plus, minus = Counter(self.added), Counter(self.removed)
        if not self.joined:
            return self.added, self.removed
        return list((plus - minus).elements()), list((minus - plus).elements())

    def tokens(self) -> Counter[tuple[str, bytes]]:
        if self.binary:
            return Counter({("bin", (self.new_blob or "deleted").encode()): 1})
        keys = signed_keys(*self.net())
        return keys or Counter({("file", self.status.encode()): 1})


def side_of(fps: Sequence[FilePatch]) -> Side:
    """Merge one or more patches of the same file (in history order) into one side. A side of one
    patch holds the patch's own lists (neither is changed after parsing: no copy is made)."""
    return side_of_lines(fps, body=True)


def side_of_lines(fps: Sequence[FilePatch], body: bool = False) -> Side:
    """``side_of``; without ``body``, the side's body is counted (``LinesNotKept``), not listed."""
    first, last = fps[0], fps[-1]
    if len(fps) == 1:
        added, removed = first.added, first.removed
    else:
        added = [ln for f in fps for ln in f.added]
        removed = [ln for f in fps for ln in f.removed]
    if not body:
        lines: list[bytes] = cast(list, LinesNotKept(sum(len(h) for f in fps for h in f.hunks)))
    elif len(fps) == 1:
        lines = first.body
    else:
        lines = [ln for f in fps for ln in f.body]
    return Side(
        path=last.path,
        old_path=first.old_path,
        status=first.status if len(fps) == 1 else "M",
        added=added,
        removed=removed,
        body=lines,
        binary=any(f.binary for f in fps),
        new_blob=last.new_blob,
        joined=len(fps) > 1,
    )


@dataclass
class FileResult:
    """The verdict for one file of a pick."""

    path: str
    status: str
    pick: Side | None
    source: Side | None
    same: bool  # the ± lines (or blob) agree, whatever the status name
    note: str = ""
    only_pick: list[bytes] = field(default_factory=list)  # signed lines, b"+x" / b"-y"
    only_source: list[bytes] = field(default_factory=list)

    @property
    def test_only(self) -> bool:
        return is_test_path(self.path) and (self.source is None or is_test_path(self.source.path))


def _group(files: Sequence[FilePatch]) -> dict[str, list[FilePatch]]:
    out: dict[str, list[FilePatch]] = {}
    for f in files:
        out.setdefault(f.path, []).append(f)
    return out


def _only(a: Side, b: Side) -> list[bytes]:
    """Signed lines of ``a`` that ``b`` lacks (exact bytes, multiset)."""
    rest = Counter([b"+" + x for x in b.added] + [b"-" + x for x in b.removed])
    out = []
    for ln in [b"-" + x for x in a.removed] + [b"+" + x for x in a.added]:
        if rest[ln] > 0:
            rest[ln] -= 1
        else:
            out.append(ln)
    return out


def compare_pair(p: Side, s: Side, renamed: bool = False) -> FileResult:
    """Compare one file's change on both sides."""
    path = p.path
    if p.binary or s.binary:
        same = p.binary == s.binary and p.new_blob == s.new_blob
        return FileResult(path, "binary", p, s, same, "same blob" if same else "blob differs")
    if p.added == s.added and p.removed == s.removed:
        status, same, note = (
            ("identical", True, "")
            if p.body == s.body
            else ("context-only", True, "± identical, surrounding lines differ")
        )
    elif (p.joined or s.joined) and _same_lines(p, s):
        # The union of several commits lists each one's lines in history order, not the file's.
        status, same, note = "identical", True, "the same ± lines, in another order (joined)"
    elif [norm(x) for x in p.added if norm(x)] == [norm(x) for x in s.added if norm(x)] and [
        norm(x) for x in p.removed if norm(x)
    ] == [norm(x) for x in s.removed if norm(x)]:
        status, same, note = "whitespace-only", False, "re-indented or re-spaced"
    else:
        status, same, note = "adapted", False, ""
    res = FileResult(path, status, p, s, same, note)
    if status in ("adapted", "whitespace-only"):
        res.only_pick, res.only_source = _only(p, s), _only(s, p)
    if renamed:
        res.note = f"source path {s.path}" + (
            f"; {res.status}" if res.status != "identical" else ""
        )
        res.status = "renamed"
    return res


def _same_lines(a: Side, b: Side) -> bool:
    """The same added and removed lines as multisets, whatever their order, or the same net
    change (a line one source commit adds and a later one takes back counts as neither)."""
    if Counter(a.added) == Counter(b.added) and Counter(a.removed) == Counter(b.removed):
        return True
    (a_plus, a_minus), (b_plus, b_minus) = a.net(), b.net()
    return Counter(a_plus) == Counter(b_plus) and Counter(a_minus) == Counter(b_minus)


class _FirstLeft:
    """Keys by group, each group in the order added: the first key of a group still in ``left``
    (keys only ever leave), in amortized constant time."""

    def __init__(self, left: dict[str, Side]) -> None:
        self.left = left
        self.keys: dict[object, list[str]] = {}
        self.at: dict[object, int] = {}

    def add(self, group: object, key: str) -> None:
        self.keys.setdefault(group, []).append(key)

    def first(self, group: object) -> str | None:
        keys = self.keys.get(group, [])
        i = self.at.get(group, 0)
        while i < len(keys) and keys[i] not in self.left:
            i += 1
        self.at[group] = i
        return keys[i] if i < len(keys) else None


def compare_files(
    pick_files: Sequence[FilePatch], source_files: Sequence[FilePatch]
) -> list[FileResult]:
    """Pair the pick's files with the source's (same path, then rename, then same content)."""
    picks = {k: side_of(v) for k, v in _group(pick_files).items()}
    sources = {k: side_of(v) for k, v in _group(source_files).items()}
    results: list[FileResult] = []
    for path in sorted(set(picks) & set(sources)):
        results.append(compare_pair(picks[path], sources[path]))
    lone_p = [picks[k] for k in sorted(set(picks) - set(sources))]
    lone_s = {k: sources[k] for k in sorted(set(sources) - set(picks))}
    # The first source file left (in path order) that names one of the pick file's paths, else the
    # first with the same signed lines: looked up, not searched (a pick that moved thousands of
    # files took minutes, quadratic in them).
    by_path = _FirstLeft(lone_s)
    for k, side in lone_s.items():
        for x in {side.path, side.old_path} - {None}:
            by_path.add(x, k)
    by_tokens: _FirstLeft | None = None

    def _take(p: Side) -> Side | None:
        nonlocal by_tokens
        named = [k for x in {p.path, p.old_path} - {None} if (k := by_path.first(x)) is not None]
        if named:
            return lone_s.pop(min(named))
        if by_tokens is None:
            by_tokens = _FirstLeft(lone_s)
            for k, side in lone_s.items():
                by_tokens.add(frozenset(side.tokens().items()), k)
        same = by_tokens.first(frozenset(p.tokens().items()))
        return lone_s.pop(same) if same is not None else None

    for p in lone_p:
        s = _take(p)
        if s is not None:
            results.append(compare_pair(p, s, renamed=True))
        else:
            results.append(
                FileResult(
                    p.path,
                    "extra-in-pick",
                    p,
                    None,
                    False,
                    "not in the source",
                    only_pick=_only(p, Side(p.path, None, "M", [], [], [], False, None)),
                )
            )
    for s in lone_s.values():
        results.append(
            FileResult(
                s.path,
                "missing-from-pick",
                None,
                s,
                False,
                "not in the pick",
                only_source=_only(s, Side(s.path, None, "M", [], [], [], False, None)),
            )
        )
    results.sort(key=lambda r: r.path)
    return results


def _tokens(results: Sequence[FileResult], side: str) -> Counter[tuple[int, str, bytes]]:
    out: Counter[tuple[int, str, bytes]] = Counter()
    for i, r in enumerate(results):
        s = r.pick if side == "pick" else r.source
        if s is not None:
            for (sign, line), n in s.tokens().items():
                out[(i, sign, line)] += n
    return out


def pick_status(results: Sequence[FileResult], has_source: bool) -> str:
    """identical / whitespace-only / superset / subset / adapted / no-source."""
    if not has_source:
        return "no-source"
    if all(r.same for r in results):
        return "identical"
    if all(
        r.same
        or r.status == "whitespace-only"
        or (r.status == "renamed" and "whitespace-only" in r.note)
        for r in results
    ):
        return "whitespace-only"
    tp, ts = _tokens(results, "pick"), _tokens(results, "source")
    if all(tp[k] >= n for k, n in ts.items()):
        return "superset"
    if all(ts[k] >= n for k, n in tp.items()):
        return "subset"
    return "adapted"


def overlap(a: Counter[tuple[str, bytes]], b: Counter[tuple[str, bytes]]) -> float:
    """Shared signed lines over the smaller side (0..1); informative lines (≥ 4 chars) when any."""

    def informative(c: Counter[tuple[str, bytes]]) -> Counter[tuple[str, bytes]]:
        inf = Counter({k: n for k, n in c.items() if len(k[1]) >= 4})
        return inf or c

    a, b = informative(a), informative(b)
    small = min(sum(a.values()), sum(b.values()))
    if not small:
        return 0.0
    return sum((a & b).values()) / small


def dice(a: Counter[tuple[str, bytes]], b: Counter[tuple[str, bytes]]) -> float:
    """2·|a∩b| / (|a|+|b|) over multisets (1.0 only when equal)."""
    total = sum(a.values()) + sum(b.values())
    return 2 * sum((a & b).values()) / total if total else 0.0


class LinesNotKept(Sequence[bytes]):
    """Lines of a side whose comparison was kept (``kept_form``): a source's lines, a pick's
    ``body``. Their count alone (``len``); reading a line is a harness bug, raised at once rather
    than answered empty."""

    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: object) -> bytes:  # type: ignore[override]
        raise RuntimeError("lines of a kept comparison were read: they are not kept")


def kept_form(files: Sequence[FileResult], status: str) -> list[object] | None:
    """A pick's comparison as the memo keeps it (JSON): its status and, per file, what the
    check reads of it. The pick's sides are made again from its diff (``from_kept``); a source's
    side keeps its paths, blob and figures, not its lines. None: a side the form cannot hold."""
    rows: list[object] = []
    for f in files:
        s = f.source
        source: list[object] | None = None
        if s is not None:
            fig = s.figures()
            source = [s.path, s.old_path, s.status, s.binary, s.new_blob, s.joined]
            source += [fig["added"], fig["removed"], fig["added_sha1"], fig["removed_sha1"]]
        rows.append(
            [
                f.path,
                f.status,
                f.same,
                f.note,
                [x.decode("latin-1") for x in f.only_pick],
                [x.decode("latin-1") for x in f.only_source],
                f.pick.path if f.pick is not None else None,
                source,
            ]
        )
    return [status, rows]


def from_kept(value: list[Any], pick_files: Sequence[FilePatch]) -> tuple[list[FileResult], str]:
    """``kept_form``'s comparison again: the pick's sides from its diff, the sources' from what
    was kept (``LinesNotKept``), and the status. KeyError where the pick's diff has no file the
    form names (then it is compared again)."""
    status, rows = value
    # (a side's body is read by a comparison alone: counted here, not listed)
    picks = {k: side_of_lines(v) for k, v in _group(pick_files).items()}
    out = []
    for path, st, same, note, only_pick, only_source, pick_path, source in rows:
        side = None
        if source is not None:
            sp, old, sst, binary, blob, joined, n_add, n_rem, add_sha, rem_sha = source
            side = Side(
                sp, old, sst, cast(list, LinesNotKept(n_add)), cast(list, LinesNotKept(n_rem)),
                cast(list, LinesNotKept(0)), binary, blob, joined,
            )  # fmt: skip
            side.__dict__["_figures"] = {
                "added": n_add, "removed": n_rem, "added_sha1": add_sha, "removed_sha1": rem_sha,
            }  # fmt: skip
        out.append(
            FileResult(
                path,
                st,
                picks[pick_path] if pick_path is not None else None,
                side,
                same,
                note,
                [x.encode("latin-1") for x in only_pick],
                [x.encode("latin-1") for x in only_source],
            )
        )
    return out, status


def valid_kept(value: Any) -> bool:
    """Whether ``value`` has ``kept_form``'s shape (a memo read back is checked before use)."""
    if not (isinstance(value, list) and len(value) == 2 and value[0] in PICK_STATUSES):
        return False
    rows = value[1]
    return isinstance(rows, list) and all(_valid_row(r) for r in rows)


def _valid_row(r: Any) -> bool:
    if not (isinstance(r, list) and len(r) == 8):
        return False
    path, st, same, note, only_pick, only_source, pick_path, source = r
    texts = [path, st, note]
    if not (
        all(type(x) is str for x in texts)
        and type(same) is bool
        and isinstance(only_pick, list)
        and isinstance(only_source, list)
        and all(type(x) is str for x in (*only_pick, *only_source))
        and (pick_path is None or type(pick_path) is str)
    ):
        return False
    if source is None:
        return True
    return (
        isinstance(source, list)
        and len(source) == 10
        and type(source[0]) is str
        and (source[1] is None or type(source[1]) is str)
        and type(source[2]) is str
        and type(source[3]) is bool
        and (source[4] is None or type(source[4]) is str)
        and type(source[5]) is bool
        and type(source[6]) is int
        and type(source[7]) is int
        and source[6] >= 0
        and source[7] >= 0
        and type(source[8]) is str
        and type(source[9]) is str
    )
