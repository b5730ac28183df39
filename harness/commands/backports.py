"""`harness backports --source REF --release REF…`: source fixes × release branches, one matrix."""

from __future__ import annotations

import argparse

from harness.commands._common import (
    add_report_options,
    check_output_path,
    command_line,
    emit,
    repo_of,
)
from harness.errors import UsageError
from harness.report.model import Report

NAME = "backports"
HELP = "matrix of source-branch fixes × release branches: picked, in-fork, reached, missing, n/a"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--source", required=True, metavar="REF", help="branch the fixes land on (main)")
    p.add_argument(
        "--release",
        action="append",
        default=[],
        required=True,
        metavar="REF",
        help="a release branch (repeatable; ordered by fork point date, then version in the name)",
    )
    p.add_argument(
        "--candidates",
        metavar="FILE",
        help="commits or PR numbers that should be on every release, one a line (or the JSON of "
        "`gh pr list --json number`)",
    )
    p.add_argument(
        "--since",
        metavar="REF|DATE",
        help="candidate rule only for commits after this commit or date (YYYY-MM-DD; default: the "
        "oldest release's fork point)",
    )
    p.add_argument(
        "--rule",
        metavar="REGEX",
        help="subject pattern of the candidate rule (default: a fix by its subject: fix, Fix, BUG:, "
        "fix(...):; a 'Fixes #N' line always counts)",
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="read the source history from git alone: nothing kept in or read from the history index",
    )
    p.add_argument(
        "--no-trial",
        action="store_true",
        help="do not try cherry-picks of missing commits (applies is null)",
    )
    add_report_options(p)


def run(args: argparse.Namespace) -> int:
    from harness.checks.backports import backports_check
    from harness.checks.backports_candidates import compile_rule, read_candidates, since_of

    check_output_path(args)
    repo = repo_of(args)
    if repo.is_shallow():
        raise UsageError("the repository is shallow: fork points and ancestry cannot be judged")
    candidates = read_candidates(args.candidates) if args.candidates else []
    rule = compile_rule(args.rule)
    source = repo.resolve(args.source)
    names = list(
        dict.fromkeys(args.release)
    )  # a repeated --release is listed once (a note says so)
    releases = [repo.resolve(r) for r in names]
    since = since_of(repo, args.since)
    from harness.infra.history_index import open_index

    index = open_index(repo, enabled=not args.no_cache)
    checked = backports_check(
        repo, args.source, args.release, candidates, rule, since, trial=not args.no_trial,
        index=index,
    )  # fmt: skip
    inputs = {
        "source": f"{args.source} @ {source[:12]}",
        "releases": ", ".join(f"{n} @ {s[:12]}" for n, s in zip(names, releases, strict=True)),
        "head": args.source,
    }
    if args.candidates:
        inputs["candidates"] = args.candidates
    if args.since:
        inputs["since"] = args.since
    report = Report(
        "Backports", command_line(getattr(args, "_argv", None)), [checked.section], inputs
    )
    return emit(args, report)
