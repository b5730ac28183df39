"""One module per verb. Each defines NAME, HELP, add_arguments(parser) and run(args) -> int.

Modules are discovered, so adding a verb is adding a file.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType


def names() -> list[str]:
    """Verb names (a verb's module is named after it), without importing anything."""
    return sorted(i.name for i in pkgutil.iter_modules(__path__) if not i.name.startswith("_"))


def discover(only: str | None = None) -> list[ModuleType]:
    """Import the verb modules; ``only`` imports just that verb (start-up time matters in CI)."""
    mods = []
    for name in names():
        if only is not None and name != only:
            continue
        mod = importlib.import_module(f"{__name__}.{name}")
        if hasattr(mod, "NAME") and hasattr(mod, "run"):
            mods.append(mod)
    return mods
