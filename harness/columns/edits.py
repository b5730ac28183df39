"""Edits that turn a ref into a control column, and the blob-sha proofs that they landed.

Kinds: ``replace`` (old text must occur exactly once), ``move`` (a line moved above another),
``patch`` (a unified diff), ``apply-commit`` (a commit's diff applied on top), ``checkout`` (one
file as it is at another commit, or removed where that commit has none: a test file taken from the
pick or the source). Edits only ever
touch a tree the harness exported (``tree_dir``), never the user's work tree.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import UsageError
from harness.git.apply import apply_patch, blob_sha, commit_diff
from harness.git.repo import GitRepo
from harness.infra import treefiles

# How a control column whose edit cannot apply reports its cells (probe_table reads it back).
CONTROL_BROKEN = "control does not apply"

KINDS = ("replace", "move", "patch", "apply-commit", "checkout")
_PRIMARY = {
    "replace": "old",
    "move": "line",
    "patch": "diff",
    "apply-commit": "commit",
    "checkout": "commit",
}
_FIELDS = {
    "replace": ("old", "new"),
    "move": ("line", "above"),
    "patch": ("diff",),
    "apply-commit": ("commit",),
    "checkout": ("commit",),
}


@dataclass
class Edit:
    """One edit of a control column. ``where`` locates it for error messages (file:line)."""

    kind: str
    path: str | None = None
    old: str | None = None
    new: str | None = None
    line: str | None = None
    above: str | None = None
    diff: str | None = None
    commit: str | None = None
    where: str = field(default="", compare=False)

    def describe(self) -> str:
        """One line for reports."""
        if self.kind == "replace":
            return f"replace in {self.path}: {_short(self.old)} → {_short(self.new)}"
        if self.kind == "move":
            return f"move in {self.path}: {_short(self.line)} above {_short(self.above)}"
        if self.kind == "patch":
            return f"patch ({len((self.diff or '').splitlines())} lines)"
        if self.kind == "checkout":
            return f"{self.path} as at {(self.commit or '')[:12]}"
        return f"apply-commit {self.commit}"

    def identity(self) -> dict[str, Any]:
        """What makes two edits the same (for tree reuse and cache keys)."""
        d = asdict(self)
        d.pop("where")
        return {k: v for k, v in d.items() if v is not None}


@dataclass
class EditProof:
    """Blob ids of one edited file: before, after the edit, and the user's copy after the run."""

    path: str
    blob_before: str | None
    blob_after: str | None
    blob_user_after: str | None = None
    blob_user_before: str | None = (
        None  # filled by columns; equal to blob_user_after: nothing leaked
    )

    @property
    def landed(self) -> bool:
        return self.blob_before != self.blob_after

    @property
    def leaked(self) -> bool:
        return self.blob_user_before != self.blob_user_after


def _short(s: str | None, n: int = 40) -> str:
    s = (s or "").strip().replace("\n", "↵")
    return s if len(s) <= n else s[: n - 1] + "…"


