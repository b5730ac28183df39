"""Columns: a ref, or a control (a ref plus edits), materialized as a tree the harness owns.

Trees live under a harness-owned root (``<work area>/trees``, see harness/infra/workarea.py),
one directory per content key (tree sha + edits). A ``<key>.lock`` file holds the pid of the run
using it; ``<key>.json`` records the file listing taken right after materializing. A later run reuses
the directory when the listing still matches (nothing wrote into it); directories whose owner died,
that were written into, or that went unused for three days are removed on the next run.
The user's work tree, index and refs are never touched: trees come from ``git archive``.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness.columns.edits import Edit, EditProof, apply_edits
from harness.git.apply import blob_sha
from harness.git.repo import GitRepo
from harness.git.tree import export_tree
from harness.infra import workarea
from harness.infra.removal import remove_tree
from harness.infra.stale_trees import clean_stale, owner_gone, read_pid

# Part of every column's key: trees written by another way of writing them (before: an archive that
# honoured export-ignore) are not this one's, nor are the results measured in them.
TREE_FORMAT = "checkout-1"

IGNORED_DIRS = frozenset({"__pycache__", ".pytest_cache"})


@dataclass
class Column:
    """A column of a probe table: ``ref`` alone (role ref) or ``ref`` + ``edits`` (role control)."""

    name: str
    ref: str
    edits: list[Edit] = field(default_factory=list)
    role: str = "ref"  # "ref" | "control"
    description: str = ""


@dataclass
class Materialized:
    """A column's tree on disk, with the shas that identify it and the edit proofs."""

    path: Path
    tree_sha: str
    commit_sha: str
    proofs: list[EditProof]
    key: str
    reused: bool = False
    listing: dict[str, list[int]] = field(default_factory=dict, repr=False)

    def changes(self) -> list[str]:
        """Paths created, deleted or modified since the tree was materialized (writes into the tree)."""
        return diff_listing(self.listing, listing_of(self.path))


@dataclass(frozen=True)
class ColumnIdentity:
    """What a column is, without materializing it: enough for cache keys."""

    commit_sha: str
    tree_sha: str
    edits: tuple[str, ...]  # canonical JSON per edit, apply-commit resolved to a sha
    key: str


def identify(repo: GitRepo, column: Column) -> ColumnIdentity:
    """Resolve a column's ref and edits to content ids (cheap: no tree is written)."""
    commit = repo.resolve(column.ref)
    tree = repo.resolve(commit, "tree")
    edits = []
    for e in column.edits:
        ident = e.identity()
        if e.kind in ("apply-commit", "checkout"):
            ident["commit"] = repo.resolve(e.commit or "")
        edits.append(json.dumps(ident, sort_keys=True, ensure_ascii=False))
    key = hashlib.sha256(json.dumps([TREE_FORMAT, tree, edits]).encode()).hexdigest()[:24]
    return ColumnIdentity(commit, tree, tuple(edits), key)


def user_blob(repo: GitRepo, commit_sha: str, path: str) -> str | None:
    """Blob id of the user's copy of ``path``: the work tree file, or the blob at the ref when bare."""
    if repo.work_tree is not None:
        p = repo.work_tree / path
        return blob_sha(repo, p.read_bytes()) if p.is_file() else None
    data = repo.blob_at(commit_sha, path)
    return blob_sha(repo, data) if data is not None else None


def default_workroot() -> Path:
    """``<work area>/trees`` (the work area checked private first)."""
    return workarea.trees_root()


# -- listings (write detection) -------------------------------------------------------------


def listing_of(root: Path) -> dict[str, list[int]]:
    """rel path → [size, mtime_ns, mode] for every file and symlink, bytecode caches ignored."""
    out: dict[str, list[int]] = {}
    root = Path(root)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_DIRS)
        for name in filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            out[os.path.relpath(p, root)] = [st.st_size, st.st_mtime_ns, st.st_mode]
    return out


