"""``harness drift BASE HEAD``: how far BASE moved since HEAD forked, a trial merge, redundant lines."""

from __future__ import annotations

import argparse

from harness.checks.drift import drift_check
from harness.commands._common import (
    add_report_options,
    check_output_path,
    command_line,
    emit,
    repo_of,
)
from harness.commands._grammar import add_range, range_of
from harness.report.model import Report

NAME = "drift"
HELP = (
    "release drift: commits on BASE since the merge base, files both sides changed, a trial merge "
    "(git merge-tree, nothing written), and HEAD's added lines already on BASE"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_range(
        p, "BASE: the release branch (or any commit-ish) the change targets; HEAD: the change"
    )
    add_report_options(p)


def run(args: argparse.Namespace) -> int:
    check_output_path(args)
    repo = repo_of(args)
    base, head = range_of(args)
    checked = drift_check(repo, base, head)
    report = Report(
        title=f"Drift: {base} vs {head}",
        command=command_line(args._argv),
        sections=[checked.section],
        inputs={
            "base": checked.result.base,
            "head": checked.result.head,
            "merge base": checked.result.merge_base,
        },
    )
    return emit(args, report)
