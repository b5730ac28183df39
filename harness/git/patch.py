"""Unified diffs from one batched ``git diff-tree --stdin`` process, parsed into file patches."""

from __future__ import annotations

import functools
import os
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field

from harness.git.capture import capture_file, read_file
from harness.git.repo import EMPTY_TREE, GitError, GitRepo
from harness.infra.futures import ThreadPoolExecutor

_HEADER = b"\x00@@harness@@ "


@dataclass
class FilePatch:
    """One file's change: paths, blobs and the ± lines (bytes, prefix stripped). ``added``,
    ``removed`` and ``body`` are computed once, after parsing (hunks are not changed later)."""

    old_path: str | None
    new_path: str | None
    status: str = "M"  # A, D, M, R (rename), C (copy)
    similarity: int | None = None
    old_blob: str | None = None
    new_blob: str | None = None
    binary: bool = False
    hunks: list[list[bytes]] = field(default_factory=list)  # raw hunk bodies, prefix char kept
    new_starts: list[int] = field(default_factory=list)  # each hunk's first line in the new file

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or ""

    @functools.cached_property
    def added(self) -> list[bytes]:
        return [ln[1:] for h in self.hunks for ln in h if ln[:1] == b"+"]

    @functools.cached_property
    def removed(self) -> list[bytes]:
        return [ln[1:] for h in self.hunks for ln in h if ln[:1] == b"-"]

    @functools.cached_property
    def body(self) -> list[bytes]:
        """Every hunk line (context included), hunk headers' line numbers dropped."""
        return [ln for h in self.hunks for ln in h]


@dataclass
class Patch:
    """The change one input line asked for: ``commit`` against ``against`` (or its parent)."""

    commit: str
    against: str | None
    files: list[FilePatch]

    def file(self, path: str) -> FilePatch | None:
        return next((f for f in self.files if f.path == path), None)


def diff_many(
    repo: GitRepo,
    pairs: Sequence[tuple[str, str | None]],
    *,
    renames: bool = True,
    paths: Sequence[str] = (),
    context: bool = True,
) -> list[Patch]:
    """Diff each ``(commit, against)`` in one process; ``against=None`` means the first parent.

    ``against`` may be any tree-ish; root commits diff against the empty tree. ``context=False``
    asks for ``-U0``: the same ± lines without context, about a quarter less for git to write and
    for us to parse (enough for patch ids and signed lines).
    """
    chunks = diff_chunks(repo, pairs, renames=renames, paths=paths, context=context)
    return [Patch(c, a, parse_files(chunk)) for (c, a), chunk in zip(pairs, chunks, strict=True)]


def diff_chunks(
    repo: GitRepo,
    pairs: Sequence[tuple[str, str | None]],
    *,
    renames: bool = True,
    paths: Sequence[str] = (),
    context: bool = True,
) -> list[bytes]:
    """``diff_many``'s raw output, one chunk of ``diff-tree`` text per pair, unparsed (what the
    history index keeps: ``parse_files`` reads it back)."""
    if not pairs:
        return []
    lines = []
    for commit, against in pairs:
        lines.append(f"{commit} {against}" if against else commit)
    args = [
        "diff-tree",
        "--stdin",
        "-r",
        "-p",
        "--always",
        "--root",
        "--full-index",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--format=%x00@@harness@@ %H",
    ]
    args.append("-M" if renames else "--no-renames")
    if not context:
        args.append("-U0")
    if paths:
        args += ["--", *paths]
    out = b"".join(_run_split(repo, args, lines))
    chunks = out.split(_HEADER)[1:]
    if len(chunks) != len(pairs):
        raise GitError(args, 0, f"expected {len(pairs)} diffs, got {len(chunks)}")
    return chunks


# Diffing is git's work and parallel: a large batch is split over this many processes (one per
# core, at most 4); a batch under _SPLIT_MIN inputs stays one process, a start costs ~3 ms.
_WORKERS = max(1, min(4, os.cpu_count() or 1))
_SPLIT_MIN = 8


