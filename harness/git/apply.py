"""Git plumbing for column trees: blob ids, commit diffs, applying patches to a harness-owned dir.

Nothing here touches the user's work tree, index or refs. ``git apply`` runs in a directory the
harness owns, outside any repository (discovery is fenced off with GIT_CEILING_DIRECTORIES), so
it behaves like ``patch`` and writes nothing into ``.git``.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

from harness.errors import UsageError
from harness.git.repo import GitRepo, run_git
from harness.infra import process


@lru_cache(maxsize=64)
def _object_format(git_dir: str) -> str:
    proc = run_git(["--git-dir", git_dir, "rev-parse", "--show-object-format"])
    return (proc.stdout.decode().strip() or "sha1") if proc.returncode == 0 else "sha1"


def blob_sha(repo: GitRepo, data: bytes) -> str:
    """The blob id git gives ``data``, computed in-process (sha1 or sha256 as the repository uses)."""
    algo = hashlib.sha256 if _object_format(str(repo.git_dir)) == "sha256" else hashlib.sha1
    return algo(b"blob %d\0" % len(data) + data).hexdigest()


def commit_diff(repo: GitRepo, rev: str) -> bytes:
    """The binary-safe diff a commit introduces against its first parent (root: against nothing)."""
    sha = repo.resolve(rev)
    return repo.run(
        [
            "diff-tree",
            "-p",
            "--binary",
            "--full-index",
            "--root",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "-m",
            "--first-parent",
            "--no-renames",
            sha,
        ]
    )


def apply_patch(tree_dir: Path, diff: bytes, *, what: str, include: str | None = None) -> None:
    """Apply a unified diff inside ``tree_dir`` (not a repository); failure is a UsageError.

    ``include`` limits the patch to one path.
    """
    if not diff.strip():
        return
    env = process.child_env(
        {"GIT_CEILING_DIRECTORIES": str(Path(tree_dir).resolve().parent), "LC_ALL": "C"},
        drop=("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"),
    )
    proc = run_git(
        [
            "apply",
            "--whitespace=nowarn",
            *([f"--include={include}"] if include else []),
            "-",
        ],
        input=diff,
        cwd=tree_dir,
        env=env,
    )
    if proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(f"{what}: does not apply: {msg[0] if msg else 'git apply failed'}")


def check_both_ways(tree_dir: Path, diff: bytes) -> tuple[bool, bool]:
    """Whether ``diff`` reverse-applies and whether it applies (``git apply --check``, each way)
    to the files of ``tree_dir`` (not a repository; nothing is written). Offsets are allowed, as
    ``git apply`` allows them; fuzz (context that does not match) is not."""
    env = process.child_env(
        {"GIT_CEILING_DIRECTORIES": str(Path(tree_dir).resolve().parent), "LC_ALL": "C"},
        drop=("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"),
    )
    answers = []
    for way in (["--reverse"], []):
        proc = run_git(["apply", "--check", *way, "-"], input=diff, cwd=tree_dir, env=env)
        answers.append(proc.returncode == 0)
    return answers[0], answers[1]
