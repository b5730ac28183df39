"""``bashlex`` imported with its parse tables kept: its yacc builds the LALR tables of the shell
grammar on every import (~0.1 CPU-s; the ``parsetab.py`` it ships is never read), so the tables
it built once are kept in the work area (private to the user, like the bytecode there), by the
grammar they were built from, and given back to it on later imports. A kept table that is not
well formed for that grammar (every shift and goto a state, every reduce a production) is built
again."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
import threading
import types
from pathlib import Path
from typing import Any

from harness.errors import HarnessError, UsageError
from harness.infra import workarea
from harness.infra.atomic import write_atomic

# One thread at a time: ``_yacc`` puts a stub package in ``sys.modules`` while it loads, and the
# real package is there before its ``__init__`` has run (its parser built).
_LOADING = threading.Lock()


def load() -> Any:
    """The ``bashlex`` module (imported once; its tables kept or built)."""
    with _LOADING:
        loaded = sys.modules.get("bashlex")
        if loaded is not None and hasattr(loaded, "parse"):
            return loaded
        spec = importlib.util.find_spec("bashlex")
        if spec is None or not spec.submodule_search_locations:
            import bashlex  # (raises as a plain import would)

            return bashlex
        yacc = _yacc(spec)
        if yacc is not None:
            yacc.LRTable = _kept_table(yacc.LRTable)
        import bashlex

        return bashlex


def _yacc(spec: Any) -> Any:
    """``bashlex.yacc`` (and the ``bashlex.utils`` it needs) loaded before the package, whose
    ``__init__`` builds the parser; None where that cannot be done (bashlex then builds as usual)."""
    folder = Path(next(iter(spec.submodule_search_locations)))
    stub = types.ModuleType("bashlex")
    stub.__path__ = [str(folder)]
    loaded: dict[str, types.ModuleType] = {}
    sys.modules["bashlex"] = stub
    try:
        for name in ("utils", "yacc"):
            sub = importlib.util.spec_from_file_location(f"bashlex.{name}", folder / f"{name}.py")
            if sub is None or sub.loader is None:
                break
            module = importlib.util.module_from_spec(sub)
            sys.modules[f"bashlex.{name}"] = module
            sub.loader.exec_module(module)
            loaded[name] = module
    except Exception:  # noqa: BLE001 - another bashlex: imported as it is
        loaded = {}
    finally:
        del sys.modules["bashlex"]  # the package itself is imported for real after
    yacc = loaded.get("yacc")
    if yacc is None or not hasattr(yacc, "LRTable"):
        for name in ("utils", "yacc"):  # nothing of the attempt stays
            sys.modules.pop(f"bashlex.{name}", None)
        return None
    return yacc


def _grammar_key(grammar: Any) -> str:
    text = json.dumps(
        [
            [p.str for p in grammar.Productions],
            sorted((k, list(v)) for k, v in grammar.Precedence.items()),
            grammar.Start if hasattr(grammar, "Start") else None,
        ]
    )
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _kept_table(base: Any) -> Any:
    class KeptTable(base):
        """An LR table read back where kept for this grammar; built (and kept) otherwise."""

        def __init__(self, grammar: Any, log: Any = None) -> None:
            try:
                path: Path | None = (
                    workarea.parsers_root() / f"bashlex-{_grammar_key(grammar)}.json"
                )
            except (HarnessError, UsageError, OSError):  # a work area refused: built as usual
                path = None
            kept = _read(path, len(grammar.Productions)) if path is not None else None
            if kept is None:
                super().__init__(grammar, log)
                if path is not None:
                    _write(path, self.__dict__["lr_action"], self.__dict__["lr_goto"])
                return
            self.__dict__.update(
                grammar=grammar,
                lr_productions=grammar.Productions,
                lr_action=kept[0],
                lr_goto=kept[1],
                lr_goto_cache={},
                lr0_cidhash={},
                sr_conflict=0,
                rr_conflict=0,
                conflicts=[],
                sr_conflicts=[],
                rr_conflicts=[],
            )

    return KeptTable


def _read(path: Path, productions: int) -> tuple[dict[int, Any], dict[int, Any]] | None:
    try:
        data = json.loads(path.read_bytes())
        action = {int(k): v for k, v in data["action"].items()}
        goto = {int(k): v for k, v in data["goto"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    states = len(action)
    if sorted(action) != list(range(states)) or not set(goto) <= set(action):
        return None
    for row in action.values():
        if not isinstance(row, dict) or not all(
            type(v) is int and (-productions < v < states) for v in row.values()
        ):
            return None
    for row in goto.values():
        if not isinstance(row, dict) or not all(
            type(v) is int and 0 <= v < states for v in row.values()
        ):
            return None
    return action, goto


def _write(path: Path, action: dict[int, Any], goto: dict[int, Any]) -> None:
    try:
        path.parent.mkdir(mode=0o700, exist_ok=True)
        write_atomic(path, json.dumps({"action": action, "goto": goto}), shared=False)
    except OSError:
        pass  # built again next time
