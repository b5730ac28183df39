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
