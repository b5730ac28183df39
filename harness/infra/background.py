"""One call run in a thread of its own, its answer (or its exception) taken where it is needed.

Lighter than ``concurrent.futures`` (which a warm run does not import): a daemon thread, joined by
``result``."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Background(Generic[T]):
    """``fn(*args)`` started now in a daemon thread; ``result`` waits for it and returns its answer,
    or raises what it raised."""

    def __init__(self, fn: Callable[..., T], *args: object) -> None:
        self._fn, self._args = fn, args
        self._answer: T | None = None
        self._failed: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self._answer = self._fn(*self._args)
        except BaseException as e:  # noqa: BLE001 - raised again by ``result``
            self._failed = e

    def result(self) -> T:
        self.thread.join()
        if self._failed is not None:
            raise self._failed
        return self._answer  # type: ignore[return-value]
