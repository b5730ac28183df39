"""A lane's pytest ``-m`` expression checked with pytest's own parser, without importing pytest's
plugin machinery (nor the workflow reading of ``lanes``): what validating a ``-m`` option needs."""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

# $NAME, ${NAME}, ${NAME:-default}, $1: a shell variable CI fills in (gha_shell reads the same forms)
SHELL_PARAM = re.compile(
    r"\$\{([A-Za-z_][A-Za-z0-9_]*|[0-9])(?:(:?[-=])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*|[0-9])"
)


def filled_in_by_ci(expr: str) -> bool:
    """The expression is known only when CI runs (``${{ … }}`` left unexpanded, or a shell ``$VAR``)."""
    return "${{" in expr or bool(SHELL_PARAM.search(expr))


@functools.cache
def _pytest_expression() -> Any:
    """pytest's own ``-m`` parser. Its module needs only the standard library, so it is loaded on
    its own: importing ``_pytest.mark`` would bring pytest's plugin machinery (~30 ms) into every
    run that validates a lane."""
    spec = importlib.util.find_spec("_pytest")
    where = spec.submodule_search_locations if spec else None
    if where:
        path = Path(list(where)[0]) / "mark" / "expression.py"
        alone = importlib.util.spec_from_file_location("_harness_pytest_expression", path)
        if alone is not None and alone.loader is not None and path.is_file():
            module = importlib.util.module_from_spec(alone)
            sys.modules[alone.name] = module  # dataclasses look their module up while defining
            try:
                alone.loader.exec_module(module)
                return module.Expression
            except Exception:  # a later pytest whose parser needs more: import it as usual
                sys.modules.pop(alone.name, None)
    try:
        from _pytest.mark.expression import Expression
    except ImportError:
        return None
    return Expression


def expression_error(expr: str) -> str | None:
    """Why ``expr`` is not a valid ``pytest -m`` expression (None when valid or not checkable)."""
    if filled_in_by_ci(expr) or not expr:
        return None
    Expression = _pytest_expression()
    if Expression is None:  # pragma: no cover - pytest absent
        return None
    try:
        Expression.compile(expr)
    except Exception as exc:  # ParseError before pytest 9, SyntaxError since
        return str(exc).split(" (<pytest match expression>")[0]
    return None
