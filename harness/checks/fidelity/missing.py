"""Missing commits: PR-branch commits added after the pick was cut from it.

The branch's commits (``--source-branch``, e.g. a fetched ``refs/pull/N/head``) were squash-merged
as the source. The cut point is the last branch commit whose changes the pick contains; every later
commit that changes something is missing from the pick.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from harness.checks.fidelity.compare import is_test_path, signed_keys
from harness.git import Commit
from harness.git.patch import Patch

CONTAINED = 0.8  # share of a branch commit's signed lines the pick must carry


@dataclass
class BranchCommit:
    """A commit of the source PR branch and how much of it the pick contains."""

    sha: str
    subject: str
    author_time: int
    files: list[dict[str, object]]  # {path, added, removed}
    contained: float
    state: str = ""  # contained / not contained / after cut / empty

    @property
    def test_only(self) -> bool:
        return all(is_test_path(str(f["path"])) for f in self.files)

    def as_dict(self) -> dict[str, object]:
        return {
            "sha": self.sha,
            "subject": self.subject,
            "author_time": self.author_time,
            "author_date": iso(self.author_time),
            "files": self.files,
            "state": self.state,
            "contained": self.contained,
            "test_only": self.test_only,
        }


def iso(ts: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


@dataclass
class MissingResult:
    """The PR branch's commits against the pick: where the pick was cut, and what it lacks."""

    pick: str | None
    cut_point: str | None
    commits: list[BranchCommit] = field(default_factory=list)

    @property
    def missing(self) -> list[BranchCommit]:
        return [c for c in self.commits if c.state == "after cut"]


def _keys(patch: Patch) -> Counter[tuple[str, bytes]]:
    c: Counter[tuple[str, bytes]] = Counter()
    for f in patch.files:
        c += signed_keys(f.added, f.removed)
    return c


def _share(part: Counter[tuple[str, bytes]], whole: Counter[tuple[str, bytes]]) -> float:
    total = sum(part.values())
    return sum((part & whole).values()) / total if total else 0.0


def find_missing(
    branch: Sequence[Commit],
    patches: dict[str, Patch],
    pick_keys: dict[str, Counter[tuple[str, bytes]]],
    completing: Sequence[str] = (),
) -> MissingResult:
    """Pick the pick that carries most of the branch, then find the cut point on it.

    ``completing``: picks of the range whose source is a commit of the branch (e.g. the missing
    commits, cherry-picked later with -x); what they carry counts as carried too.
    """
    if not branch:
        return MissingResult(None, None)
    keys = {c.sha: _keys(patches[c.sha]) for c in branch}
    whole: Counter[tuple[str, bytes]] = Counter()
    for k in keys.values():
        whole += k
    scored = sorted(pick_keys, key=lambda p: -_share(whole, pick_keys[p]))
    target = scored[0] if scored and _share(whole, pick_keys[scored[0]]) > 0 else None
    carried = pick_keys.get(target, Counter()) if target else Counter()
    for p in completing:
        if p != target:
            carried = carried + pick_keys[p]
    rows = []
    for c in branch:
        files = [
            {"path": f.path, "added": len(f.added), "removed": len(f.removed)}
            for f in patches[c.sha].files
        ]
        rows.append(
            BranchCommit(
                c.sha, c.subject, c.author_time, files, round(_share(keys[c.sha], carried), 3)
            )
        )
    cut = max(
        (i for i, r in enumerate(rows) if keys[r.sha] and r.contained >= CONTAINED), default=-1
    )
    for i, r in enumerate(rows):
        if not keys[r.sha] and not any(f["added"] or f["removed"] for f in r.files) and not r.files:
            r.state = "empty"
        elif i <= cut:
            r.state = "contained" if r.contained >= CONTAINED else "not contained"
        else:
            r.state = "after cut"
    return MissingResult(target, rows[cut].sha if cut >= 0 else None, rows)
