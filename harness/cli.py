"""The single entry point: parse, dispatch to harness/commands/<verb>.py, map errors to exit codes."""

from __future__ import annotations

import argparse
import gc
import os
import signal
import sys

from harness import __version__, commands
from harness.errors import EXIT_INTERNAL, EXIT_USAGE, HarnessError, UsageError

# ``harness --help`` imports what printing the verb list needs and nothing else (a test holds it):
# the git layer, the process helpers, threading and typing load once a verb runs.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, NoReturn

EXIT_CODES = (
    "exit codes: 0 pass · 1 blocked by a finding (see --fail-on) · 2 usage or input error · "
    "3 harness failure"
)


EXIT_BROKEN_PIPE = 141  # as a shell reports a program killed by SIGPIPE
RUN_GC_THRESHOLD = 100_000  # allocations between young collections while a verb runs (default 700)

# Verbs that read no repository of the user's.
WITHOUT_REPOSITORY = frozenset({"cache", "demo", "engine"})


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one clear line, exit 2
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def _columns() -> int:
    """``shutil.get_terminal_size().columns``, which argparse asks for, without importing shutil (and
    the zlib, bz2 and lzma modules it brings: a tenth of ``harness --help``)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    stdout = sys.__stdout__
    try:
        return (os.get_terminal_size(stdout.fileno()).columns if stdout else 0) or 80
    except (AttributeError, ValueError, OSError):  # stdout closed, detached or not a terminal
        return 80


class _Columns(argparse.HelpFormatter):
    """argparse's formatter, as wide as argparse would make it."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
        **kwargs: Any,
    ) -> None:
        width = _columns() - 2 if width is None else width  # (argparse leaves two columns free)
        super().__init__(prog, indent_increment, max_help_position, width, **kwargs)


class _Formatter(_Columns):
    """argparse measures the verb list two columns short of where it prints it: a verb as long as
    ``backports`` would wrap onto a line of its own."""

    def add_argument(self, action: argparse.Action) -> None:
        super().add_argument(action)
        if isinstance(action, argparse._SubParsersAction):
            self._action_max_length += 2


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = _Parser(
        prog="harness",
        formatter_class=_Formatter,
        description="Differential regression and cherry-pick fidelity harness.",
        epilog=EXIT_CODES,
    )
    parser.add_argument("--version", action="version", version=f"harness {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    if only is None:  # the verb list only: each verb's HELP read from its source, nothing imported
        for name, text in commands.summaries().items():
            # (a verb named on the command line gets the parser below: this one only lists it)
            sub.add_parser(name, help=text, add_help=False)
        return parser
    for mod in commands.discover(only):
        p = sub.add_parser(
            mod.NAME,
            help=mod.HELP,
            description=mod.HELP,
            epilog=EXIT_CODES,
            formatter_class=_Columns,  # (argparse's own imports shutil at each add_argument)
        )
        p.add_argument(
            "--repo",
            metavar="PATH",
            default=None,
            help="repository to read (default: the current one; bare repositories work)",
        )
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def _terminate(signum: int, _frame: object) -> NoReturn:
    """SIGTERM unwinds like Ctrl-C, so temp trees, object dirs and child processes are cleaned."""
    raise SystemExit(128 + signum)


def _on_main_thread() -> bool:
    """Install the SIGTERM handler; False where Python refuses it (not the main thread), so nothing
    of the process's signal handling is touched there."""
    try:
        signal.signal(signal.SIGTERM, _terminate)
    except ValueError:
        return False
    return True


def _usable_streams() -> None:
    """A closed standard stream (``>&-``) becomes ``/dev/null`` (a file opened later would take
    its descriptor, and a child's output would land in it); text the streams' encoding cannot hold
    (``PYTHONIOENCODING=ascii``) is escaped, not an error."""
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        try:
            os.fstat(fd)
        except OSError:
            os.open(os.devnull, os.O_RDWR)  # the lowest free descriptor: this one
            setattr(sys, name, open(fd, "r" if fd == 0 else "w", encoding="utf-8", closefd=False))
        stream = getattr(sys, name)
        if fd and stream is not None and hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors="backslashreplace")
            except (ValueError, OSError):
                pass


def _stdout_gone() -> bool:
    """Whether stdout is a pipe nobody reads any more (poll says POLLERR on its writing end)."""
    try:
        import select

        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def _stop_writing_stdout() -> None:
    """The reader of stdout is gone: what is left to write (and the flush at exit) goes nowhere."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default: this process's) and return its exit code; as the
    process's own command line, end the process with it (``_end_process``)."""
    on_main = _on_main_thread()
    as_cli = argv is None and on_main
    if as_cli:
        _usable_streams()
    code = _outcome(argv, on_main, as_cli)
    if as_cli:
        _end_process(code)
    return code


