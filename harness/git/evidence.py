"""Read-only git plumbing for ref evidence: trial merges, grep at refs, pickaxe, tree listings.

Every function takes a :class:`GitRepo` and resolved object ids (never raw user strings), so
nothing a user types reaches git's option parser. Batched: one process per question, not per ref.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import UsageError
from harness.git.records import log_records
from harness.git.repo import GitError, GitRepo
from harness.infra import workarea


# -- trial merge ---------------------------------------------------------------------
@dataclass
class MergeConflict:
    """One conflicting path of a trial merge and git's conflict kinds for it."""

    path: str
    kinds: list[str] = field(default_factory=list)
    stages: list[int] = field(default_factory=list)


@dataclass
class TrialMerge:
    """Outcome of ``git merge-tree --write-tree`` (objects written to a temp dir, then removed)."""

    clean: bool
    tree: str | None
    conflicts: list[MergeConflict]
    messages: list[str]
    error: str = ""  # set when git refused to merge (e.g. unrelated histories)


def _objects_dir(repo: GitRepo) -> Path:
    rel = repo.run_text(["rev-parse", "--git-path", "objects"]).strip()
    p = Path(rel)
    return p if p.is_absolute() else (repo.git_dir / p).resolve()


def trial_merge(repo: GitRepo, ours: str, theirs: str) -> TrialMerge:
    """Merge ``theirs`` into ``ours`` in memory; new objects go to a throwaway object directory."""
    tmp = str(workarea.mkdtemp("harness-merge-objects-"))
    env = {"GIT_OBJECT_DIRECTORY": tmp, "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(_objects_dir(repo))}
    try:
        proc = repo.popen(["merge-tree", "--write-tree", "-z", "--messages", ours, theirs], env=env)
        out, err = proc.communicate(b"")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if proc.returncode not in (0, 1):
        text = err.decode("utf-8", "replace").strip()
        return TrialMerge(
            False, None, [], [], error=text.splitlines()[-1] if text else f"exit {proc.returncode}"
        )
    return _parse_merge_tree(out, clean=proc.returncode == 0)


def _parse_merge_tree(out: bytes, clean: bool) -> TrialMerge:
    parts = out.split(b"\0")
    tree = parts[0].decode()
    i = 1
    conflicts: dict[str, MergeConflict] = {}
    # Conflicted file info: "<mode> <oid> <stage>\t<path>" entries, ended by an empty field.
    while i < len(parts) and parts[i]:
        meta, _, path_b = parts[i].partition(b"\t")
        path = path_b.decode("utf-8", "surrogateescape")
        c = conflicts.setdefault(path, MergeConflict(path))
        try:
            c.stages.append(int(meta.split()[2]))
        except (IndexError, ValueError):
            pass
        i += 1
    i += 1
    messages: list[str] = []
    # Messages: "<n>\0<path1>…<pathn>\0<type>\0<message>\0".
    while i < len(parts) and parts[i]:
        try:
            n = int(parts[i])
        except ValueError:
            break
        paths = [p.decode("utf-8", "surrogateescape") for p in parts[i + 1 : i + 1 + n]]
        kind = parts[i + 1 + n].decode("utf-8", "replace") if i + 1 + n < len(parts) else ""
        msg = parts[i + 2 + n].decode("utf-8", "replace") if i + 2 + n < len(parts) else ""
        messages.append(msg.strip())
        if kind != "Auto-merging":
            for p in paths:
                if p in conflicts and kind not in conflicts[p].kinds:
                    conflicts[p].kinds.append(kind)
        i += 3 + n
    return TrialMerge(clean, tree, sorted(conflicts.values(), key=lambda c: c.path), messages)


# -- grep at refs --------------------------------------------------------------------
@dataclass(frozen=True)
class GrepHit:
    path: str
    line: int
    text: bytes


def _check_needle(needle: str) -> bytes:
    if not needle:
        raise UsageError("the search string is empty")
    if "\n" in needle or "\0" in needle:
        raise UsageError("the search string must be one line (no newline or NUL)")
    return needle.encode("utf-8", "surrogateescape")


def _pathspec(under: str | None) -> list[str]:
    return ["--", f":(literal){under}"] if under else ["--"]


def grep_at(
    repo: GitRepo, needle: str, revs: Sequence[str], under: str | None = None
) -> dict[str, list[GrepHit]]:
    """Fixed-string matches (one per matching line) at each rev, in ONE ``git grep`` over all trees.

    Binary files are skipped (``-I``). Revs must be object ids; the result has a key for each.
    """
    pattern = _check_needle(needle)
    uniq = list(dict.fromkeys(revs))
    result: dict[str, list[GrepHit]] = {r: [] for r in uniq}
    if not uniq:
        return result
    args = [
        "grep",
        "-z",
        "-n",
        "-I",
        "-F",
        "--no-color",
        "--no-textconv",
        "-e",
        pattern.decode("utf-8", "surrogateescape"),
        *uniq,
        *_pathspec(under),
    ]
    out = repo.run(args, check=False)
    pos = 0
    while pos < len(out):
        z1 = out.find(b"\0", pos)
        z2 = out.find(b"\0", z1 + 1)
        nl = out.find(b"\n", z2 + 1)
        if z1 < 0 or z2 < 0:
            break
        if nl < 0:
            nl = len(out)
        rev, _, path = out[pos:z1].partition(b":")
        result.setdefault(rev.decode(), []).append(
            GrepHit(
                path.decode("utf-8", "surrogateescape"), int(out[z1 + 1 : z2]), out[z2 + 1 : nl]
            )
        )
        pos = nl + 1
    return result


def grep_counts(
    repo: GitRepo, needle: str, revs: Sequence[str], under: str | None = None
) -> dict[str, int]:
    """Matching-line count per rev (all revs in one ``git grep -c``)."""
    pattern = _check_needle(needle)
    uniq = list(dict.fromkeys(revs))
    counts = {r: 0 for r in uniq}
    if not uniq:
        return counts
    out = repo.run(
        [
            "grep",
            "-z",
            "-c",
            "-I",
            "-F",
            "--no-textconv",
            "-e",
            pattern.decode("utf-8", "surrogateescape"),
            *uniq,
            *_pathspec(under),
        ],
        check=False,
    )
    pos = 0  # "rev:path\0count\n": a path may hold a newline, never a NUL
    while pos < len(out):
        z = out.find(b"\0", pos)
        nl = out.find(b"\n", z + 1) if z >= 0 else -1
        if nl < 0:
            break
        rev = out[pos:z].partition(b":")[0].decode()
        counts[rev] = counts.get(rev, 0) + int(out[z + 1 : nl])
        pos = nl + 1
    return counts


@dataclass(frozen=True)
class PickaxeCommit:
    sha: str
    parents: tuple[str, ...]
    subject: str


def pickaxe(
    repo: GitRepo, needle: str, base: str, head: str, under: str | None = None
) -> list[PickaxeCommit]:
    """Commits in ``base..head`` that change the number of occurrences of ``needle`` (``log -S``)."""
    pattern = _check_needle(needle)
    rows = log_records(
        repo,
        ("%H", "%P", "%s"),
        ["--reverse", "-S", pattern.decode("utf-8", "surrogateescape")],
        include=[head],
        exclude=[base],
        paths=_pathspec(under)[1:],
    )
    commits = []
    for (sha, parents, subject), _ in rows:
        commits.append(PickaxeCommit(sha, tuple(parents.split()), subject))
    return commits


# -- trees and names -----------------------------------------------------------------
@dataclass(frozen=True)
class TreeEntry:
    mode: str
    type: str
    sha: str
    path: str


def ls_tree(
    repo: GitRepo, rev: str, path: str | None = None, recursive: bool = True
) -> list[TreeEntry]:
    """Entries of ``rev`` (optionally only under ``path``)."""
    args = ["ls-tree", "-z", "--full-tree"]
    if recursive:
        args.append("-r")
    args.append(rev)
    if path:
        args += ["--", f":(literal){path.rstrip('/')}"]
    out = repo.run(args)
    entries = []
    for rec in out.split(b"\0"):
        if not rec:
            continue
        meta, _, p = rec.partition(b"\t")
        mode, typ, sha = meta.decode().split()
        entries.append(TreeEntry(mode, typ, sha, p.decode("utf-8", "surrogateescape")))
    return entries


def name_revs(repo: GitRepo, shas: Sequence[str]) -> dict[str, str | None]:
    """Symbolic names (``main~2``) for many commits in one ``git name-rev`` process."""
    uniq = list(dict.fromkeys(shas))
    if not uniq:
        return {}
    out = repo.run_text(
        ["name-rev", "--name-only", "--annotate-stdin"], input="\n".join(uniq).encode() + b"\n"
    )
    names = out.split("\n")
    result: dict[str, str | None] = {}
    for sha, name in zip(uniq, names, strict=False):
        name = name.strip()
        result[sha] = None if not name or name == sha or name == "undefined" else name
    return result


def changed_paths(repo: GitRepo, old: str, new: str) -> list[tuple[str, str]]:
    """``(status, path)`` between two tree-ishes (no renames)."""
    out = repo.run(["diff-tree", "-r", "-z", "--no-renames", "--name-status", old, new, "--"])
    parts = [p for p in out.split(b"\0")]
    result = []
    for i in range(0, len(parts) - 1, 2):
        if parts[i]:
            result.append((parts[i].decode(), parts[i + 1].decode("utf-8", "surrogateescape")))
    return result


def count_merges(repo: GitRepo, base: str, head: str) -> int:
    """Number of merge commits in ``base..head``."""
    return int(
        repo.run_text(["rev-list", "--count", "--merges", head, f"^{base}", "--"]).strip() or 0
    )


# -- blobs ---------------------------------------------------------------------------
__all__ = [
    "GitError",
    "GrepHit",
    "MergeConflict",
    "PickaxeCommit",
    "TreeEntry",
    "TrialMerge",
    "changed_paths",
    "count_merges",
    "grep_at",
    "grep_counts",
    "ls_tree",
    "name_revs",
    "pickaxe",
    "trial_merge",
]
