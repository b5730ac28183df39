"""`harness compare BASE HEAD`: every section that applies, written as md/json/html, gated."""

from __future__ import annotations

import argparse
import datetime as dt
import re
import sys
from pathlib import Path

from harness.commands._common import command_line, refuse_in_repository, repo_of, write_atomic
from harness.commands._grammar import add_range, old_spelling, range_of
from harness.commands._tests_options import add_tests_arguments
from harness.commands._validate import check_output_dir
from harness.compare import CompareInputs, build_report, run_plan
from harness.errors import EXIT_INTERNAL, UsageError
from harness.executors.options import (
    add_executor_arguments,
    executor_from_args,
    without_executor_options,
)
from harness.git import GitRepo
from harness.report import FORMATS, render
from harness.report.printable import printable
from harness.verdict import causes, gate

NAME = "compare"
HELP = "run every section that applies to BASE → HEAD and write the review report"
# The files of a report folder (beside comment.md) and the format of each.
REPORT_FILES = {
    "report.md": "md",
    "report.json": "json",
    "report.html": "html",
    "report.junit.xml": "junit",
    "report.sarif": "sarif",
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_range(
        p,
        "BASE: the release branch (or any ref) the change lands on; HEAD: the backport under review",
    )
    p.add_argument("--source", metavar="REF", help="branch the picks came from (enables fidelity)")
    p.add_argument(
        "--source-branch", metavar="REF", help="the PR branch squash-merged as the source"
    )
    p.add_argument(
        "--no-fidelity",
        action="store_true",
        help="run without --source: no pick is judged (the verdict says so)",
    )
    add_tests_arguments(p)
    p.add_argument(
        "--scenario",
        metavar="FILE",
        action="append",
        default=[],
        help="scenario YAML: traces, pins, probes, mutations, lanes (repeatable)",
    )
    p.add_argument(
        "--output-dir", metavar="DIR", help="report folder (default: reports/<base>..<head>)"
    )
    p.add_argument(
        "--output", dest="output_old", metavar="DIR", help=argparse.SUPPRESS
    )  # the old spelling
    p.add_argument(
        "--format",
        choices=(*FORMATS, "none"),
        default="term",
        help="what to print on stdout besides writing the files (default: term)",
    )
    p.add_argument(
        "--fail-on",
        choices=gate.FAIL_ON,
        default=None,
        help="exit 1 on an open finding at or above this severity (default: policy's, else p1)",
    )
    p.add_argument(
        "--report-url",
        metavar="URL",
        help="where reviewers find the full report (e.g. the CI run's artifacts); named in comment.md",
    )
    p.add_argument(
        "--full",
        action="store_true",
        help="terminal view: every table, finding and control (default: verdict, causes, one line per section)",
    )
    p.add_argument("--policy", metavar="FILE", help="gate policy YAML (blocking kinds, waivers)")
    p.add_argument(
        "--previous", metavar="REPORT.json", help="an earlier round's report.json (ledger)"
    )
    p.add_argument(
        "--python",
        metavar="EXE",
        help="interpreter for probe columns (default: this one) and the tests section (default: "
        "an environment built from HEAD's packaging files)",
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="probe columns run in parallel (default: one worker per column)",
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="compute every section, probe cell, mutation row and collection afresh; read and write no cache",
    )
    add_executor_arguments(p)
    p.add_argument("--today", metavar="YYYY-MM-DD", type=_date, help=argparse.SUPPRESS)


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date YYYY-MM-DD: {text!r}") from None


_PLAIN = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}")


