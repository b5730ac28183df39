"""One module per verb. Each defines NAME, HELP, add_arguments(parser) and run(args) -> int.

Modules are discovered, so adding a verb is adding a file.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
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


def summaries() -> dict[str, str]:
    """Verb → its HELP line, read from the module sources without importing them (``harness --help``
    must not pay for every verb's imports)."""
    import ast  # (only the verb list reads a source)

    out = {}
    for name in names():
        tree = ast.parse((Path(__file__).parent / f"{name}.py").read_text(encoding="utf-8"))
        for node in tree.body:
            if (
                isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "HELP" for t in node.targets)
                and isinstance(node.value, (ast.Constant, ast.JoinedStr, ast.BinOp))
            ):
                try:
                    out[name] = str(ast.literal_eval(node.value))
                except ValueError:
                    out[name] = ""
    return out
