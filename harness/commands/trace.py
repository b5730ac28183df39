"""``harness trace STRING --refs R1 R2 … [--under PATH] [--range A..B]``: a fixed string across refs."""

from __future__ import annotations

import argparse

from harness.checks.judgeable import judge_range
from harness.checks.trace import trace_check
from harness.commands._common import (
    add_report_options,
    check_output_path,
    command_line,
    emit,
    repo_of,
)
from harness.commands._grammar import add_refs, refs_of
from harness.report.model import Report

NAME = "trace"
HELP = (
    "fixed-string occurrences at each ref (count and file:line) without checkout; with --range A..B also "
    "the commits that added or removed it"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("needle", metavar="STRING", help="fixed string to look for (not a regex)")
    add_refs(p, "ref to search (one row each)")
    p.add_argument("--under", metavar="PATH", help="only files under this path")
    p.add_argument(
        "--range",
        dest="range_",
        metavar="A..B",
        help="also list commits in A..B that change the count",
    )
    add_report_options(p)


def run(args: argparse.Namespace) -> int:
    check_output_path(args)
    repo = repo_of(args)
    header: dict[str, str] = {}
    a, sep, b = (args.range_ or "").partition("..")
    if (
        sep and a and b and not b.startswith(".")
    ):  # a malformed --range is trace_check's usage error
        header = judge_range(repo, a, b).header()
    checked = trace_check(repo, args.needle, refs_of(args), args.under, args.range_)
    inputs = {
        "string": args.needle,
        **({"under": args.under} if args.under else {}),
        **{f"ref {r.ref}": r.sha for r in checked.result.rows},
    }
    if args.range_:
        inputs["range"] = args.range_
        inputs.update(header)
    report = Report(
        title=f"Trace of {args.needle!r}",
        command=command_line(args._argv),
        sections=[checked.section],
        inputs=inputs,
    )
    return emit(args, report)
