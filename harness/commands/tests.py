"""``harness tests BASE..HEAD --source REF``: the tests the picks and their sources change, run
without the fix, with it and at the source; which test proves the fix (compare's tests section)."""

from __future__ import annotations

import argparse

from harness.commands._common import (
    add_report_options,
    check_output_path,
    command_line,
    emit,
    repo_of,
)
from harness.commands._grammar import add_range, range_of
from harness.commands._tests_options import add_tests_arguments
from harness.executors.options import add_executor_arguments, executor_from_args
from harness.report.model import Report

NAME = "tests"
HELP = (
    "run the tests the picks and their sources change without the fix, with it and at the "
    "source: which test proves the fix, which fails on the release, which commit it lacks"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_range(p, "BASE: the release branch the picks land on; HEAD: the backport under review")
    p.add_argument("--source", required=True, metavar="REF", help="branch the picks came from")
    p.add_argument(
        "--source-branch", metavar="REF", help="the PR branch squash-merged as the source"
    )
    p.add_argument(
        "--python",
        metavar="EXE",
        help="an interpreter whose environment runs the tests (default: one built from HEAD's "
        "packaging files, kept in the cache)",
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="run every column afresh; read and write no cache (the environment is still kept)",
    )
    add_tests_arguments(p, verb=True)
    add_executor_arguments(p)
    add_report_options(p)


def run(args: argparse.Namespace) -> int:
    check_output_path(args)
    repo = repo_of(args)
    base, head = range_of(args)
    repo.preresolve([base, head, args.source, args.source_branch or ""], ("commit",))
    from harness.checks.fidelity.check import fidelity_check
    from harness.checks.fix_tests.check import TestsOptions, tests_check
    from harness.checks.judgeable import judge_range
    from harness.envs.fingerprint import Ahead
    from harness.infra.history_index import open_index

    facts = judge_range(
        repo, base, head, source=args.source, source_branch=args.source_branch, picks=True
    )
    # The interpreter given is described (a fresh process) while the picks are judged.
    ahead = Ahead(args.python) if args.python else None
    try:
        index = open_index(repo, enabled=not args.no_cache)
        fidelity = fidelity_check(
            repo, base, head, args.source, args.source_branch, index=index
        ).result
        options = TestsOptions(
            python=args.python,
            setup=tuple(args.test_setup),
            timeout=args.test_timeout,
            constraints=args.test_constraints,
            no_cache=args.no_cache,
        )
        with executor_from_args(args) as executor:
            checked = tests_check(repo, base, head, fidelity, options, executor, source=args.source)
    finally:
        if ahead is not None:
            ahead.close()
    report = Report(
        title=f"Tests of the fix: {base}..{head} (source {args.source})",
        command=command_line(args._argv),
        sections=[checked.section],
        inputs={"base": base, "head": head, "source": args.source, **facts.header()},
    )
    return emit(args, report)
