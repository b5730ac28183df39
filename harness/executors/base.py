"""The executor seam: a cell of work (probe column, mutation row, …) is a ``Task``; an executor runs
a batch of them and answers one ``TaskResult`` per task, in order.

A task names the tree it needs (``TreeSpec``: a column of the user's repository) instead of
carrying a path, so the executor chooses how the tree reaches the code: ``local`` materializes it
in the harness's work root on this machine, ``ray`` ships it as tar bytes through the object store
(the worker never sees the user's repository). The body is a module-level function called as
``fn(tree, *args)`` with ``tree`` a ``harness.executors.trees.TreeSource``; it must not raise for an
outcome the report shows (those are values) and must return plain picklable data.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

R = TypeVar("R")

STATUSES = ("ok", "timeout", "lost")


@dataclass(frozen=True)
class Resources:
    """What a task asks of the machine that runs it (``ray`` only; ``local`` runs everything here)."""

    num_gpus: int = 0
    custom: tuple[tuple[str, float], ...] = ()  # e.g. (("sglang-0.5.3", 1),)


@dataclass
class TreeSpec:
    """The column tree a task needs: ``column`` of ``repo``, materialized under ``workroot``."""

    repo: Any  # harness.git.GitRepo
    column: Any  # harness.columns.trees.Column
    workroot: Path | None = None
    key: str = ""  # the column's content key (tree sha + edits): one archive per key is shipped
    ready: Any = None  # a harness.columns.trees.Materialized already made (edits applied up front): used as is
    scratch: bool = (
        False  # local: export into a temporary directory removed after the task (not kept)
    )


@dataclass
class Task(Generic[R]):
    """One unit of remote-able work: ``fn(tree, *args) -> R`` identified by ``key``."""

    key: str
    fn: Callable[..., R]
    tree: TreeSpec | None
    args: tuple[Any, ...] = ()
    resources: Resources = field(default_factory=Resources)
    timeout: float | None = None  # wall-clock seconds; past it the result has status "timeout"
    label: str = ""


@dataclass
class TaskResult(Generic[R]):
    """``status`` ok (``value`` is the body's return), timeout (past ``Task.timeout``) or lost (the
    worker died more often than the retry bound); ``detail`` says why when not ok."""

    status: str
    value: R | None = None
    detail: str = ""


class Executor(Protocol):
    """Runs tasks; ``run`` returns one result per task in order, cancels everything on interrupt."""

    name: str

    def run(self, tasks: Sequence[Task[Any]], jobs: int | None = None) -> list[TaskResult[Any]]: ...

    def slots(self) -> int:
        """How many tasks can run at once (how many shards a sweep is split into by default)."""
        ...

    def close(self) -> None: ...
