"""Start-up: ``dataclasses`` without ``inspect``. CPython's ``dataclasses`` imports ``inspect``
(with ``ast``, ``dis`` and ``tokenize``: ~4 ms of every run's start here) and, on CPython 3.11,
uses it only to write the signature of a class that has no docstring into its ``__doc__``. The
command line imports ``dataclasses`` first with a stand-in for ``inspect`` that imports the real
module at its first use; every later ``import inspect`` gets the real module."""

from __future__ import annotations

import importlib
import operator
import sys
import types

TYPE_CHECKING = False  # (``typing`` not imported here: ``harness --help`` loads this module)
if TYPE_CHECKING:
    import re
    from typing import Any, AnyStr


class _Deferred(types.ModuleType):
    """``inspect`` as ``dataclasses`` holds it: the real module, imported at the first use."""

    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module("inspect"), name)


def dataclasses_without_inspect() -> None:
    """Import ``dataclasses`` now, its ``inspect`` deferred (nothing where either is loaded)."""
    _import_with_stand_in("dataclasses", _Deferred("inspect"))


def _import_with_stand_in(module: str, stand_in: types.ModuleType) -> None:
    """Import ``module`` with ``stand_in`` as the module of its name, for that import alone
    (nothing where either is loaded already): every later import gets the real one."""
    name = stand_in.__name__
    if module in sys.modules or name in sys.modules:
        return
    sys.modules[name] = stand_in
    try:
        importlib.import_module(module)
    finally:
        if sys.modules.get(name) is stand_in:
            del sys.modules[name]


def dataclass_methods_uncompiled() -> None:
    """Dataclasses' ``__repr__``, comparisons, ``__hash__`` and a frozen class's ``__setattr__``
    and ``__delattr__`` made as closures over the field names, not compiled from source text:
    CPython 3.11/3.12's ``dataclasses`` compiles each (~60 µs a function, ~3.5 ms of the ~100
    functions a fidelity run's classes get); ``__init__``, called for every object, stays
    compiled. Each closure does what the compiled text does (tests/infra/test_lean.py holds them
    to it); where ``dataclasses`` is not the one this was written for, nothing changes."""
    import dataclasses

    if getattr(dataclasses, "_harness_lean", False) or not _known(dataclasses):
        return
    recursive_repr = dataclasses._recursive_repr  # type: ignore[attr-defined]
    frozen_error = dataclasses.FrozenInstanceError

    def repr_fn(fields: Any, globals: Any) -> Any:
        names = tuple(f.name for f in fields)

        def __repr__(self: Any) -> str:
            shown = ", ".join([f"{n}={getattr(self, n)!r}" for n in names])
            return f"{self.__class__.__qualname__}({shown})"

        return recursive_repr(__repr__)

    def cmp_fn(name: str, op: str, self_tuple: str, other_tuple: str, globals: Any) -> Any:
        compare = _OPS[op]
        values = _values(_names(self_tuple))

        def fn(self: Any, other: Any) -> Any:
            if other.__class__ is self.__class__:
                return compare(values(self), values(other))
            return NotImplemented

        fn.__name__ = name
        return fn

    def hash_fn(fields: Any, globals: Any) -> Any:
        values = _values(tuple(f.name for f in fields))

        def __hash__(self: Any) -> int:
            return hash(values(self))

        return __hash__

    def frozen_get_del_attr(cls: Any, fields: Any, globals: Any) -> tuple[Any, Any]:
        names = tuple(f.name for f in fields)

        def __setattr__(self: Any, name: str, value: Any) -> None:
            if type(self) is cls or name in names:
                raise frozen_error(f"cannot assign to field {name!r}")
            super(cls, self).__setattr__(name, value)

        def __delattr__(self: Any, name: str) -> None:
            if type(self) is cls or name in names:
                raise frozen_error(f"cannot delete field {name!r}")
            super(cls, self).__delattr__(name)

        return __setattr__, __delattr__

    dataclasses._repr_fn = repr_fn  # type: ignore[attr-defined]
    dataclasses._cmp_fn = cmp_fn  # type: ignore[attr-defined]
    dataclasses._hash_fn = hash_fn  # type: ignore[attr-defined]
    dataclasses._frozen_get_del_attr = frozen_get_del_attr  # type: ignore[attr-defined]
    dataclasses._harness_lean = True  # type: ignore[attr-defined]


