"""A small package whose change touches three functions (one method), with tests that kill some
of their mutants and not others: the repository the mutmut sweep tests build."""

from __future__ import annotations

BASE = """\
def clamp(x, lo, hi):
    if x < lo:
        return lo
    return x


def untouched(a, b):
    return a + b


class Box:
    def area(self, w, h):
        return w * h
"""

HEAD = (
    BASE.replace("    return x\n", "    if x > hi:\n        return hi\n    return x\n").replace(
        "return w * h", "return w * h + 0"
    )
    + "\n\ndef scale(x):\n    return x * 2\n"
)

TESTS = """\
from pkg.calc import Box, clamp, untouched

try:
    from pkg.calc import scale
except ImportError:  # the base has no scale yet
    scale = None


def test_clamp():
    assert clamp(-1, 0, 10) == 0
    assert clamp(5, 0, 10) == 5


def test_untouched():
    assert untouched(1, 2) == 3


def test_scale():
    if scale is not None:
        assert scale(3) == 6


def test_area_runs():
    Box().area(2, 3)
"""
