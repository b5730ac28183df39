"""The tests section's options, shared by ``compare`` and ``tests``."""

from __future__ import annotations

import argparse
import math


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    if not math.isfinite(value):  # a deadline past the clock's range: an internal error later
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds: {text!r}")
    return value


def _constraints(text: str) -> tuple[str, ...]:
    """A constraints file's pins (pip's ``-c``: ``name==version`` lines), read now: a file that
    cannot be read is the command line's error."""
    try:
        with open(text, encoding="utf-8") as fh:
            data = fh.read(1 << 20)
    except (OSError, UnicodeDecodeError) as exc:
        raise argparse.ArgumentTypeError(
            f"{text}: {getattr(exc, 'strerror', None) or exc}"
        ) from None
    lines = (ln.split("#", 1)[0].strip() for ln in data.splitlines())
    return tuple(ln for ln in lines if ln and not ln.startswith("-") and ln.isprintable())


def add_tests_arguments(p: argparse.ArgumentParser, *, verb: bool = False) -> None:
    if not verb:
        p.add_argument(
            "--no-tests",
            action="store_true",
            help="do not run the tests the picks and their sources change (the tests section)",
        )
    p.add_argument(
        "--test-timeout",
        type=_positive,
        default=600.0,
        metavar="SECONDS",
        help="tests section: wall-clock limit of one column's run (default 600)",
    )
    p.add_argument(
        "--test-setup",
        action="append",
        default=[],
        metavar="CMD",
        help="tests section: a build step run in each tree first, e.g. compiling extensions "
        "(repeatable)",
    )
    p.add_argument(
        "--test-constraints",
        type=_constraints,
        default=(),
        metavar="FILE",
        help="tests section: a constraints file (pip's -c) its environments are built under, e.g. "
        "the project's CI pins (OpenStack's upper-constraints, downloaded)",
    )
