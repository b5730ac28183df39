"""The checks that take nothing but a range, as a typed registry: ``compare`` runs each of them in
this order, and adding one is adding its module and a line here. (Checks with their own inputs —
fidelity's source, the scenario's traces, pins, lanes, tests and probes — are planned by
``harness/plan.py`` from those inputs.)"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from harness.checks.result import Checked
from harness.git.repo import GitRepo


def lazy(module: str, name: str) -> Callable[..., Any]:
    """``module.name``, imported when first called: a warm ``compare`` serves every section from
    the cache and never imports the checks (~35 ms of its start)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    return call


class Check(Protocol):
    """A check over ``base..head``: its section id, its title in the plan, and the run."""

    @property
    def id(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def takes_source(self) -> bool: ...

    def run(
        self, repo: GitRepo, base: str, head: str, source: str | None = None
    ) -> Checked[Any]: ...


@dataclass(frozen=True)
class RangeCheck:
    """A check function of (repo, base, head) under its id and title; with ``takes_source``, of
    (repo, base, head, source) too (drift: BASE being the source branch is the audit form)."""

    id: str
    title: str
    fn: Callable[..., Checked[Any]]
    takes_source: bool = False

    def run(self, repo: GitRepo, base: str, head: str, source: str | None = None) -> Checked[Any]:
        if self.takes_source:
            return self.fn(repo, base, head, source)
        return self.fn(repo, base, head)


RANGE_CHECKS: dict[str, Check] = {
    c.id: c
    for c in (
        RangeCheck("drift", "release drift", lazy("harness.checks.drift", "drift_check"), True),
        RangeCheck("shape", "push shape", lazy("harness.checks.shape", "shape_check")),
        RangeCheck(
            "conflicts", "conflict markers", lazy("harness.checks.conflicts", "conflicts_check")
        ),
    )
}
