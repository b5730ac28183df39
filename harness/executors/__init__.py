"""Executors: where probe columns, mutation rows and other cells run (``local`` or ``ray``).

The seam is ``harness.executors.base``: a ``Task`` (content key, module-level body, the tree it
needs, arguments, resources, timeout) and an ``Executor`` that runs a batch of them. The registry
maps ``--executor`` names to factories; ``ray`` is optional (``pip install 'harness[ray]'``).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from harness.errors import UsageError
from harness.executors.base import Executor, Resources, Task, TaskResult, TreeSpec

__all__ = ["EXECUTORS", "Executor", "Resources", "Task", "TaskResult", "TreeSpec", "make_executor"]


def _local(address: str | None) -> Executor:
    from harness.executors.local import LocalExecutor

    return LocalExecutor()


def _ray(address: str | None) -> Executor:
    from harness.executors.ray_executor import RayExecutor

    return RayExecutor(address)


EXECUTORS: dict[str, Callable[[str | None], Executor]] = {"local": _local, "ray": _ray}


def make_executor(name: str | None = None, address: str | None = None) -> Executor:
    """The executor called ``name`` (default ``$HARNESS_EXECUTOR``, else local); bad names exit 2."""
    name = name or os.environ.get("HARNESS_EXECUTOR") or "local"
    if name not in EXECUTORS:
        raise UsageError(
            f"--executor {name}: unknown executor (choose from {', '.join(EXECUTORS)})"
        )
    if address and name != "ray":
        raise UsageError("--ray-address needs --executor ray")
    return EXECUTORS[name](address)
