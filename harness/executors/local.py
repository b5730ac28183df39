"""``local``: today's thread pool on this machine; trees are materialized in the harness's work root."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from harness.executors.base import Task, TaskResult

# The tree machinery (tarfile, the columns' trees) and the pool load with the first task: a run
# whose cells are all cached (a warm compare) makes the executor and never uses it.


def _call(task: Task[Any]) -> TaskResult[Any]:
    from harness.executors.trees import tree_source

    return TaskResult("ok", task.fn(tree_source(task.tree, None), *task.args))


class LocalExecutor:
    """Runs tasks in threads of this process (``jobs`` at a time; one: inline, in order).

    Bodies enforce their own timeouts here (per row, per pytest run); ``Task.timeout`` is not applied.
    An interrupt sets ``STOP``: running bodies kill their process groups, queued tasks never start.
    """

    name = "local"

    def run(self, tasks: Sequence[Task[Any]], jobs: int | None = None) -> list[TaskResult[Any]]:
        workers = max(1, min(jobs or len(tasks) or 1, len(tasks) or 1))
        if workers == 1:
            return [_call(t) for t in tasks]
        from harness.infra.futures import ThreadPoolExecutor
        from harness.probes.subproc import STOP

        pool = ThreadPoolExecutor(max_workers=workers)
        try:
            futures = [pool.submit(_call, t) for t in tasks]
            results = [f.result() for f in futures]
        except BaseException:
            STOP.set()  # running tasks kill their probe processes and clean their trees
            pool.shutdown(wait=True, cancel_futures=True)  # queued tasks never start
            STOP.clear()
            raise
        pool.shutdown(wait=True)
        return results

    def slots(self) -> int:
        return os.cpu_count() or 1

    def close(self) -> None:
        return None
