"""History facts that decide whether a range can be judged at all: shallow cut-offs, commit counts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from harness.git.repo import GitRepo


def shallow_commits(repo: GitRepo) -> set[str]:
    """Commits whose parents this repository lacks (``$GIT_DIR/shallow``); empty when not shallow."""
    if repo.run_text(["rev-parse", "--is-shallow-repository"]).strip() != "true":
        return set()
    rel = repo.run_text(["rev-parse", "--git-path", "shallow"]).strip()
    path = Path(rel) if Path(rel).is_absolute() else repo.git_dir / rel
    try:
        return set(path.read_text(encoding="ascii", errors="replace").split())
    except OSError:
        return set()


def cut_off(repo: GitRepo, shas: Sequence[str], shallow: set[str]) -> list[str]:
    """The shallow boundary commits reachable from ``shas`` (their history is cut off), in walk order."""
    if not shallow or not shas:
        return []
    return [c for c in repo.run_text(["rev-list", *shas, "--"]).split() if c in shallow]


def count_commits(repo: GitRepo, base: str, head: str, *, no_merges: bool = False) -> int:
    """How many commits ``base..head`` holds (non-merge ones only with ``no_merges``)."""
    args = ["rev-list", "--count", *(["--no-merges"] if no_merges else []), head, f"^{base}", "--"]
    return int(repo.run_text(args).strip() or 0)


_VERSION: dict[str, str] = {}


def git_version(repo: GitRepo) -> str:
    """``git version`` (part of content keys: another git may diff or rename-detect differently);
    asked once per run."""
    if "v" not in _VERSION:
        _VERSION["v"] = repo.run_text(["version"]).strip()
    return _VERSION["v"]
