"""`harness sweep`: mutmut 3.x over the functions a change touches, in a throwaway copy."""

from __future__ import annotations

import argparse

from harness.checks.judgeable import judge_range
from harness.checks.tests_as_evidence.sweep import check_mutmut, run_sweep, sweep_section
from harness.commands._common import (
    add_report_options,
    check_output_path,
    command_line,
    emit,
    repo_of,
)
from harness.commands._grammar import add_range, range_of
from harness.envs import interpreter
from harness.errors import UsageError
from harness.executors.options import (
    add_executor_arguments,
    executor_from_args,
    without_executor_options,
)
from harness.report.model import Report

NAME = "sweep"
HELP = "mutation-test (mutmut 3.x) only the functions BASE..HEAD changes; its mutants/ never reach your tree"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_range(p, "the change whose functions are swept")
    p.add_argument(
        "--tests",
        action="append",
        default=[],
        metavar="PATH|NODEID",
        help="test selection handed to mutmut's pytest runs (repeatable; default: all)",
    )
    p.add_argument("-m", "--marker", metavar="EXPR", help="pytest -m expression for mutmut's runs")
    p.add_argument(
        "--source-path",
        action="append",
        default=[],
        metavar="DIR",
        help="mutmut source_paths (default: top folder of each changed file)",
    )
    p.add_argument(
        "--python",
        metavar="EXE",
        help="interpreter with mutmut 3.x and the project's test dependencies (default: the "
        "harness's own)",
    )
    p.add_argument("--max-children", type=int, default=None, help="mutmut worker processes")
    p.add_argument("--timeout", type=float, default=1800, help="seconds for the whole mutmut run")
    p.add_argument(
        "--shards",
        type=int,
        default=None,
        metavar="N",
        help="split mutmut's mutants into N runs, one task each (default: 1 locally, one per "
        "CPU of the Ray cluster with --executor ray)",
    )
    add_executor_arguments(p)
    add_report_options(p)


def run(args: argparse.Namespace) -> int:
    check_output_path(args)
    repo = repo_of(args)
    base_name, head_name = range_of(args)
    base, head = repo.resolve(base_name), repo.resolve(head_name)
    facts = judge_range(
        repo, base_name, head_name
    )  # the sweep reads the BASE→HEAD diff, merges included
    if args.shards is not None and args.shards < 1:
        raise UsageError(f"--shards must be at least 1, got {args.shards}")
    python = interpreter.resolve(args.python).python
    check_mutmut(python)
    with executor_from_args(args) as executor:
        result = run_sweep(
            repo,
            base,
            head,
            tests=args.tests,
            marker=args.marker,
            python=python,
            max_children=args.max_children,
            timeout=args.timeout,
            source_paths=args.source_path,
            executor=executor,
            shards=args.shards,
        )
    report = Report(
        title="Mutation sweep of the changed functions",
        command=command_line(without_executor_options(args._argv)),
        sections=[sweep_section(result)],
        inputs={"base": base, "head": head, **facts.header()},
    )
    return emit(args, report)
