"""STAND-IN for the ``sgl_kernel`` package (PyPI's sglang-kernel ships CUDA builds only).

Installed as ``sgl_kernel/__init__.py`` into a harness ``cpu`` engine environment, never into a
real one; the ``gpu`` bundle ships it (and, for ``flashinfer``, the same file) as a
``harness-standin-*`` wheel when the real wheel does not fit (standin_wheel.py).
On the CPU path (device="cpu", attention_backend="torch_native", sampling_backend="pytorch")
sglang imports names from sgl_kernel but does not call them; every name and submodule here resolves
to a stub that raises if it is ever called, so a call would show up as an error, never as a
silently wrong answer.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types

__version__ = "0.0.0+harness.standin"
HARNESS_STANDIN = True


class _Stub:
    def __init__(self, name: str) -> None:
        self._name = name

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(
            f"{self._name} is a harness stand-in (the real package is not installed)"
        )

    def __getattr__(self, attr: str) -> _Stub:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Stub(f"{self._name}.{attr}")

    def __bool__(self) -> bool:
        return False


class _StubModule(types.ModuleType):
    HARNESS_STANDIN = True

    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Stub(f"{self.__name__}.{attr}")


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


def __getattr__(attr: str):
    if attr.startswith("__"):
        raise AttributeError(attr)
    return _Stub(f"{__name__}.{attr}")