def _run_split(repo: GitRepo, args: list[str], lines: list[str]) -> list[bytes]:
    """Stdout of ``git <args>`` fed ``lines``, in input order, from up to ``_WORKERS`` processes
    each fed a contiguous share."""
    n = _WORKERS if len(lines) >= _SPLIT_MIN else 1
    size = -(-len(lines) // n)
    shares = [lines[i : i + size] for i in range(0, len(lines), size)]
    files: list[int] = []
    procs: list[subprocess.Popen[bytes]] = []

    def feed(k: int) -> tuple[bytes, bytes]:
        _, err = procs[k].communicate("\n".join(shares[k]).encode() + b"\n")
        return read_file(files[k]), err

    pool = ThreadPoolExecutor(len(shares), "harness-diff") if len(shares) > 1 else None
    try:
        for _ in shares:  # each writes to a file, read once it exits (``capture_file``)
            files.append(capture_file())
            procs.append(repo.popen(args, stdout=files[-1]))
        results = list(pool.map(feed, range(len(procs)))) if pool else [feed(0)]
    finally:  # interrupted: stop git first, so the feeding threads return at once
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if pool is not None:
            pool.shutdown()
        for fd in files:
            os.close(fd)
    for proc, (_, err) in zip(procs, results, strict=True):
        if proc.returncode != 0:
            raise GitError(args, proc.returncode, err.decode("utf-8", "replace"))
    return [out for out, _ in results]


def diff_trees(
    repo: GitRepo, old: str, new: str, *, renames: bool = True, paths: Sequence[str] = ()
) -> list[FilePatch]:
    """The change between two tree-ishes (``old`` may be the empty tree)."""
    args = [
        "diff-tree",
        "-r",
        "-p",
        "--full-index",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "-M" if renames else "--no-renames",
        old or EMPTY_TREE,
        new,
        "--",
    ]
    return parse_files(repo.run(args + list(paths)))


_DIFF_GIT = re.compile(rb"^diff --git (.*)$")
_HUNK_NEW = re.compile(rb"^@@+ (?:-\d+(?:,\d+)? )+\+(\d+)")


def _unquote(raw: bytes) -> str:
    """Undo git's C-style path quoting."""
    if raw.startswith(b'"') and raw.endswith(b'"'):
        raw = raw[1:-1]
        out = bytearray()
        i = 0
        esc = {
            b"n": b"\n",
            b"t": b"\t",
            b'"': b'"',
            b"\\": b"\\",
            b"a": b"\a",
            b"b": b"\b",
            b"f": b"\f",
            b"r": b"\r",
            b"v": b"\v",
        }
        while i < len(raw):
            c = raw[i : i + 1]
            if c == b"\\":
                nxt = raw[i + 1 : i + 2]
                if nxt.isdigit():
                    out.append(int(raw[i + 1 : i + 4], 8))
                    i += 4
                    continue
                out += esc.get(nxt, nxt)
                i += 2
                continue
            out += c
            i += 1
        raw = bytes(out)
    return raw.decode("utf-8", "surrogateescape")


def _strip_prefix(p: bytes) -> str | None:
    if p == b"/dev/null":
        return None
    path = _unquote(p)
    return path[2:] if path[:2] in ("a/", "b/") else path


def _paths_from_diff_git(rest: bytes) -> tuple[str, str]:
    if rest.startswith(b'"'):
        m = re.match(rb'^("(?:[^"\\]|\\.)*"|\S+) ("(?:[^"\\]|\\.)*"|\S+)$', rest)
        if m:
            return _strip_prefix(m.group(1)) or "", _strip_prefix(m.group(2)) or ""
    # Unquoted "a/P b/P": both halves are equal when there is no rename.
    half = (len(rest) - 1) // 2
    a, b = rest[:half], rest[half + 1 :]
    if a[2:] == b[2:]:
        return _strip_prefix(a) or "", _strip_prefix(b) or ""
    parts = rest.split(b" b/", 1)
    return _strip_prefix(parts[0]) or "", (_unquote(b"b/" + parts[1])[2:] if len(parts) > 1 else "")


def parse_files(raw: bytes) -> list[FilePatch]:
    """Parse ``diff --git`` sections (anything before the first is ignored)."""
    files: list[FilePatch] = []
    cur: FilePatch | None = None
    in_hunk = False
    hunk: list[bytes] = []
    for line in raw.split(b"\n"):
        if in_hunk:  # most lines: checked first, without a regex
            head = line[:1]
            if head in (b"+", b"-", b" "):
                hunk.append(line)
                continue
            if head == b"\\":
                continue  # "\ No newline at end of file"
            if line == b"":
                continue
            in_hunk = False
        m = _DIFF_GIT.match(line) if line[:5] == b"diff " else None
        if m:
            a, b = _paths_from_diff_git(m.group(1))
            cur = FilePatch(old_path=a, new_path=b)
            files.append(cur)
            in_hunk = False
            continue
        if cur is None:
            continue
        if line.startswith(b"@@"):
            hunk = []
            cur.hunks.append(hunk)
            m = _HUNK_NEW.match(line)
            cur.new_starts.append(int(m.group(1)) if m else 0)
            in_hunk = True
        elif line.startswith(b"new file mode"):
            cur.status, cur.old_path = "A", None
        elif line.startswith(b"deleted file mode"):
            cur.status, cur.new_path = "D", None
        elif line.startswith(b"rename from "):
            cur.status, cur.old_path = "R", _unquote(line[12:])
        elif line.startswith(b"rename to "):
            cur.new_path = _unquote(line[10:])
        elif line.startswith(b"copy from "):
            cur.status, cur.old_path = "C", _unquote(line[10:])
        elif line.startswith(b"copy to "):
            cur.new_path = _unquote(line[8:])
        elif line.startswith(b"similarity index "):
            cur.similarity = int(line[17:].rstrip(b"%") or 0)
        elif line.startswith(b"index "):
            blobs = line[6:].split(b" ")[0].split(b"..")
            if len(blobs) == 2:
                old, new = (
                    x.decode() for x in blobs
                )  # all zeros (40 or 64 hex): no blob on that side
                cur.old_blob = None if old.strip("0") == "" and len(old) in (40, 64) else old
                cur.new_blob = None if new.strip("0") == "" and len(new) in (40, 64) else new
        elif line.startswith(b"Binary files ") or line == b"GIT binary patch":
            cur.binary = True
        elif line.startswith(b"--- ") or line.startswith(b"+++ "):
            pass
    return files
