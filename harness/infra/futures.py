"""``concurrent.futures`` as the harness imports it: without ``logging`` until a callback or a
worker raises (infra/lean.py, ~4 ms of a run's start)."""

from __future__ import annotations

from harness.infra.lean import futures_without_logging

futures_without_logging()

from concurrent.futures import Future, ThreadPoolExecutor, wait  # noqa: E402

__all__ = ["Future", "ThreadPoolExecutor", "wait"]
