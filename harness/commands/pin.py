"""``harness pin FILE KEYPATH --refs R1 R2 …``: a pinned value at each ref, with its line."""

from __future__ import annotations

import argparse

from harness.checks.pins import pin_check
from harness.commands._common import (
    add_report_options,
    check_output_path,
    command_line,
    emit,
    repo_of,
)
from harness.commands._grammar import add_refs, refs_of
from harness.report.model import Report

NAME = "pin"
HELP = (
    'the value of a YAML key path (keys with dots: a["cuda13.0"].tag), a TOML key, or a package pin '
    "(pyproject.toml / requirements*.txt: KEYPATH is the package name) at each ref, with its line"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "file", metavar="FILE", help="path inside the repository, read at each ref (no checkout)"
    )
    p.add_argument(
        "keypath",
        metavar="KEYPATH",
        help='key path such as sglang["cuda13.0"].runtime_image_tag, '
        "or a package name for requirements/pyproject files",
    )
    add_refs(p, "ref to read (one row each)")
    add_report_options(p)


def run(args: argparse.Namespace) -> int:
    check_output_path(args)
    repo = repo_of(args)
    checked = pin_check(repo, args.file, args.keypath, refs_of(args))
    report = Report(
        title=f"Pinned value: {args.keypath}",
        command=command_line(args._argv),
        sections=[checked.section],
        inputs={
            "file": args.file,
            "keypath": args.keypath,
            **{f"ref {r.ref}": r.sha for r in checked.result},
        },
    )
    return emit(args, report)
