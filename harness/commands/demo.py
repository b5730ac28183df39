"""`harness demo`: build the built-in backport situation and run `compare` on it."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from harness import demo
from harness.commands._common import command_line
from harness.commands._grammar import old_spelling
from harness.commands.compare import run_compare
from harness.compare import CompareInputs
from harness.errors import EXIT_BLOCKED, EXIT_OK, UsageError
from harness.executors.options import (
    add_executor_arguments,
    executor_from_args,
    without_executor_options,
)
from harness.git import GitRepo
from harness.infra.resources import data_dir
from harness.report import FORMATS

NAME = "demo"
HELP = "build a small repository with a partial backport and run compare on it (no network needed)"


def scenario_path(name: str = "demo.yaml") -> Path:
    """A scenario beside the package (editable install or source checkout)."""
    path = data_dir("scenarios") / name
    if not path.is_file():
        raise UsageError(
            f"{path}: the demo scenario is missing (install harness from its source tree)"
        )
    return path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--output-dir",
        metavar="DIR",
        help="where the demo repository and reports go (default: reports/demo; --repo is ignored)",
    )
    p.add_argument(
        "--dir", dest="dir_old", metavar="DIR", help=argparse.SUPPRESS
    )  # the old spelling
    p.add_argument(
        "--format",
        choices=(*FORMATS, "none"),
        default="term",
        help="what to print besides writing the files (default: term)",
    )
    p.add_argument(
        "--full",
        action="store_true",
        help="terminal view: every table (default: verdict, causes, one line per section)",
    )
    p.add_argument(
        "--gate",
        action="store_true",
        help="exit with compare's gate code (the demo is blocked by design)",
    )
    p.add_argument(
        "--python", metavar="EXE", help="interpreter for probe columns (default: this one)"
    )
    p.add_argument(
        "--engine",
        action="store_true",
        help="also judge each tree's sampling params with the real sglang it pins "
        "(scenarios/demo-engine.yaml; builds engine environments: network on first use)",
    )
    add_executor_arguments(p)


def check_root(root: Path, flag: str) -> None:
    """Refuse, before the first line is printed, a folder the demo would write into although it
    belongs to something else: a git repository, or a ``repo`` entry the demo did not create."""
    from harness.git.writer import MARKER

    if (root / ".git").exists() or ((root / "HEAD").is_file() and (root / "objects").is_dir()):
        raise UsageError(
            f"{flag} {root}: is a git repository; the demo writes its own repository and "
            "reports there, choose another folder"
        )
    repo_dir = root / "repo"
    if os.path.lexists(repo_dir) and not (
        repo_dir.is_dir() and not repo_dir.is_symlink() and (repo_dir / MARKER).is_file()
    ):
        raise UsageError(
            f"{flag} {root}: {repo_dir} exists and was not created by harness demo; "
            "choose another folder"
        )


def run(args: argparse.Namespace) -> int:
    root = Path(args.output_dir or args.dir_old or "reports/demo")
    check_root(root, "--output-dir" if args.output_dir or not args.dir_old else "--dir")
    scenarios = [str(scenario_path())] + (
        [str(scenario_path("demo-engine.yaml"))] if args.engine else []
    )
    repo_dir = root / "repo"
    sys.stderr.write(f"harness: building the demo repository in {repo_dir}\n")
    demo.build(repo_dir)
    refs = demo.REFS
    inputs = CompareInputs(
        base=refs["base"],
        head=refs["head"],
        source=refs["source"],
        source_branch=refs["source_branch"],
        scenario_paths=scenarios,
        # the demo project needs pytest alone, which the harness's own interpreter has (its
        # probes and selection run there too): the tests section builds no environment, so the
        # demo needs no network
        python=args.python or sys.executable,
    )
    with executor_from_args(args) as inputs.executor:
        code = run_compare(
            GitRepo(repo_dir),
            inputs,
            output=root,
            fmt=args.format,
            command=command_line(without_executor_options(args._argv)),
            full=args.full,
            old_output=False,
        )
    if args.dir_old and not args.output_dir:
        old_spelling("--dir DIR", "--output-dir DIR")
    if args.gate or code not in (EXIT_OK, EXIT_BLOCKED):
        return code
    sys.stderr.write(
        f"harness: the gate would exit {code} ({'blocked' if code else 'pass'}); "
        "the demo's backport is partial by design\n"
    )
    return EXIT_OK
