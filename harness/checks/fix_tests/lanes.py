"""The CI lanes of each test: the lanes ``harness lanes`` reads from HEAD's workflows, evaluated
over one collection pass at HEAD (``select``'s plugin), per node id of the section's files. A
proving test no lane selects is a finding only when every pytest invocation of the workflows was
read; otherwise the lanes are "not verified" with the reason."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.checks.tests_as_evidence.selection import (
    CONTROL_ALL,
    CONTROL_NONE,
    collect_refs,
    lanes_from_workflows,
)
from harness.executors import Executor
from harness.git.repo import GitRepo
from harness.infra.cache import Cache


@dataclass
class TestLanes:
    names: list[str] = field(default_factory=list)  # every lane read
    nodes: dict[str, list[str]] = field(default_factory=dict)  # node id → lanes selecting it
    complete: bool = False  # every pytest invocation read: "no lane" may be claimed
    why_not: list[str] = field(default_factory=list)  # what was not read, and why


def test_lanes(
    repo: GitRepo,
    head: str,
    files: list[str],
    python: str,
    timeout: float,
    setup: tuple[str, ...],
    no_cache: bool,
    executor: Executor,
) -> TestLanes:
    out = TestLanes()
    unread: list[str] = []
    lanes, skipped = lanes_from_workflows(repo, head, None, None, unread)
    out.names = [lane.name for lane in lanes]
    out.why_not = [f"workflow not read: {u}" for u in unread] + [
        f"lane filled in by CI at run time: {s}" for s in skipped
    ]
    if not lanes:
        out.why_not.append(
            "no pytest -m lane found in HEAD's workflows (tox, nox, make or a plain pytest run "
            "are not lanes the harness can evaluate)"
        )
        return out
    cols = collect_refs(
        repo,
        [head],
        lanes,
        files,
        python=python,
        timeout=timeout,
        setup=setup,
        cache=Cache(namespace="collections", enabled=not no_cache),
        executor=executor,
    )
    col = cols[0]
    if not col.pytest_version or col.errors:
        out.why_not.append(
            "the collection at HEAD did not finish cleanly: "
            + (col.errors[0]["message"] if col.errors else "no report")
        )
    out.nodes = {
        n: [x for x in sel if x not in (CONTROL_ALL, CONTROL_NONE)] for n, sel in col.nodes.items()
    }
    out.complete = not out.why_not
    return out
