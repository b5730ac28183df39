"""``ray``: tasks on a Ray cluster (``--ray-address``, else ``RAY_ADDRESS``, else a local Ray for the run).

Each task's tree is packed once on the driver (``harness.executors.trees.pack_tree``) and put in
the object store; the remote function unpacks it on the worker. A worker that dies mid-task is
retried by Ray (``MAX_RETRIES``); past that the result is ``lost``. A task past ``Task.timeout`` is
cancelled and its result is ``timeout``. An interrupt (Ctrl-C, SIGTERM) cancels every remote task:
first gently (a ``KeyboardInterrupt`` in the task, so bodies kill their process groups), then by
force for those still running after ``CANCEL_GRACE`` seconds.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import socket
import threading
import time
from collections.abc import Sequence
from typing import Any

from harness.errors import HarnessError, UsageError
from harness.executors.base import Task, TaskResult
from harness.executors.trees import PackedTree, pack_tree

MAX_RETRIES = 2
CANCEL_GRACE = 5.0
POLL = 0.2


def available() -> bool:
    """Whether ray can be imported here (without importing it: that takes a second)."""
    try:
        return importlib.util.find_spec("ray") is not None
    except (ImportError, ValueError):
        return False


def _execute(fn: Any, meta: PackedTree | None, data: bytes | None, *args: Any) -> Any:
    """The remote function: the packed tree's bytes arrive resolved from the object store. The
    worker's run folder and its lock go with the task: Ray ends idle workers without running their
    exit handlers, which left the folders to the next run."""
    from harness.infra import workarea

    try:
        if meta is not None:
            meta.data = data or b""
        return fn(meta, *args)
    finally:
        workarea.end_run()


def _check_reachable(address: str) -> None:
    """A ``host:port`` nobody answers on is bad input, said before any work (``ray.init`` would wait
    minutes); ``auto`` and ``ray://`` addresses are left to Ray."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "://" in address or not host:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except OSError as exc:
        raise UsageError(
            f"--ray-address {address}: no Ray cluster answers there "
            f"({exc.strerror or type(exc).__name__})"
        ) from None


class _NotTokenNotice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Token authentication is enabled")


def start_local(num_cpus: int, object_store_mb: int, attempts: int = 3) -> Any:
    """A local Ray for this process (no dashboard, loopback only: 127.0.0.1). Ray gives its raylet
    30 s to register; on a loaded machine that can pass, so the start is tried ``attempts`` times."""
    # A single-machine cluster stays on the loopback interface: Ray otherwise binds the node to the
    # machine's network address. Read by ray at import, and inherited by its workers.
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    import ray
    from ray._private import ray_constants

    ray_constants.ENABLE_RAY_CLUSTER = False  # ray may have been imported before this call
    # Ray turns token authentication on for a new local cluster and says so in a WARNING line on
    # stderr; the protection stays, the line (not the harness's to print) goes.
    logging.getLogger("ray._private.authentication.authentication_token_setup").addFilter(
        _NotTokenNotice()
    )

    for attempt in range(1, attempts + 1):
        try:
            return ray.init(
                address="local",
                num_cpus=num_cpus,
                include_dashboard=False,
                object_store_memory=object_store_mb * 1024 * 1024,
                log_to_driver=False,
                logging_level=logging.WARNING,
            )
        except Exception as exc:  # noqa: BLE001 - Ray raises a bare Exception for a slow start
            ray.shutdown()
            if attempt == attempts:
                raise HarnessError(f"a local Ray did not start ({attempts} tries): {exc}") from None
    raise AssertionError("unreachable")


