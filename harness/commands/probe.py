"""``harness probe SCENARIO``: run a scenario's probes over rows × columns and report the tables."""

from __future__ import annotations

import argparse
from contextlib import nullcontext
from pathlib import Path

from harness.checks.probe_table import probe_sections
from harness.commands._common import (
    add_report_options,
    check_output_path,
    command_line,
    emit,
    repo_of,
)
from harness.errors import UsageError
from harness.executors.options import (
    add_executor_arguments,
    executor_from_args,
    without_executor_options,
)
from harness.infra.cache import Cache
from harness.infra.progress import note, phase
from harness.inputs.scenario import load_scenario
from harness.report.model import Report

NAME = "probe"
HELP = "run a scenario's differential probes (rows × ref and control columns) and report the table"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "scenario", metavar="SCENARIO", help="scenario YAML file (refs, controls, probes, rows)"
    )
    p.add_argument(
        "--probe", action="append", metavar="ID", help="run only this probe (repeatable)"
    )
    p.add_argument(
        "--python", metavar="PATH", help="interpreter for the columns (default: this one)"
    )
    p.add_argument(
        "--jobs", type=int, metavar="N", help="columns run in parallel (default: one per column)"
    )
    p.add_argument("--no-cache", action="store_true", help="ignore and do not write cached cells")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    add_executor_arguments(p)
    add_report_options(p)


def run(args: argparse.Namespace) -> int:
    check_output_path(args)
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be >= 1")
    repo = repo_of(args)
    scenario = load_scenario(args.scenario)
    scenario.check_refs(repo)  # before the progress line: a bad ref is one line
    with nullcontext() if args.quiet else phase(f"probes of {Path(args.scenario).name}"):
        with executor_from_args(args) as executor:
            sections = probe_sections(
                repo,
                scenario,
                args.probe,
                args.python,
                args.jobs,
                cache=Cache(enabled=not args.no_cache),
                progress=None if args.quiet else note,
                executor=executor,
            )
    inputs = {"scenario": str(args.scenario)}
    inputs.update(
        {
            f"column {c.name}": c.ref + (f" + {len(c.edits)} edit(s)" if c.edits else "")
            for c in scenario.columns
        }
    )
    report = Report(
        title=scenario.title,
        command=command_line(without_executor_options(getattr(args, "_argv", None))),
        sections=sections,
        inputs=inputs,
    )
    return emit(args, report)
