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


def count_commits(repo: GitRepo, base: str, head: str) -> tuple[int, int]:
    """How many commits ``base..head`` holds, and how many of them are not merges (one walk)."""
    out = repo.run(["rev-list", "--parents", head, f"^{base}", "--"])
    lines = out.splitlines()
    return len(lines), sum(1 for ln in lines if ln.count(b" ") < 2)


_VERSION: dict[str, str] = {}


def git_version(repo: GitRepo) -> str:
    """``git version`` (part of content keys: another git may diff or rename-detect differently);
    asked once per run."""
    if "v" not in _VERSION:
        _VERSION["v"] = repo.run_text(["version"]).strip()
    return _VERSION["v"]