def edit_from_mapping(d: dict[str, Any], where: str = "") -> Edit:
    """Build an Edit from ``{kind: move, path, line, above}`` or the shorthand ``{move: LINE, path, above}``."""
    if not isinstance(d, dict):
        raise UsageError(f"{where}edit must be a mapping, got {type(d).__name__}")
    d = dict(d)
    kind = d.pop("kind", None)
    if kind is None:
        named = [k for k in KINDS if k in d]
        if len(named) != 1:
            raise UsageError(f"{where}edit needs exactly one of kind/{'/'.join(KINDS)}")
        kind = named[0]
        d[_PRIMARY[kind]] = d.pop(kind)
    if kind not in KINDS:
        raise UsageError(f"{where}edit kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if kind == "replace" and "with" in d and "new" not in d:
        d["new"] = d.pop("with")
    allowed = {"path", *_FIELDS[kind]}
    unknown = sorted(set(d) - allowed)
    if unknown:
        raise UsageError(
            f"{where}{kind} edit: unknown key {unknown[0]!r} (allowed: {', '.join(sorted(allowed))})"
        )
    for k in _FIELDS[kind]:
        if not isinstance(d.get(k), str):
            raise UsageError(f"{where}{kind} edit: {k!r} must be a string")
    if kind in ("replace", "move", "checkout") and not isinstance(d.get("path"), str):
        raise UsageError(f"{where}{kind} edit: 'path' (a file in the tree) is required")
    if "path" in d and not isinstance(d["path"], str):
        raise UsageError(f"{where}{kind} edit: 'path' must be a string")
    if isinstance(d.get("path"), str):
        _check_rel(d["path"], f"{where}{kind} edit: 'path'")
    if kind == "patch":
        for p in _diff_paths(d["diff"]):
            _check_rel(p, f"{where}patch edit: the diff's path")
    return Edit(kind=kind, where=where, **{k: d.get(k) for k in ("path", *_FIELDS[kind])})


def _check_rel(rel: str, what: str) -> None:
    """A path inside a column's tree, as written in a scenario: relative, no ``..``, no NUL."""
    parts = rel.replace("\\", "/").split("/")
    if not rel.strip() or "\0" in rel:
        raise UsageError(f"{what} {rel!r} is not a path in the tree")
    if rel.startswith("/") or os.path.isabs(rel) or ".." in parts:
        raise UsageError(f"{what} {rel!r} lies outside the tree (relative paths without '..' only)")


def _safe_path(tree_dir: Path, rel: str, where: str) -> Path:
    p = (tree_dir / rel).resolve()
    if not p.is_relative_to(tree_dir.resolve()) or rel.startswith("/"):
        raise UsageError(f"{where}path {rel!r} lies outside the tree")
    return p


def _read(tree_dir: Path, rel: str, where: str) -> bytes:
    if rel.startswith("/") or ".." in Path(rel).parts:
        raise UsageError(f"{where}path {rel!r} lies outside the tree")
    if not os.path.lexists(tree_dir / rel):
        raise UsageError(f"{where}{rel}: no such file in the column's tree")
    try:
        return treefiles.read(tree_dir, rel)  # a link (or a linked folder on the way) is refused
    except treefiles.TreePathError as exc:
        raise UsageError(f"{where}{exc}") from None


def _write(tree_dir: Path, rel: str, data: bytes, where: str) -> None:
    try:
        treefiles.write(tree_dir, rel, data)
    except treefiles.TreePathError as exc:
        raise UsageError(f"{where}{exc}") from None


def _replace(data: bytes, e: Edit) -> bytes:
    old, new = (e.old or "").encode(), (e.new or "").encode()
    n = data.count(old) if old else 0
    if n != 1:
        raise UsageError(
            f"{e.where}replace in {e.path}: old text must occur exactly once, found {n}"
        )
    return data.replace(old, new, 1)


def _find_line(lines: list[bytes], text: str, e: Edit, what: str) -> int:
    want = text.strip().encode()
    hits = [i for i, ln in enumerate(lines) if ln.strip() == want]
    if len(hits) != 1:
        raise UsageError(
            f"{e.where}move in {e.path}: {what} {text.strip()!r} must match exactly one line, "
            f"found {len(hits)}"
        )
    return hits[0]


def _move(data: bytes, e: Edit) -> bytes:
    """Move the line ``e.line`` above ``e.above``, taking the target's indentation (Python-safe)."""
    lines = data.splitlines(keepends=True)
    src = _find_line(lines, e.line or "", e, "line")
    _find_line(lines, e.above or "", e, "above")
    moved = lines.pop(src)
    dst = _find_line(lines, e.above or "", e, "above")
    target = lines[dst]
    indent = target[: len(target) - len(target.lstrip())]
    ending = moved[len(moved.rstrip(b"\r\n")) :] or b"\n"
    lines.insert(dst, indent + moved.strip() + ending)
    return b"".join(lines)


_DIFF_PATH = re.compile(r"^(?:\+\+\+|---) (?:[ab]/)?(.+?)(?:\t.*)?$", re.M)


def _diff_paths(diff: str) -> list[str]:
    seen: list[str] = []
    for m in _DIFF_PATH.finditer(diff):
        p = m.group(1).strip().strip('"')
        if p != "/dev/null" and p not in seen:
            seen.append(p)
    return seen


def _blob(repo: GitRepo, p: Path) -> str | None:
    return blob_sha(repo, p.read_bytes()) if p.is_file() else None


def resolve_commits(repo: GitRepo, edits: list[Edit]) -> None:
    """Resolve every apply-commit edit's commit before any work (test collection runs repository
    code): an unknown one fails at the line and key that named it."""
    for e in edits:
        if e.kind in ("apply-commit", "checkout"):
            try:
                repo.resolve(e.commit or "")
            except UsageError as exc:
                raise UsageError(f"{e.where}{e.kind}: {exc}") from None


def apply_edits(repo: GitRepo, tree_dir: Path, edits: list[Edit]) -> list[EditProof]:
    """Apply ``edits`` in order inside ``tree_dir``; one proof per edited file per edit."""
    tree_dir = Path(tree_dir)
    proofs: list[EditProof] = []
    for e in edits:
        if e.kind in ("replace", "move"):
            assert e.path is not None
            before = _read(tree_dir, e.path, e.where)
            after = _replace(before, e) if e.kind == "replace" else _move(before, e)
            if after == before:
                raise UsageError(f"{e.where}{e.kind} in {e.path}: the edit changes nothing")
            _write(tree_dir, e.path, after, e.where)
            proofs.append(EditProof(e.path, blob_sha(repo, before), blob_sha(repo, after)))
            continue
        if e.kind == "checkout":
            proofs.append(_checkout(repo, tree_dir, e))
            continue
        if e.kind == "patch":
            diff = (e.diff or "").encode()
            if not diff.endswith(b"\n"):
                diff += b"\n"
            paths = _diff_paths(e.diff or "")
            what = f"{e.where}patch"
        else:
            diff = commit_diff(repo, e.commit or "")
            paths = _diff_paths(diff.decode("utf-8", "surrogateescape"))
            what = f"{e.where}apply-commit {e.commit}"
        if e.path:  # restrict to one file
            paths = [p for p in paths if p == e.path]
        befores = {p: _blob(repo, _safe_path(tree_dir, p, e.where)) for p in paths}
        apply_patch(tree_dir, diff, what=what, include=e.path)
        for p in paths:
            proofs.append(EditProof(p, befores[p], _blob(repo, _safe_path(tree_dir, p, e.where))))
    return proofs


def _checkout(repo: GitRepo, tree_dir: Path, e: Edit) -> EditProof:
    """``e.path`` replaced by its blob at ``e.commit`` (removed where that commit has none)."""
    assert e.path is not None
    p = _safe_path(tree_dir, e.path, e.where)
    before = _blob(repo, p)
    data = repo.blob_at(e.commit or "", e.path)
    if data is None:
        if os.path.lexists(p):
            try:
                treefiles.checked(tree_dir, e.path, must_exist=True)
            except treefiles.TreePathError as exc:
                raise UsageError(f"{e.where}{exc}") from None
            p.unlink()
    else:
        p.parent.mkdir(parents=True, exist_ok=True)
        _write(tree_dir, e.path, data, e.where)
    return EditProof(e.path, before, _blob(repo, p))