def _outcome(argv: Sequence[str] | None, on_main: bool, as_cli: bool) -> int:
    try:
        try:
            return _main(argv, on_main, as_cli)
        finally:
            if as_cli:
                # The outcome is decided: a Ctrl-C during interpreter shutdown (when Python restores
                # the default handler) would otherwise turn a finished run into death by SIGINT.
                signal.signal(signal.SIGINT, signal.SIG_IGN)
    except KeyboardInterrupt:
        sys.stderr.write("harness: interrupted\n")
        return 130
    except BrokenPipeError as exc:
        if not _stdout_gone():  # a pipe to a child (git) broke: a harness failure like any other
            sys.stderr.write(f"harness: internal error: BrokenPipeError: {exc}\n")
            return EXIT_INTERNAL
        _stop_writing_stdout()  # ``| head``, ``| true``: the report files, if any, are written
        return EXIT_BROKEN_PIPE


def _end_process(code: int) -> NoReturn:
    """End the process as the interpreter's shutdown would (its threads joined, its ``atexit``
    callbacks run: workers, zygotes and git processes ended; stdout and stderr flushed, a failure
    to exit 120 as Python does), less its teardown of every object (~50 ms at the end of a large
    run). The history index's writer, held until now (``infra/detach.py``), is forked last: no
    page of the heap it shares is written after it."""
    import atexit

    threading = sys.modules.get("threading")  # (``--help`` never loads it)
    if threading is not None and hasattr(threading, "_shutdown"):
        try:
            threading._shutdown()  # what Python's shutdown calls first: non-daemon threads joined
        except Exception:  # noqa: BLE001 - (a private function: its end is not the run's)
            pass
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            if stream is sys.stdout:
                code = 120
    detach = sys.modules.get("harness.infra.detach")
    if detach is not None:
        detach.end_process(code)  # the history index's writer, forked now: the last act
    os._exit(code)


def _internal_errors() -> tuple[type[Exception], ...]:
    """``HarnessError``, and ``GitError`` once the git layer is loaded: no GitError exists before,
    and ``harness --help`` does not pay for importing the git layer to name it."""
    repo = sys.modules.get("harness.git.repo")
    return (HarnessError,) if repo is None else (HarnessError, repo.GitError)


def _main(argv: Sequence[str] | None, on_main: bool = False, as_cli: bool = False) -> int:
    argv = list(argv) if argv is not None else sys.argv[1:]
    verb = next((a for a in argv if not a.startswith("-")), None)
    named = verb in commands.names()
    if named:
        # Of what a verb imports, inspect (~4 ms) serves only dataclasses' docstrings, and the
        # methods dataclasses compiles but ``__init__`` can be closures (~3.5 ms): infra/lean.py.
        from harness.infra.lean import dataclass_methods_uncompiled, dataclasses_without_inspect

        dataclasses_without_inspect()
        dataclass_methods_uncompiled()
        if as_cli:
            from harness.infra import detach

            detach.hold()  # a writer is forked by ``_end_process``, once the rest is over
    parser = build_parser(verb if named else None)
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    if on_main:  # (until here, a Ctrl-C is harness/__init__.py's or main's KeyboardInterrupt)
        from harness.infra import interrupt

        interrupt.install()  # a Ctrl-C inside a finalizer is kept, not lost
    args._argv = argv
    # A run builds large structures that are garbage only at its end (histories, diffs, report
    # parts): the cyclic collector's default thresholds walk them again and again (~8 % of a
    # cold fidelity run on pytest's history, one full collection ~0.1 s). Collections are made
    # rarer for the run, and the caller's thresholds restored after it. The command line's own
    # process stops collecting instead: restored, they would start a full collection at once
    # (~5 ms of a run's end, in a process about to exit).
    thresholds = gc.get_threshold()
    gc.set_threshold(RUN_GC_THRESHOLD, *thresholds[1:])
    from harness.commands._validate import validate
    from harness.infra import digest, workarea

    digest.reset()  # (a run in this process says its cache notes again)

    try:
        try:
            os.getcwd()
        except FileNotFoundError:
            raise UsageError(
                "the current folder no longer exists: run from one that does"
            ) from None
        validate(args.verb, args)
        if args.verb not in WITHOUT_REPOSITORY:
            from harness.git import GitRepo

            args._git = GitRepo(args.repo)  # the verb reads the repository found here
            workarea.check_outside(args._git.owns)
        workarea.check_areas()
        return int(args._run(args))
    except UsageError as exc:
        sys.stderr.write(f"harness: {exc}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write("harness: interrupted\n")
        return 130
    except BrokenPipeError:
        raise  # stdout's reader left: ``main`` says so with the exit code, not as a harness error
    except _internal_errors() as exc:
        sys.stderr.write(f"harness: internal error: {exc}\n")
        return EXIT_INTERNAL
    except Exception as exc:  # noqa: BLE001 - a harness bug is exit 3, not a traceback for the user
        if os.environ.get("HARNESS_DEBUG"):
            raise
        sys.stderr.write(
            f"harness: internal error: {exc.__class__.__name__}: {exc} (HARNESS_DEBUG=1 for the traceback)\n"
        )
        return EXIT_INTERNAL
    finally:
        if as_cli:
            gc.disable()
            kept = sys.modules.get("harness.git.kept")
            if kept is not None:  # (its git processes end as the verb's objects go, next)
                kept.leaving()
        else:
            gc.set_threshold(*thresholds)
        workarea.end_run()
