"""How a task's column tree reaches the code that runs it.

``LocalTree`` materializes the column in the harness's work root (harness/columns/trees.py), as the
harness always has. ``PackedTree`` is the column as tar bytes, made on the driver: a ref column is
``git archive`` of its tree as is; a control (ref + edits) is the materialized tree with its edits,
packed. A worker unpacks it into a private temporary directory, so it never needs the user's
repository. Probe files outside the tree (``inputs`` of a kind) travel the same way (``InputFiles``).
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import AbstractContextManager as ContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from harness.columns.edits import EditProof, apply_edits
from harness.columns.trees import IGNORED_DIRS, Materialized, identify, listing_of, materialize
from harness.errors import UsageError
from harness.executors.base import TreeSpec
from harness.git.tree import archive_bytes, export_tree
from harness.infra import workarea
from harness.infra.stale_trees import alive


class TreeSource(Protocol):
    """A column tree a task body can open (fresh each time when ``remote``)."""

    remote: bool

    def open(self) -> ContextManager[Materialized]: ...


@dataclass
class LocalTree:
    """The column materialized here, in the harness's work root (reused across runs)."""

    spec: TreeSpec
    remote: bool = False

    def open(self) -> ContextManager[Materialized]:
        if self.spec.ready is not None:
            return contextlib.nullcontext(self.spec.ready)
        if self.spec.scratch:
            return _scratch(self.spec)
        return materialize(self.spec.repo, self.spec.column, self.spec.workroot)


@contextlib.contextmanager
def _scratch(spec: TreeSpec) -> Iterator[Materialized]:
    """A column (its edits applied) exported into a temporary directory, removed afterwards."""
    ident = identify(spec.repo, spec.column)
    with workarea.temp_dir("harness-tree-") as tmp:
        path = Path(tmp) / "tree"
        export_tree(spec.repo, ident.commit_sha, path)
        proofs = apply_edits(spec.repo, path, spec.column.edits)
        yield Materialized(
            path, ident.tree_sha, ident.commit_sha, proofs, ident.key, False, listing_of(path)
        )


@dataclass
class PackedTree:
    """A column as tar bytes plus its identity; ``error`` when its edits do not apply to its ref."""

    key: str
    tree_sha: str = ""
    commit_sha: str = ""
    proofs: list[EditProof] = field(default_factory=list)
    error: str = ""
    data: bytes = field(default=b"", repr=False)
    remote: bool = True

    def meta(self) -> PackedTree:
        """The same without the bytes (the bytes travel as their own object)."""
        return PackedTree(self.key, self.tree_sha, self.commit_sha, self.proofs, self.error, b"")

    @contextlib.contextmanager
    def open(self) -> Iterator[Materialized]:
        if self.error:
            raise UsageError(self.error)
        root = worker_dir("harness-rtree-")
        try:
            path = root / "tree"
            unpack(self.data, path)
            proofs = [EditProof(**vars(p)) for p in self.proofs]
            yield Materialized(
                path, self.tree_sha, self.commit_sha, proofs, self.key, False, listing_of(path)
            )
        finally:
            shutil.rmtree(root, ignore_errors=True)


def worker_root() -> Path:
    """Where tasks keep their temporary trees: ``<work area>/worker`` (``workarea.worker_root``)."""
    return workarea.worker_root()


def worker_dir(prefix: str) -> Path:
    """A temporary directory ``<prefix><pid>-…`` under ``worker_root()``; first removes those of dead
    processes (a worker killed mid-task cannot clean up after itself, the next task there does)."""
    tmp = worker_root()
    for entry in tmp.glob(f"{prefix}*"):
        pid = entry.name[len(prefix) :].split("-", 1)[0]
        if pid.isdigit() and not alive(int(pid)):
            shutil.rmtree(entry, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=str(tmp)))


def pack_dir(path: Path) -> bytes:
    """A directory as tar bytes: sorted entries, no owner names, bytecode caches left out."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_DIRS)
            for name in [*dirnames, *sorted(filenames)]:
                full = Path(dirpath) / name
                info = tar.gettarinfo(str(full), arcname=os.path.relpath(full, path))
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                if info.isfile():
                    with open(full, "rb") as fh:
                        tar.addfile(info, fh)
                else:
                    tar.addfile(info)
    return buf.getvalue()


def unpack(data: bytes, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(dest, filter="tar") if hasattr(tarfile, "data_filter") else tar.extractall(
            dest
        )


def pack_tree(spec: TreeSpec) -> PackedTree:
    """The column of ``spec`` as bytes, made here (the only place that reads the user's repository)."""
    ident = identify(spec.repo, spec.column)
    if not spec.column.edits:
        tree, data = archive_bytes(spec.repo, ident.commit_sha)
        return PackedTree(ident.key, tree, ident.commit_sha, [], "", data)
    try:
        with (
            contextlib.nullcontext(spec.ready)
            if spec.ready is not None
            else materialize(spec.repo, spec.column, spec.workroot) as mat
        ):
            data = pack_dir(mat.path)
            proofs = [EditProof(**vars(p)) for p in mat.proofs]
    except UsageError as exc:
        return PackedTree(ident.key, ident.tree_sha, ident.commit_sha, error=str(exc))
    for p in proofs:
        p.blob_user_after = None  # read again on the driver once the task has run
    return PackedTree(ident.key, ident.tree_sha, ident.commit_sha, proofs, "", data)


@dataclass
class InputFiles:
    """Files outside the tree a probe reads (its probe file, stubs), relative to their common root."""

    root: str
    files: dict[str, bytes]

    @classmethod
    def of(cls, base_dir: Path, paths: list[Path]) -> InputFiles:
        real = [Path(p).resolve() for p in paths if Path(p).is_file()]
        root = Path(os.path.commonpath([str(Path(base_dir).resolve()), *map(str, real)]))
        return cls(str(root), {str(p.relative_to(root)): p.read_bytes() for p in real})

    def place(self, dest: Path, base_dir: Path) -> Path:
        """Write the files under ``dest``; returns where ``base_dir`` now lies."""
        for rel, data in sorted(self.files.items()):
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        new_base = dest / Path(base_dir).resolve().relative_to(self.root)
        new_base.mkdir(parents=True, exist_ok=True)
        return new_base


def tree_source(spec: TreeSpec | None, packed: PackedTree | None) -> Any:
    """What a body receives: the packed tree when one was shipped, else the local column."""
    if packed is not None:
        return packed
    return LocalTree(spec) if spec is not None else None
