"""What to call a commit the user typed in words a reader acts on: the branch it is on, not its id."""

from __future__ import annotations

import re

from harness.git.repo import GitRepo

_COMMIT_ID = re.compile(r"[0-9a-fA-F]{7,64}")


def head_name(repo: GitRepo, typed: str, limit: int = 20) -> str:
    """``typed`` as the user wrote it, unless it is a commit id: then the branch whose tip it is,
    else the branch that holds it with the fewest commits after it (the release branch a pick was
    made on, not the source that forked it), local branches before remote-tracking ones; the id
    itself only where no branch holds it."""
    if not _COMMIT_ID.fullmatch(typed):
        return typed
    sha = repo.try_resolve(typed)
    if sha is None:
        return typed
    # A local branch at the commit wins outright: one cheap question before the --contains walks.
    out = repo.run_text(
        ["for-each-ref", "--points-at", sha, "--format=%(refname:short)", "refs/heads"]
    )
    at_tip = sorted(n for n in out.splitlines() if n and not n.endswith("/HEAD"))
    if at_tip:
        return at_tip[0]
    for kind in ("refs/heads", "refs/remotes"):
        out = repo.run_text(
            ["for-each-ref", "--contains", sha, "--format=%(objectname) %(refname:short)", kind]
        )
        pairs = [line.split(" ", 1) for line in out.splitlines() if " " in line]
        found = [(tip, name) for tip, name in pairs if not name.endswith("/HEAD")]
        if not found:
            continue
        at_tip = sorted(name for tip, name in found if tip == sha)
        if at_tip:
            return at_tip[0]
        ahead = [
            (int(repo.run_text(["rev-list", "--count", f"{sha}..{tip}", "--"]).strip() or 0), name)
            for tip, name in sorted(found, key=lambda f: f[1])[:limit]
        ]
        return min(ahead)[1]
    return typed
