"""STAND-IN for a package whose names the engine path uses as types (xgrammar in the gpu bundle).

Installed as ``<package>/__init__.py`` by a ``harness-standin-<package>`` wheel, never beside the
real package. Every name and submodule resolves to a stub CLASS (not an instance, unlike
``sgl_kernel_standin.py``), so module-level code that annotates with it, subclasses it, or puts it
in a ``typing.Union`` or a pydantic model still imports (pydantic treats it as ``Any``); creating
one, calling one or calling anything on one raises ``NotImplementedError``, so a use shows up as
an error, never as a silently wrong answer. With xgrammar stood in, the engine runs with
``grammar_backend="none"``.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types

__version__ = "0.0.0+harness.standin"
HARNESS_STANDIN = True


def _raise(name: str):
    def stub(*args, **kwargs):
        raise NotImplementedError(
            f"{name} is a harness stand-in (the real package is not installed)"
        )

    return stub


class _StubMeta(type):
    def __getattr__(cls, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _raise(f"{cls.__qualname__}.{attr}")

    def __call__(cls, *args, **kwargs):
        raise NotImplementedError(
            f"{cls.__qualname__} is a harness stand-in (the real package is not installed)"
        )

    def __bool__(cls) -> bool:
        return False


def _pydantic_any(cls, source, handler):
    from pydantic_core import core_schema

    return core_schema.any_schema()


def stub_class(qualname: str) -> type:
    """A class named ``qualname`` that pydantic accepts as Any and that raises when used."""
    return _StubMeta(
        qualname.rsplit(".", 1)[-1],
        (),
        {
            "__qualname__": qualname,
            "__module__": qualname.rsplit(".", 1)[0],
            "__get_pydantic_core_schema__": classmethod(_pydantic_any),
            "HARNESS_STANDIN": True,
        },
    )


class _StubModule(types.ModuleType):
    HARNESS_STANDIN = True

    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        value = stub_class(f"{self.__name__}.{attr}")
        setattr(self, attr, value)
        return value


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith(__name__ + "."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        mod = _StubModule(spec.name)
        mod.__path__ = []
        return mod

    def exec_module(self, module):
        pass


sys.meta_path.append(_Finder())
_cache: dict[str, type] = {}


def __getattr__(attr: str):
    if attr.startswith("__"):
        raise AttributeError(attr)
    if attr not in _cache:
        _cache[attr] = stub_class(f"{__name__}.{attr}")
    return _cache[attr]
