"""Start-up: ``dataclasses`` without ``inspect``. CPython's ``dataclasses`` imports ``inspect``
(with ``ast``, ``dis`` and ``tokenize``: ~4 ms of every run's start here) and, on CPython 3.11,
uses it only to write the signature of a class that has no docstring into its ``__doc__``. The
command line imports ``dataclasses`` first with a stand-in for ``inspect`` that imports the real
module at its first use; every later ``import inspect`` gets the real module."""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any


class _Deferred(types.ModuleType):
    """``inspect`` as ``dataclasses`` holds it: the real module, imported at the first use."""

    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module("inspect"), name)


def dataclasses_without_inspect() -> None:
    """Import ``dataclasses`` now, its ``inspect`` deferred (nothing where either is loaded)."""
    if "dataclasses" in sys.modules or "inspect" in sys.modules:
        return
    sys.modules["inspect"] = _Deferred("inspect")
    try:
        import dataclasses  # noqa: F401
    finally:
        if isinstance(sys.modules.get("inspect"), _Deferred):
            del sys.modules["inspect"]
