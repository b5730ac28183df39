"""``harness shape BASE..HEAD [--same-tree A B]``: parents, identities, dates and sign-offs of a push."""

from __future__ import annotations

import argparse

from harness.checks.conflicts import conflicts_section
from harness.checks.judgeable import judge_range
from harness.checks.shape import shape_check
from harness.commands._common import (
    add_report_options,
    check_output_path,
    command_line,
    emit,
    repo_of,
)
from harness.commands._grammar import add_range, range_of
from harness.report.model import Report

NAME = "shape"
HELP = (
    "each commit in BASE..HEAD with its parents, author/committer identity and dates, Signed-off-by "
    "against the author (DCO) and conflict markers committed in a pick; --same-tree A B: do two commits "
    "carry identical trees"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_range(p, "the commits to describe")
    p.add_argument(
        "--same-tree", nargs=2, metavar=("A", "B"), help="also compare the trees of two commits"
    )
    add_report_options(p)


def run(args: argparse.Namespace) -> int:
    check_output_path(args)
    repo = repo_of(args)
    base, head = range_of(args)
    (
        repo.resolve(base),
        repo.resolve(head),
    )  # validates both ends (unknown or option-like refs → exit 2)
    facts = judge_range(repo, base, head)
    checked = shape_check(repo, base, head, tuple(args.same_tree) if args.same_tree else None)
    sections = [checked.section, conflicts_section(repo, base, head)]
    report = Report(
        title=f"Shape of {base}..{head}",
        command=command_line(args._argv),
        sections=sections,
        inputs={
            "base": checked.result.base,
            "head": checked.result.head,
            **facts.header(),
            **(
                {"same tree A": args.same_tree[0], "same tree B": args.same_tree[1]}
                if args.same_tree
                else {}
            ),
        },
    )
    return emit(args, report)
