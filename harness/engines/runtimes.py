"""The registry of engine runtimes, by name (each a module that satisfies ``Runtime``)."""

from __future__ import annotations

from harness.engines import cpu_runtime, gpu_runtime, params_runtime
from harness.engines.runtime import Runtime

RUNTIMES: dict[str, Runtime] = {m.NAME: m for m in (params_runtime, cpu_runtime, gpu_runtime)}


def get_runtime(name: str) -> Runtime | None:
    return RUNTIMES.get(name)
