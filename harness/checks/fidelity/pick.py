"""One pick as fidelity judged it: the commit, its sources (``Resolution``), its files compared
with theirs, its status, and what later stages add (end state, unit, completion, the files its
parent lacks). The lowest module the stages share: source finding, the section, its findings and
anchors all read it."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.checks.fidelity.compare import FileResult
from harness.checks.fidelity.endstate import EndState
from harness.checks.fidelity.source import Resolution
from harness.git import Commit


@dataclass
class PickResult:
    """One pick of the range: its sources, its files compared with theirs, its end states."""

    commit: Commit
    resolution: Resolution
    files: list[FileResult]
    status: str
    end_state: list[EndState] = field(default_factory=list)
    pr_commits: list[tuple[str, str]] = field(
        default_factory=list
    )  # (sha, subject) of a merge source
    unit: tuple[
        str, ...
    ] = ()  # the source PR this pick belongs to (its sources unless a PR commit's)
    completed_by: list[str] = field(
        default_factory=list
    )  # later picks that carry what this one lacks
    copy_of: str | None = (
        None  # the source is a later copy of this branch's own commit (this pick or one before)
    )
    absent: set[str] = field(default_factory=set)  # files its source changed, absent at its parent
    already: set[str] = field(
        default_factory=set
    )  # ... that its parent holds as the source left them
    merged_into: str | None = None  # the merge that brought this very commit into the source branch
