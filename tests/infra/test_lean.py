"""infra/lean.py's dataclass methods made as closures: the same ``repr``, comparisons, hash and
frozen errors as the methods CPython compiles, class by class (the harness's own and odd ones)."""

from __future__ import annotations

import subprocess
import sys

_PROBE = r"""
import dataclasses, json, sys
from harness.infra import lean
if sys.argv[1] == "lean":
    lean.dataclass_methods_uncompiled()
    assert dataclasses._harness_lean
from dataclasses import dataclass, field

@dataclass(order=True)
class Point:
    x: int
    y: object = None

@dataclass(frozen=True)
class Frozen:
    a: str
    b: tuple = ()

@dataclass(frozen=True)
class Empty:
    pass

@dataclass(eq=True, unsafe_hash=True)
class One:
    v: float

@dataclass
class Node:
    name: str
    child: object = None
    hidden: int = field(default=0, repr=False, compare=False)

class Sub(Frozen):
    pass

out = []
def note(f):
    try:
        out.append(repr(f()))
    except Exception as e:
        out.append(f"{type(e).__name__}: {e}")

nan = float("nan")
n = Node("a"); n.child = n  # recursion
pairs = [(Point(1, 2), Point(1, 3)), (Point(1, nan), Point(1, nan)), (Point(2), Point(1, 9))]
for a, b in pairs:
    for op in ("__eq__", "__lt__", "__le__", "__gt__", "__ge__"):
        note(lambda: getattr(a, op)(b))
    note(lambda: a == 3)
    note(lambda: repr(a))
p = Point(1, nan)
note(lambda: p == p)
fz, e1, e2 = Frozen("q", (1,)), Empty(), Empty()
for f in (lambda: fz, lambda: hash(fz) == hash(Frozen("q", (1,))), lambda: e1 == e2,
          lambda: hash(e1) == hash(()), lambda: setattr(fz, "a", 1), lambda: setattr(fz, "z", 1),
          lambda: delattr(fz, "a"), lambda: delattr(fz, "z"), lambda: Sub("s") == Sub("s"),
          lambda: Sub("s") == Frozen("s"), lambda: repr(Sub("s")), lambda: hash(One(2.5)) == hash((2.5,)),
          lambda: One(1.0) == One(1), lambda: n, lambda: Node("b", hidden=3) == Node("b"),
          lambda: Point.__eq__.__qualname__, lambda: Frozen.__setattr__.__qualname__,
          lambda: Point.__repr__.__name__, lambda: Point.__lt__.__name__):
    note(f)
fs = Sub("t")
note(lambda: setattr(fs, "new", 1))
note(lambda: fs.new)
print(json.dumps(out))
"""


def _probe(mode: str) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, mode], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    import json

    return json.loads(proc.stdout)


def test_closures_behave_as_the_compiled_methods():
    compiled, closures = _probe("plain"), _probe("lean")
    assert len(compiled) > 40
    assert closures == compiled


def test_a_verb_run_makes_its_dataclasses_with_the_closures(tmp_path):
    """The command line (a verb named) applies it before the verb's modules define theirs."""
    probe = (
        "import sys; from harness.cli import main; main(['cache', 'info']); "
        "from harness.report.model import Table; import dataclasses; "
        "print(dataclasses._harness_lean, Table.__eq__.__code__.co_filename.endswith('lean.py'))"
    )
    import os

    env = {**os.environ, "HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, env=env
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[-2:] == ["True", "True"]


_FUTURES = r"""
import sys
from harness.infra.futures import Future, ThreadPoolExecutor
assert "logging" not in sys.modules, "logging imported with concurrent.futures"
with ThreadPoolExecutor(2) as pool:
    assert pool.submit(pow, 2, 10).result() == 1024
f = Future()
def bad(_):
    raise RuntimeError("a callback that raises")
f.add_done_callback(bad)
f.set_result(1)  # logged by concurrent.futures' logger: logging is imported now, for real
import logging, logging.handlers
assert type(logging).__name__ == "module" and logging.handlers.RotatingFileHandler
assert sys.modules["concurrent.futures._base"].LOGGER.name == "concurrent.futures"
print("ok")
"""


def test_concurrent_futures_without_logging_until_something_is_logged():
    """``infra/futures.py``: the pool works without ``logging``; a callback that raises is
    logged as ``concurrent.futures`` logs it (the message on stderr), with the real module."""
    proc = subprocess.run(
        [sys.executable, "-c", _FUTURES], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
    assert "exception calling callback for <Future" in proc.stderr
    assert "RuntimeError: a callback that raises" in proc.stderr


def test_a_lazy_pattern_is_compiled_at_its_first_use_and_behaves_as_compiled(monkeypatch):
    import re

    from harness.infra import lean

    compiled: list[object] = []
    real = re.compile

    def counting(*args):
        compiled.append(args)
        return real(*args)

    monkeypatch.setattr(re, "compile", counting)
    lazy = lean.lazy_re(r"(\d+)-(?P<b>x)", re.IGNORECASE)
    assert compiled == []  # (nothing compiled at definition)
    plain = real(r"(\d+)-(?P<b>x)", re.IGNORECASE)
    for text in ("12-X 3-x", "none", "7-x"):
        assert lazy.findall(text) == plain.findall(text)
        assert lazy.sub("#", text) == plain.sub("#", text)
        assert bool(lazy.search(text)) == bool(plain.search(text))
    assert (lazy.pattern, lazy.flags, lazy.groups, lazy.groupindex) == (
        plain.pattern,
        plain.flags,
        plain.groups,
        plain.groupindex,
    )
    assert len(compiled) == 1 and "search" in vars(lazy)  # compiled once, then held
    assert lean.lazy_re(rb"a+").match(b"aaa").group(0) == b"aaa"  # (bytes patterns too)
