"""Options and output shared by the report-producing commands."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from harness.infra.atomic import write_atomic
from harness.report import FORMATS, render
from harness.report.model import Report
from harness.verdict import causes, gate

if TYPE_CHECKING:
    from pathlib import Path

    from harness.git import GitRepo


def repo_of(args: argparse.Namespace) -> GitRepo:
    """The repository the command line found (``cli`` opened it to check the work area is not
    inside it): opened once, not again by the verb."""
    from harness.git import GitRepo

    found = getattr(args, "_git", None)
    return found if isinstance(found, GitRepo) else GitRepo(args.repo)


def add_report_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--format",
        choices=(*FORMATS, "none"),
        default="term",
        help="output format (default: term; none: no report, the exit code only)",
    )
    p.add_argument("--output", metavar="FILE", help="write the report here instead of stdout")
    p.add_argument(
        "--fail-on",
        choices=gate.FAIL_ON,
        default="p1",
        help="exit 1 when a finding at or above this severity exists (default: p1)",
    )


def check_output_path(args: argparse.Namespace) -> None:
    """Fail early (before any work) when --output cannot be written."""
    out = getattr(args, "output", None)
    if out and getattr(args, "format", None) == "none":
        from harness.errors import UsageError

        raise UsageError("--output FILE with --format none would write nothing: drop one of them")
    if out:
        from harness.commands._validate import check_output_file

        check_output_file(out)
        repo = getattr(args, "_git", None)
        if repo is not None:
            refuse_in_repository(repo, out, f"--output {out}", "choose a file outside it")


def refuse_in_repository(repo: GitRepo, path: str | Path, what: str, instead: str) -> None:
    """One line, exit 2, where a report would be written into the repository under review."""
    if repo.owns(path):
        from harness.errors import UsageError

        raise UsageError(
            f"{what}: inside the repository (its work tree or .git), which the harness never "
            f"writes to; {instead}"
        )


def command_line(argv: list[str] | None = None) -> str:
    return "harness " + " ".join(
        shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:])
    )


def emit(
    args: argparse.Namespace,
    report: Report,
    head: str | None = None,
    rendered: Mapping[int, bytes] | None = None,
) -> int:
    """Render in the chosen format, write it, and return the gate's exit code. ``head``: what the
    causes' actions call the range's HEAD (default: the report's ``head`` input, its name part);
    ``rendered``: JSON of sections (by ``id``) rendered before (``report.json.section_text``),
    written as it is by ``--format json``."""
    fmt = getattr(args, "format", "term")
    if head is None:
        head = str(report.inputs.get("head", "HEAD")).split(" @ ")[0]
    report.causes = causes.group(report, head)
    report.verdict, blocked = gate.verdict(report, getattr(args, "fail_on", "p1"))
    if fmt == "none":
        pass
    elif args.output:
        write_atomic(args.output, _encoded(report, fmt, rendered))
    elif fmt == "term" and sys.stdout.isatty():
        from rich.console import Console

        from harness.report import terminal

        terminal.render_to(Console(highlight=False), report, full=True)
    elif fmt == "json" and rendered:
        from harness.report.json import render_utf8

        sys.stdout.write(b"".join(render_utf8(report, rendered)).decode("utf-8"))
    else:
        sys.stdout.write(render(report, fmt))
    return 1 if blocked else 0


def _encoded(
    report: Report, fmt: str, rendered: Mapping[int, bytes] | None = None
) -> str | list[bytes]:
    """The report as ``--output`` writes it: JSON in UTF-8 pieces (a fidelity report is megabytes:
    its whole text, and that text encoded, are never held at once), else the rendered text."""
    if fmt == "json":
        from harness.report.json import render_utf8

        return render_utf8(report, rendered)
    return render(report, fmt)
