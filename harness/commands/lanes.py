"""``harness lanes [--ref R] [--workflow PATH]``: the pytest marker expression of every CI lane."""

from __future__ import annotations

import argparse

from harness.checks.lanes.check import lanes_check
from harness.commands._common import (
    add_report_options,
    check_output_path,
    command_line,
    emit,
    repo_of,
)
from harness.report.model import Report

NAME = "lanes"
HELP = (
    "the pytest marker expression of every CI lane in GitHub Actions workflows at a ref "
    "(inputs named *markers*/*pytest_marks* under jobs.*.with, matrix values, input defaults, pytest -m in "
    "run: steps and local composite actions, read with a shell parser through docker/bash -c/uv run/"
    "pixi run/tox -e wrappers; ${{ matrix/env/inputs }} expanded per matrix combination)"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--ref", default="HEAD", help="ref whose workflows are read from git (default: HEAD)"
    )
    p.add_argument(
        "--workflow",
        action="append",
        metavar="PATH",
        help="workflow file to read (repeatable; default: .github/workflows/*.yml|yaml at the ref)",
    )
    add_report_options(p)


def run(args: argparse.Namespace) -> int:
    check_output_path(args)
    repo = repo_of(args)
    checked = lanes_check(repo, args.ref, args.workflow)
    report = Report(
        title=f"CI lanes at {args.ref}",
        command=command_line(args._argv),
        sections=[checked.section],
        inputs={"ref": args.ref, "commit": checked.result.sha},
    )
    return emit(args, report)
