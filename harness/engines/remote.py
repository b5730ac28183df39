"""Engine work as executor tasks: where an engine check runs, its environment is built and cached."""

from __future__ import annotations

from typing import Any

from harness.engines.params import ParamsRun, check_params
from harness.engines.store import EngineStore
from harness.executors import Resources, Task
from harness.infra.cache import content_key


def engine_label(version: str, engine: str = "sglang") -> str:
    """The Ray resource a node offers when it keeps (or may build) this engine version: ``sglang-0.5.3``."""
    return f"{engine}-{version}"


def check_params_task(
    tree: Any, version: str, cases: list[dict[str, Any]], vocab: int
) -> ParamsRun:
    """``check_params`` in the engine store of the machine that runs it (built there when missing)."""
    return check_params(version, cases, vocab=vocab, store=EngineStore())


def check_task(version: str, cases: list[dict[str, Any]], vocab: int) -> Task[ParamsRun]:
    return Task(
        content_key("engine-check", version, cases, vocab),
        check_params_task,
        None,
        (version, cases, vocab),
        Resources(0, ((engine_label(version), 1.0),)),
        timeout=3600,
        label=f"engine check sglang=={version}",
    )