def diff_listing(before: dict[str, list[int]], after: dict[str, list[int]]) -> list[str]:
    return sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))


# -- the harness-owned root --------------------------------------------------------------------

_cleaned: set[str] = set()
_lock = threading.Lock()
_counter = itertools.count()


def _try_lock(lock: Path) -> bool:
    try:
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w") as fh:
        fh.write(str(os.getpid()))
    return True


def _build(repo: GitRepo, column: Column, ident: ColumnIdentity, dest: Path) -> Materialized:
    export_tree(repo, ident.commit_sha, dest)
    proofs = apply_edits(repo, dest, column.edits)
    for p in proofs:
        p.blob_user_before = user_blob(repo, ident.commit_sha, p.path)
    return Materialized(
        dest, ident.tree_sha, ident.commit_sha, proofs, ident.key, False, listing_of(dest)
    )


@contextlib.contextmanager
def materialize(
    repo: GitRepo, column: Column, workroot: Path | None = None
) -> Iterator[Materialized]:
    """A column's tree for the duration of the ``with`` block (reused across runs when unchanged)."""
    root = Path(workroot) if workroot else default_workroot()
    root.mkdir(parents=True, exist_ok=True)
    with _lock:
        if str(root) not in _cleaned:
            _cleaned.add(str(root))
            clean_stale(root)
    ident = identify(repo, column)
    lock = root / f"{ident.key}.lock"
    shared = _try_lock(lock)
    if not shared and read_pid(lock) is not None and owner_gone(lock):
        lock.unlink(missing_ok=True)  # left by a killed run: take it over
        remove_tree(root / ident.key)
        shared = _try_lock(lock)
    mat: Materialized | None = None
    try:
        if shared:
            mat = _reuse(repo, root, ident)
            if mat is None:
                tmp = workarea.run_dir() / f"{ident.key}.tmp-{os.getpid()}-{next(_counter)}"
                try:
                    mat = _build(repo, column, ident, tmp)
                    remove_tree(root / ident.key)
                    os.replace(tmp, root / ident.key)
                finally:
                    remove_tree(tmp)
                mat.path = root / ident.key
                (root / f"{ident.key}.json").write_text(
                    json.dumps(
                        {
                            "commit": mat.commit_sha,
                            "tree": mat.tree_sha,
                            "listing": mat.listing,
                            "proofs": [asdict(p) for p in mat.proofs],
                        },
                        sort_keys=True,
                    )
                )
        else:  # another column or run holds this tree: a private copy, always removed
            private = workarea.run_dir() / f"{ident.key}-p{os.getpid()}-{next(_counter)}"
            try:
                mat = _build(repo, column, ident, private)
            except BaseException:
                remove_tree(private)
                raise
        yield mat
    finally:
        if mat is not None:
            for p in mat.proofs:
                p.blob_user_after = user_blob(repo, mat.commit_sha, p.path)
        if shared:
            keep = os.environ.get("HARNESS_KEEP_TREES", "1") != "0"
            if mat is None or not keep or mat.changes():
                remove_tree(root / ident.key)
                (root / f"{ident.key}.json").unlink(missing_ok=True)
            else:
                os.utime(root / f"{ident.key}.json")
            lock.unlink(missing_ok=True)
        elif mat is not None:
            remove_tree(mat.path)


def _reuse(repo: GitRepo, root: Path, ident: ColumnIdentity) -> Materialized | None:
    meta_path, path = root / f"{ident.key}.json", root / ident.key
    if not (meta_path.is_file() and path.is_dir()):
        return None
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, ValueError):
        return None
    if meta.get("tree") != ident.tree_sha or diff_listing(
        meta.get("listing", {}), listing_of(path)
    ):
        return None
    proofs = [EditProof(**p) for p in meta.get("proofs", [])]
    for p in proofs:
        p.blob_user_before = user_blob(repo, ident.commit_sha, p.path)
    return Materialized(
        path, ident.tree_sha, ident.commit_sha, proofs, ident.key, True, meta["listing"]
    )