def _slug(name: str) -> str:
    """A ref (or repository) name as part of a folder name: itself where it is plain (letters,
    digits, ``._-``, at most 64), else a readable form and 8 hex of the name's sha1, so that two
    names never share a folder (``release/1.0`` and ``release_1.0``, ``release/ü`` and
    ``release``) and a 250-character branch still names one."""
    if _PLAIN.fullmatch(name):
        return name
    import hashlib

    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_.")[:48] or "ref"
    digest = hashlib.sha1(name.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return f"{readable}-{digest}"


def default_output(repo: GitRepo, base: str, head: str) -> Path:
    """``reports/<base>..<head>``, unless that lies inside the user's repository (work tree or git
    dir, never written to): then the user cache (``$XDG_CACHE_HOME/harness/reports/<repo>/…``)."""
    out = Path("reports") / f"{_slug(base)}..{_slug(head)}"
    owned = [p.resolve() for p in (repo.work_tree, repo.git_dir) if p is not None]
    if repo.owns(out):
        import hashlib
        import os

        from harness.infra.workarea import user_cache_home

        where = owned[0] if owned[0].name != ".git" else owned[0].parent
        # the folder's name and 8 hex of its path: two repositories of one name, two folders
        digest = hashlib.sha1(os.fsencode(where)).hexdigest()[:8]
        out = user_cache_home() / "harness" / "reports" / f"{_slug(where.name)}-{digest}" / out.name
        # a repository holding the home folder (dotfiles)
        refuse_in_repository(
            repo, out, f"the default report folder {out}", "name one with --output-dir DIR"
        )
    return out


def run_compare(
    repo: GitRepo,
    inputs: CompareInputs,
    *,
    output: Path,
    fmt: str = "term",
    fail_on: str | None = None,
    policy_path: str | None = None,
    previous: str | None = None,
    command: str = "",
    today: dt.date | None = None,
    report_url: str | None = None,
    full: bool = False,
    old_output: bool = False,
) -> int:
    """The whole job: validate, run sections, apply policy and ledger, write the files, gate."""
    repo.resolve(inputs.base)
    repo.resolve(inputs.head)
    # YAML (the policy), the ledger and the comment load once a run starts, not for --help
    from harness.inputs import policy
    from harness.report import comment, markdown
    from harness.verdict import ledger

    pol = policy.load(policy_path) if policy_path else policy.Policy()
    prev = ledger.load_previous(previous) if previous else None
    inputs.release_paths = tuple(pol.release_paths)
    if prev is not None:
        ledger.check_same_repository(prev, repo)
    if output.exists() and not output.is_dir():
        raise UsageError(f"--output {output}: exists and is not a directory")
    existing = next((p for p in [output, *output.parents] if p.exists()), None)
    if existing is not None and not existing.is_dir():
        raise UsageError(f"--output {output}: {existing} is not a directory")
    from harness.plan import plan_for  # the checks are imported once the refs are known to resolve

    plan = plan_for(repo, inputs)  # validates the scenario: bad input fails here, before any work
    sections, crashed = run_plan(plan)
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    report = build_report(
        repo,
        inputs,
        sections,
        plan.skipped,
        command,
        now.strftime("%Y-%m-%d %H:%M:%SZ"),
        plan.header,
    )
    notes = policy.apply(pol, report.findings, today or now.date())
    report.not_verified += notes
    if prev is not None:
        report.sections.append(ledger.apply(report, prev, repo.resolve(inputs.head, "tree")))
    threshold = fail_on or pol.fail_on or "p1"
    from harness.git.names import head_name

    report.causes = causes.group(report, head_name(repo, inputs.head))  # a typed id: its branch
    report.verdict, blocking = gate.verdict(report, threshold, crashed)
    output.mkdir(parents=True, exist_ok=True)
    # Bytes that are not UTF-8 shown as \xNN once, for every file (each walk of a long report
    # costs ~10 ms; JSON, which escapes as it writes, gives the same bytes either way).
    printable(report)
    made = markdown.Sections()  # report.md's sections, shown again by comment.md
    for name, fmt_name in REPORT_FILES.items():
        text = (
            markdown.render(report, made)
            if fmt_name == "md"
            else render(report, fmt_name, escaped=True)
        )
        write_atomic(output / name, text)
    where = (
        report_url
        or "report.md and report.html beside comment.md (the CI workflow uploads the folder as an artifact)"
    )
    write_atomic(output / "comment.md", comment.render(report, where, escaped=True, made=made))
    if fmt == "term" and sys.stdout.isatty():
        from rich.console import Console

        from harness.report import terminal

        terminal.render_to(Console(highlight=False), report, full=full)
    elif fmt != "none":
        sys.stdout.write(render(report, fmt, full=full, escaped=True))
    sys.stderr.write(f"harness: wrote {output}/{', '.join(REPORT_FILES)}, comment.md\n")
    if old_output:
        old_spelling("--output DIR", "--output-dir DIR")
    if crashed:
        return EXIT_INTERNAL
    return 1 if blocking else 0


def run(args: argparse.Namespace) -> int:
    repo = repo_of(args)
    base, head = range_of(args)
    out_dir = args.output_dir or args.output_old
    if out_dir:
        flag = "--output-dir" if args.output_dir else "--output"
        refuse_in_repository(repo, out_dir, f"{flag} {out_dir}", "choose a folder outside it")
    output = Path(out_dir) if out_dir else default_output(repo, base, head)
    if not out_dir:  # the default folder must be writable too, before any work
        check_output_dir(str(output), "report folder")
    inputs = CompareInputs(
        base=base,
        head=head,
        source=args.source,
        source_branch=args.source_branch,
        scenario_paths=args.scenario,
        python=args.python,
        jobs=args.jobs,
        no_cache=args.no_cache,
        no_fidelity=args.no_fidelity,
        no_tests=args.no_tests,
        test_timeout=args.test_timeout,
        test_setup=tuple(args.test_setup),
        test_constraints=args.test_constraints,
    )
    with executor_from_args(args) as inputs.executor:
        return run_compare(
            repo,
            inputs,
            output=output,
            fmt=args.format,
            fail_on=args.fail_on,
            policy_path=args.policy,
            previous=args.previous,
            command=command_line(without_executor_options(args._argv)),
            today=args.today,
            report_url=args.report_url,
            full=args.full,
            old_output=bool(args.output_old and not args.output_dir),
        )