class RayExecutor:
    """Runs tasks on Ray; connects lazily, so a run whose cells all come from the cache never does."""

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        *,
        num_cpus: int | None = None,
        object_store_mb: int = 500,
        retries: int = MAX_RETRIES,
    ) -> None:
        if not available():
            raise UsageError("--executor ray needs ray: pip install 'harness[ray]'")
        self.address = address or os.environ.get("RAY_ADDRESS") or None
        if self.address:
            _check_reachable(self.address)
        self.num_cpus = num_cpus
        self.object_store_mb = object_store_mb
        # The tests section runs its columns, hunks, pins and lanes from four threads: the first
        # calls must not each start (or join) a cluster.
        self._connecting = threading.Lock()
        self.retries = retries
        self.submitted = 0  # remote tasks submitted by this executor (a warm re-run submits none)
        self._owns = False
        self._remote: Any = None

    def _connect(self) -> Any:
        import ray

        with self._connecting:
            return self._connected(ray)

    def _connected(self, ray: Any) -> Any:
        if self._remote is not None:
            return ray
        if not ray.is_initialized():
            quiet: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.WARNING}
            if self.address:
                ray.init(address=self.address, **quiet)
            else:
                start_local(self.num_cpus or os.cpu_count() or 1, self.object_store_mb)
            self._owns = True
        self._remote = ray.remote(_execute)
        return ray

    def run(self, tasks: Sequence[Task[Any]], jobs: int | None = None) -> list[TaskResult[Any]]:
        if not tasks:
            return []
        ray = self._connect()
        shipped: dict[str, tuple[PackedTree, Any]] = {}
        for t in tasks:
            if t.tree is not None and (t.tree.key or t.key) not in shipped:
                packed = pack_tree(t.tree)
                shipped[t.tree.key or t.key] = (packed.meta(), ray.put(packed.data))
        offered = ray.cluster_resources()
        limit = jobs or max(1, int(offered.get("CPU", 1)))
        queue = list(range(len(tasks)))
        running: dict[Any, tuple[int, float]] = {}
        results: list[TaskResult[Any] | None] = [None] * len(tasks)
        try:
            while queue or running:
                while queue and len(running) < limit:
                    i = queue.pop(0)
                    running[self._submit(tasks[i], shipped, offered)] = (i, time.monotonic())
                ready, _ = ray.wait(list(running), num_returns=1, timeout=POLL)
                for ref in ready:
                    i, _started = running.pop(ref)
                    results[i] = self._collect(ray, ref)
                now = time.monotonic()
                for ref, (i, started) in list(running.items()):
                    t = tasks[i]
                    if t.timeout is not None and now - started > t.timeout:
                        del running[ref]
                        self._cancel(ray, [ref])
                        results[i] = TaskResult(
                            "timeout",
                            None,
                            f"{t.label or 'task'}: ran past "
                            f"{t.timeout:g}s on the ray executor (cancelled)",
                        )
        except BaseException:
            self._cancel(ray, list(running))
            raise
        return [r if r is not None else TaskResult("lost", None, "no result") for r in results]

    def slots(self) -> int:
        return max(1, int(self._connect().cluster_resources().get("CPU", 1)))

    def _submit(
        self, t: Task[Any], shipped: dict[str, tuple[PackedTree, Any]], offered: dict[str, float]
    ) -> Any:
        opts: dict[str, Any] = {
            "num_cpus": 1,
            "max_retries": self.retries,
            "retry_exceptions": False,
        }
        # Resources are asked for where the cluster offers them (a label per engine version, GPUs);
        # a cluster without them runs the task anywhere and the kind says what was missing.
        if t.resources.num_gpus and offered.get("GPU", 0) >= t.resources.num_gpus:
            opts["num_gpus"] = t.resources.num_gpus
        custom = {k: v for k, v in t.resources.custom if offered.get(k, 0) >= v}
        if custom:
            opts["resources"] = custom
        meta, data = (
            shipped.get(t.tree.key or t.key, (None, None)) if t.tree is not None else (None, None)
        )
        self.submitted += 1
        return self._remote.options(**opts).remote(t.fn, meta, data, *t.args)

    def _collect(self, ray: Any, ref: Any) -> TaskResult[Any]:
        try:
            return TaskResult("ok", ray.get(ref))
        except ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, Exception):
                raise cause from None  # the body's own error (e.g. a usage error), as if run here
            raise
        except ray.exceptions.RayError as exc:  # worker or node died past the retry bound
            return TaskResult(
                "lost", None, f"worker lost {self.retries + 1} time(s): {type(exc).__name__}"
            )

    def _cancel(self, ray: Any, refs: list[Any]) -> None:
        """Cancel ``refs``: a KeyboardInterrupt in each task first, then force for the stubborn."""
        for ref in refs:
            try:
                ray.cancel(ref, force=False)
            except Exception:  # noqa: BLE001 - already finished or gone
                pass
        left = list(refs)
        deadline = time.monotonic() + CANCEL_GRACE
        while left and time.monotonic() < deadline:
            _ready, left = ray.wait(left, num_returns=len(left), timeout=POLL)
        for ref in left:
            try:
                ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001
                pass

    def close(self) -> None:
        if self._owns:
            import ray

            ray.shutdown()
            self._owns = False
        self._remote = None
