"""`harness mutate`: mutation controls, liveness and gap pinning for a pytest selection."""

from __future__ import annotations

import argparse

from harness.checks.tests_as_evidence.mutation import (
    Mutation,
    check_commits,
    gap_mutations,
    load_mutations,
    mutation_section,
    run_mutations,
)
from harness.columns.edits import Edit
from harness.commands._common import (
    add_report_options,
    check_output_path,
    command_line,
    emit,
    repo_of,
)
from harness.commands._grammar import add_test_run_options
from harness.envs import interpreter
from harness.errors import UsageError
from harness.executors.options import (
    add_executor_arguments,
    executor_from_args,
    without_executor_options,
)
from harness.infra.cache import Cache
from harness.report.model import Report

NAME = "mutate"
HELP = (
    "run a pytest selection under each mutation (row 'none' first) with sha proofs; "
    "a liveness mutation must be killed; --gap asks whether any test pins a commit"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ref", default="HEAD", help="the ref whose tree is mutated (default HEAD)")
    p.add_argument(
        "--tests",
        action="append",
        default=[],
        metavar="NODEID|PATH",
        help="test selection: node ids or paths (repeatable; default: pytest's own discovery)",
    )
    p.add_argument("-m", "--marker", metavar="EXPR", help="pytest -m expression for the selection")
    p.add_argument(
        "--mutation",
        action="append",
        default=[],
        metavar="FILE.yaml",
        help="mutations from YAML: a list of {name, expect: killed|survived, edits: [...] "
        "or one edit's keys (replace/with/path, move/above/path, patch, apply-commit)}",
    )
    p.add_argument(
        "--replace",
        nargs=3,
        action="append",
        default=[],
        metavar=("PATH", "OLD", "NEW"),
        help="a mutation replacing OLD (must occur once) by NEW in PATH (repeatable)",
    )
    p.add_argument(
        "--liveness",
        nargs=3,
        action="append",
        default=[],
        metavar=("PATH", "OLD", "NEW"),
        help="like --replace, declared 'expect: killed' (the liveness control)",
    )
    p.add_argument(
        "--gap",
        action="append",
        default=[],
        metavar="COMMIT",
        help="apply this commit's diff to the ref and report whether any test changes outcome",
    )
    p.add_argument(
        "--python",
        metavar="EXE",
        help="interpreter that runs pytest (default: the harness's own)",
    )
    add_test_run_options(
        p,
        timeout=900,
        timeout_help="seconds per pytest run (default 900)",
        no_cache_help="run every row now; read and write no cache",
    )
    add_executor_arguments(p)
    add_report_options(p)


def _cli_mutations(args: argparse.Namespace) -> list[Mutation]:
    result = []
    for i, (path, old, new) in enumerate(args.liveness, 1):
        result.append(
            Mutation(
                f"liveness-{i}",
                [Edit(kind="replace", path=path, old=old, new=new, where=f"--liveness #{i}: ")],
                expect="killed",
            )
        )
    for i, (path, old, new) in enumerate(args.replace, 1):
        result.append(
            Mutation(
                f"replace-{i}",
                [Edit(kind="replace", path=path, old=old, new=new, where=f"--replace #{i}: ")],
            )
        )
    return result


def run(args: argparse.Namespace) -> int:
    check_output_path(args)
    repo = repo_of(args)
    repo.resolve(args.ref)
    mutations: list[Mutation] = []
    for path in args.mutation:
        mutations += load_mutations(path)
    mutations += _cli_mutations(args)
    mutations += gap_mutations(repo, args.gap)
    check_commits(repo, mutations)
    if not mutations:
        raise UsageError(
            "no mutations: pass --mutation FILE.yaml, --liveness/--replace PATH OLD NEW or --gap COMMIT"
        )
    with executor_from_args(args) as executor:
        result = run_mutations(
            repo,
            args.ref,
            mutations,
            args.tests,
            args.marker,
            python=interpreter.resolve(args.python).python,
            timeout=args.timeout,
            setup=args.setup,
            cache=Cache(namespace="mutations", enabled=not args.no_cache),
            executor=executor,
        )
    report = Report(
        title="Mutation controls",
        command=command_line(without_executor_options(args._argv)),
        sections=[mutation_section(result)],
        inputs={args.ref: result.commit},
    )
    return emit(args, report)