_OPS = {
    "==": operator.eq,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def _known(dataclasses: Any) -> bool:
    """Whether ``dataclasses`` builds these methods as 3.11 and 3.12 do (the functions replaced,
    by their parameters, and ``_tuple_str`` writing ``(self.a,self.b,)``)."""
    want = {
        "_repr_fn": ("fields", "globals"),
        "_cmp_fn": ("name", "op", "self_tuple", "other_tuple", "globals"),
        "_hash_fn": ("fields", "globals"),
        "_frozen_get_del_attr": ("cls", "fields", "globals"),
    }
    for name, params in want.items():
        fn = getattr(dataclasses, name, None)
        code = getattr(fn, "__code__", None)
        if code is None or code.co_varnames[: code.co_argcount] != params:
            return False
    tuple_str = getattr(dataclasses, "_tuple_str", None)
    if tuple_str is None or not hasattr(dataclasses, "_recursive_repr"):
        return False
    field = types.SimpleNamespace(name="a")
    return bool(
        tuple_str("self", [field, field]) == "(self.a,self.a,)" and tuple_str("self", []) == "()"
    )


def _names(self_tuple: str) -> tuple[str, ...]:
    """The field names of ``_tuple_str("self", fields)``: ``(self.a,self.b,)`` → ("a", "b")."""
    if self_tuple == "()":
        return ()
    return tuple(x[len("self.") :] for x in self_tuple[1:-2].split(","))


def _values(names: tuple[str, ...]) -> Any:
    """A function giving an object's ``names`` as a tuple (what ``(self.a,self.b,)`` is)."""
    if not names:
        return lambda obj: ()
    get = operator.attrgetter(*names)
    if len(names) == 1:
        return lambda obj: (get(obj),)
    return get


class _LazyLogger:
    """``logging.getLogger(name)``, looked up (``logging`` imported then) at its first use."""

    def __init__(self, name: str | None) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        import logging

        return getattr(logging.getLogger(self._name), attr)


class _LoggingStandIn(types.ModuleType):
    """``logging`` as ``concurrent.futures`` holds it: ``getLogger`` gives a ``_LazyLogger``,
    anything else is the real module's."""

    def getLogger(self, name: str | None = None) -> Any:  # noqa: N802 - (logging's name)
        return _LazyLogger(name)

    def __getattr__(self, name: str) -> Any:
        if sys.modules.get("logging") is self:
            del sys.modules["logging"]
        return getattr(importlib.import_module("logging"), name)


def futures_without_logging() -> None:
    """Import ``concurrent.futures`` (with its thread pool) now, ``logging`` deferred: it imports
    ``logging`` (with ``traceback``, ``string``, ``tokenize``: ~4 ms here) only to log a callback
    or worker that raised, through one module-level logger, which is looked up at its first use.
    Nothing where either is loaded; every later ``import logging`` gets the real module."""
    if "concurrent.futures" not in sys.modules:
        _import_with_stand_in("concurrent.futures.thread", _LoggingStandIn("logging"))


class _LazyPattern:
    """``re.compile(pattern, flags)`` at its first use: its methods and attributes are then the
    compiled pattern's own (set on this object: no lookup through here again)."""

    def __init__(self, pattern: Any, flags: int) -> None:
        self._args = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        import re

        compiled = re.compile(*self._args)
        for attr in _PATTERN_ATTRS:
            setattr(self, attr, getattr(compiled, attr))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy_re({self._args[0]!r}, {self._args[1]})"


_PATTERN_ATTRS = (
    "search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer",
    "pattern", "flags", "groups", "groupindex",
)  # fmt: skip


def lazy_re(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """A module's pattern compiled at its first use, not at import: most runs use few of the
    patterns their modules hold (compiling one costs ~50-300 µs)."""
    return _LazyPattern(pattern, flags)  # type: ignore[return-value]
