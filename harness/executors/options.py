"""``--executor`` and ``--ray-address``: shared by the commands that run cells."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator

from harness.executors import Executor, make_executor

_OPTIONS = ("--executor", "--ray-address")


def add_executor_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--executor",
        metavar="NAME",
        default=None,
        help="where cells run: local (default; $HARNESS_EXECUTOR) or ray",
    )
    p.add_argument(
        "--ray-address",
        metavar="ADDR",
        default=None,
        help="Ray cluster to use with --executor ray (default: $RAY_ADDRESS, else a local Ray "
        "started for the run)",
    )


@contextlib.contextmanager
def executor_from_args(args: argparse.Namespace) -> Iterator[Executor]:
    """The executor the command line asks for, closed (its Ray disconnected) when the run ends."""
    ex = make_executor(getattr(args, "executor", None), getattr(args, "ray_address", None))
    try:
        yield ex
    finally:
        ex.close()


def without_executor_options(argv: list[str] | None) -> list[str] | None:
    """The command line as the report shows it: where cells ran does not change the report."""
    if argv is None:
        return None
    out: list[str] = []
    skip = False
    for a in argv:
        if skip:
            skip = False
        elif a in _OPTIONS:
            skip = True
        elif not a.startswith(tuple(f"{o}=" for o in _OPTIONS)):
            out.append(a)
    return out
