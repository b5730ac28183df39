"""Test runners, by name; each module is imported when a section needs it."""

from __future__ import annotations

import importlib
from typing import cast

from harness.checks.fix_tests.runners.base import TestRunner

NAMES = ("pytest", "cargo", "go")
_MODULES = {"pytest": "pytest_runner", "cargo": "cargo_runner", "go": "go_runner"}


def get_runner(name: str) -> TestRunner:
    """The runner module named ``name`` (one of ``NAMES``)."""
    module = importlib.import_module(f"{__name__}.{_MODULES[name]}")
    return cast(TestRunner, module)
