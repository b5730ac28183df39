"""What an engine runtime is: a module with a ``NAME`` and a ``build`` that makes the environment
for one engine version in a folder and returns its manifest. ``harness/engines/runtimes.py`` is the
registry; ``sglang.ensure_env`` looks a runtime up there by name."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from harness.engines.sglang_env import Log


class Runtime(Protocol):
    """One way to build an engine environment (``params``, ``cpu``, ``gpu``)."""

    NAME: str

    def build(
        self, version: str, path: Path, log: Log, bundle: Path | None = None
    ) -> dict[str, Any]:
        """Build the environment for ``version`` at ``path``; return its manifest. ``bundle``: an
        offline ``harness engine bundle`` folder, for the runtimes that take one."""
        ...
