"""`harness select`: how many tests each CI lane selects at each ref (one collection pass per ref)."""

from __future__ import annotations

import argparse

from harness.checks.tests_as_evidence.selection import (
    collect_refs,
    lanes_from_workflows,
    parse_lane,
    selection_section,
)
from harness.commands._common import (
    add_report_options,
    check_output_path,
    command_line,
    emit,
    repo_of,
)
from harness.commands._grammar import add_refs, add_test_run_options, refs_of
from harness.envs import interpreter
from harness.errors import UsageError
from harness.executors.options import (
    add_executor_arguments,
    executor_from_args,
    without_executor_options,
)
from harness.infra.cache import Cache
from harness.report.model import Report

NAME = "select"
HELP = "count the tests each CI lane (a pytest -m expression) selects at each ref, in one collection pass"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_refs(p, "ref to collect at (default HEAD); two refs add a Δ column")
    p.add_argument(
        "--lane",
        action="append",
        default=[],
        metavar="NAME=EXPR",
        help="a lane: its name and pytest -m expression ('' selects all); repeatable",
    )
    p.add_argument(
        "--lanes-from-workflows",
        action="store_true",
        help="read lanes from the repository's CI workflows (as `harness lanes` finds them)",
    )
    p.add_argument(
        "--file",
        action="append",
        default=[],
        metavar="PATH",
        help="file or directory of interest: per-lane counts for it (repeatable)",
    )
    p.add_argument(
        "--python",
        metavar="EXE",
        help="interpreter that runs pytest (default: the harness's own)",
    )
    p.add_argument(
        "--pytest-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="extra argument for pytest (e.g. a test path); repeatable",
    )
    add_test_run_options(
        p,
        timeout=600,
        timeout_help="seconds per collection (default 600)",
        no_cache_help="collect every ref now; read and write no cache",
    )
    add_executor_arguments(p)
    add_report_options(p)


def run(args: argparse.Namespace) -> int:
    check_output_path(args)
    repo = repo_of(args)
    refs = refs_of(args, ["HEAD"])
    for ref in refs:
        repo.resolve(ref)  # fail before any work
    lanes = [parse_lane(s) for s in args.lane]
    skipped: list[str] = []
    unread: list[str] = []
    if args.lanes_from_workflows:
        found, skipped = lanes_from_workflows(repo, refs[-1], unread=unread)
        lanes += found
    if not lanes:
        why = f" (workflows not read: {'; '.join(unread)})" if unread else ""
        raise UsageError(
            f"no lanes: pass --lane NAME=EXPR (repeatable) or --lanes-from-workflows{why}"
        )
    names = [lane.name for lane in lanes]
    if len(set(names)) != len(names):
        raise UsageError(f"duplicate lane names in {names}")
    with executor_from_args(args) as executor:
        collections = collect_refs(
            repo,
            refs,
            lanes,
            args.file,
            python=interpreter.resolve(args.python).python,
            args=args.pytest_arg,
            timeout=args.timeout,
            setup=args.setup,
            cache=Cache(namespace="collections", enabled=not args.no_cache),
            executor=executor,
        )
    section = selection_section(collections, lanes, args.file)
    section.not_verified += [
        f"workflow lane not evaluated (its expression is filled in by CI): {s}" for s in skipped
    ]
    section.not_verified += [f"workflow not read: {u}" for u in unread]
    report = Report(
        title="Test selection per CI lane",
        command=command_line(without_executor_options(args._argv)),
        sections=[section],
        inputs={c.ref: c.commit for c in collections},
    )
    return emit(args, report)
