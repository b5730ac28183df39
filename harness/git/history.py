"""History facts that decide whether a range can be judged at all: shallow cut-offs, commit counts."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence

from harness.git.repo import Commit, GitRepo


def shallow_commits(repo: GitRepo) -> set[str]:
    """Commits whose parents this repository lacks (``$GIT_DIR/shallow``, read as git reads it:
    no process); empty when not shallow."""
    try:
        return set(repo.shallow_file().read_text(encoding="ascii", errors="replace").split())
    except OSError:  # not shallow (no such file), or unreadable as before
        return set()


def cut_off(repo: GitRepo, shas: Sequence[str], shallow: set[str]) -> list[str]:
    """The shallow boundary commits reachable from ``shas`` (their history is cut off), in walk order."""
    if not shallow or not shas:
        return []
    return [c for c in repo.run_text(["rev-list", *shas, "--"]).split() if c in shallow]


def range_parents(repo: GitRepo, base: str, head: str) -> list[list[str]]:
    """``[sha, *parents]`` of each commit of ``base..head``, newest first: one ``rev-list``, kept
    for the run (range checks and the fork point both read it)."""
    key = (base, head)
    if key not in repo.walks:
        out = repo.run_text(["rev-list", "--parents", head, f"^{base}", "--"])
        repo.walks[key] = [line.split() for line in out.splitlines()]
    return repo.walks[key]


def range_commits(repo: GitRepo, base: str, head: str) -> list[Commit]:
    """The commits of ``base..head``, oldest first (``git log --reverse``), kept for the run."""
    key = (base, head)
    if key not in repo.ranges:
        repo.ranges[key] = repo.commits([head], [base])
    return repo.ranges[key]


def count_commits(repo: GitRepo, base: str, head: str) -> tuple[int, int]:
    """How many commits ``base..head`` holds, and how many of them are not merges (one walk)."""
    walk = range_parents(repo, base, head)
    return len(walk), sum(1 for c in walk if len(c) < 3)


def fork_point(repo: GitRepo, base: str, head: str) -> str:
    """Where the range starts on HEAD's own line: the first parent of the oldest commit of
    ``--first-parent base..head`` (BASE itself when BASE is on that line; the merge base when BASE
    is the source tip). Read off the range's walk: HEAD's first parents while they are in it."""
    parents = {c[0]: c[1:] for c in range_parents(repo, base, head)}
    oldest: str | None = None
    at: str | None = head
    while at is not None and at in parents:
        oldest = at
        at = parents[at][0] if parents[at] else None
    return parents[oldest][0] if oldest is not None and parents[oldest] else base


_VERSION: dict[str, str] = {}
_ASKED: list[subprocess.Popen[bytes]] = []  # ``git version`` started by ``ask_git_version``


def ask_git_version(repo: GitRepo) -> None:
    """Start ``git version`` now, its answer read by ``git_version``: it runs beside the run's
    first questions to git instead of after them (~1.5 ms of a run's start)."""
    if "v" not in _VERSION and not _ASKED:
        try:
            _ASKED.append(repo.popen(["version"]))
        except OSError:
            pass


def git_version(repo: GitRepo) -> str:
    """``git version`` (part of content keys: another git may diff or rename-detect differently);
    asked once per run."""
    if "v" not in _VERSION and _ASKED:
        proc = _ASKED.pop()
        out, _ = proc.communicate()
        if proc.returncode == 0 and out.strip():
            _VERSION["v"] = out.decode("utf-8", "surrogateescape").strip()
    if "v" not in _VERSION:
        _VERSION["v"] = repo.run_text(["version"]).strip()
    return _VERSION["v"]


def describe(repo: GitRepo, sha: str) -> str:
    """``git describe --tags --long`` of a commit ("" where no tag reaches it)."""
    out = repo.run(["describe", "--tags", "--long", "--end-of-options", sha], check=False)
    return out.decode("utf-8", "replace").strip()


MAX_MERGED_WITH = 20  # source commits asked about per run


def merged_with(repo: GitRepo, source: str, commits: Sequence[str]) -> dict[str, list[str]]:
    """For each commit that a merge on ``source``'s first-parent line brought in (a PR merged
    with a merge commit), the other commits that merge brought, oldest first; commits on the
    first-parent line itself map to nothing."""
    out: dict[str, list[str]] = {}
    for sha in commits[:MAX_MERGED_WITH]:
        line = repo.run_text(
            ["rev-list", "--first-parent", "--merges", source, f"^{sha}", "--"], check=False
        ).split()
        after = set(
            repo.run_text(
                ["rev-list", "--ancestry-path", f"{sha}..{source}", "--"], check=False
            ).split()
        )
        merges = [m for m in line if m in after]  # first-parent merges that descend from it
        if not merges:
            continue
        merge = merges[-1]  # the oldest: the one that brought it
        parents = repo.run_text(["rev-parse", f"{merge}^1", f"{merge}^2"], check=False).split()
        if len(parents) != 2:
            continue
        brought = repo.run_text(
            ["rev-list", "--reverse", "--no-merges", f"{parents[0]}..{parents[1]}", "--"],
            check=False,
        ).split()
        if sha in brought:
            out[sha] = [c for c in brought if c != sha]
    return out
