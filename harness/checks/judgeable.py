"""Can BASE..HEAD be judged at all? Refused (exit 2, one line naming the fix) when the history is
shallow where the range needs it, a named ref (source, PR branch) is missing, or the range is empty;
a BASE that is not an ancestor of HEAD is allowed but stated once in the report header."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from harness.errors import UsageError
from harness.git.history import count_commits, cut_off, shallow_commits
from harness.git.repo import GitRepo

UNSHALLOW = "run `git fetch --unshallow` (GitHub Actions: actions/checkout with `fetch-depth: 0`)"


@dataclass(frozen=True)
class RangeFacts:
    """What the range looks like once it is known to be judgeable."""

    base: str
    head: str
    base_sha: str
    head_sha: str
    commits: int
    picks: int
    merge_base: str

    @property
    def base_is_ancestor(self) -> bool:
        return self.merge_base == self.base_sha

    def header(self) -> dict[str, str]:
        """The report header line for a BASE that is not an ancestor of HEAD (else nothing)."""
        if self.base_is_ancestor:
            return {}
        return {
            "merge base": f"{self.merge_base[:12]} ({self.base} is not an ancestor of {self.head}: "
            f"{self.base}..{self.head} counts the commits after this merge base)"
        }


def _need(repo: GitRepo, label: str, ref: str, shallow: bool) -> str:
    try:
        return repo.resolve(ref)
    except UsageError as exc:
        if "is a range" in str(exc) or "invalid ref" in str(exc):
            raise UsageError(f"{label} {exc}") from None
    if shallow:
        raise UsageError(
            f"{label} {ref!r}: not in this shallow repository; {UNSHALLOW} and fetch {ref}"
        )
    raise UsageError(
        f"{label} {ref!r}: not in this repository; fetch it (e.g. `git fetch origin {ref}`; "
        "GitHub Actions: actions/checkout with `fetch-depth: 0` fetches every branch)"
    )


def judge_range(
    repo: GitRepo,
    base: str,
    head: str,
    *,
    source: str | None = None,
    source_branch: str | None = None,
    picks: bool = False,
) -> RangeFacts:
    """Refuse a range that cannot be judged; ``picks``: its non-merge commits are what is judged."""
    shallow = shallow_commits(repo)
    base_sha = _need(repo, "BASE", base, bool(shallow))
    head_sha = _need(repo, "HEAD", head, bool(shallow))
    shas = [base_sha, head_sha]
    for label, ref in (("--source", source), ("--source-branch", source_branch)):
        if ref:
            shas.append(_need(repo, label, ref, bool(shallow)))
    cut = cut_off(repo, shas, shallow)
    if cut:
        raise UsageError(
            f"shallow repository: history is cut off at {cut[0][:12]} ({len(cut)} boundary "
            f"commit(s) reachable from the refs), so {base}..{head} cannot be judged; {UNSHALLOW}"
        )
    # Two walks at once (the merge base in a thread): git does both while Python waits. A plain
    # thread, not an executor: concurrent.futures (and logging) cost a warm run ~5 ms to import.
    merged: list[str | None] = []
    failed: list[BaseException] = []

    def ask() -> None:
        try:
            merged.append(repo.merge_base(base_sha, head_sha))
        except BaseException as exc:  # (raised again below, in the caller's thread)
            failed.append(exc)

    asking = threading.Thread(target=ask, name="harness-merge-base")
    asking.start()
    try:
        commits, n_picks = count_commits(repo, base_sha, head_sha)
    finally:
        asking.join()
    if failed:
        raise failed[0]
    merge_base = merged[0]
    if merge_base is None:
        raise UsageError(
            f"{base} and {head} share no history (no merge base): {base}..{head} cannot be judged"
        )
    if commits == 0:
        raise UsageError(
            f"no commits in {base}..{head}: nothing to judge ({head} is already in {base})"
        )
    if picks and n_picks == 0:
        raise UsageError(f"no picks in {base}..{head}: its {commits} commit(s) are all merges")
    return RangeFacts(base, head, base_sha, head_sha, commits, n_picks, merge_base)
