"""One module per verb. Each defines NAME, HELP, add_arguments(parser) and run(args) -> int.

Modules are discovered, so adding a verb is adding a file.
"""

from __future__ import annotations

import importlib
import os
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType

_HERE = os.path.dirname(__file__)
# A top-level ``HELP = …`` (not ``HELP: str = …`` nor ``HELP == …``): where a verb's summary starts.
_HELP_LINE = re.compile(r"^HELP\s*=(?!=)", re.MULTILINE)
_MAX_HELP_LINES = 40  # a summary's statement longer than this is not read (the verb lists blank)


def names() -> list[str]:
    """Verb names (a verb is a ``<name>.py`` file here, named after it), without importing anything
    (pkgutil would import inspect and typing: a third of ``harness --help``)."""
    return sorted(
        stem
        for stem, ext in (os.path.splitext(f) for f in os.listdir(_HERE))
        if ext == ".py" and stem.isidentifier() and not stem.startswith("_")
    )


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
    must not pay for every verb's imports), and only the HELP statement of each parsed (a whole
    module's syntax tree costs more than the rest of ``--help``)."""
    out = {}
    for name in names():
        with open(os.path.join(_HERE, f"{name}.py"), encoding="utf-8") as f:
            source = f.read()
        for match in _HELP_LINE.finditer(source):  # the last assignment wins, as at import
            text = _help_text(source[match.start() :])
            if text is not None:
                out[name] = text
    return out


def _help_text(source: str) -> str | None:
    """The value of the ``HELP = …`` statement ``source`` starts with: its literal text, "" for an
    expression that is not a literal, None where it is not a plain string expression."""
    import ast  # (only the verb list reads a source)

    lines = source.splitlines(keepends=True)[:_MAX_HELP_LINES]
    for end in range(1, len(lines) + 1):
        try:
            tree = ast.parse("".join(lines[:end]))
        except SyntaxError:
            continue  # the statement goes on over the next line
        node = tree.body[0] if tree.body else None
        if not isinstance(node, ast.Assign) or not isinstance(
            node.value, (ast.Constant, ast.JoinedStr, ast.BinOp)
        ):
            return None
        try:
            return str(ast.literal_eval(node.value))
        except ValueError:
            return ""
    return None
