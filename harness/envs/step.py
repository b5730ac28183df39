"""One build step of an environment (make a venv, install into it): run through
``harness/infra/process.py`` with a timeout, a clean environment and no input, said on ``log``
first, and on failure an ``EnvError`` that keeps what the step printed.

``EnvError``'s message is one line (which step, its exit code, and the installer's own error line
— uv's first ``error:``, pip's last ``ERROR:``, else the last line — with uv's hint of why the
failing package was wanted, where it gives one): the tests section
shows it in its ``env-error`` cells. A caller that wants more (the engines show the output's tail,
and read pip's "no matching distribution" as the user's input) reads ``output``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from harness.errors import HarnessError
from harness.infra import process

Log = Callable[[str], None]
# What an outer environment sets that would make a step install somewhere else or refuse.
DROPPED = ("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")


class EnvError(HarnessError):
    """An environment could not be made. ``output``: what the failing step printed (stdout and
    stderr in order); ``argv`` and ``returncode`` (None: it did not start or ran past its time)."""

    def __init__(
        self,
        message: str,
        *,
        argv: Sequence[str] = (),
        returncode: int | None = None,
        output: str = "",
    ) -> None:
        super().__init__(message)
        self.argv = list(argv)
        self.returncode = returncode
        self.output = output

    def tail(self, lines: int = 15) -> str:
        """The last ``lines`` lines the step printed."""
        return "\n".join(self.output.strip().splitlines()[-lines:])


def run_step(argv: Sequence[str], what: str, *, timeout: float, log: Log | None = None) -> str:
    """Run one build step; return what it printed. ``what`` names it in the error."""
    if log is not None:
        log("$ " + " ".join(argv))
    try:
        proc = process.run(
            list(argv),
            stdout=process.PIPE,
            stderr=process.STDOUT,
            timeout=timeout,
            env=process.child_env(drop=DROPPED),
            stdin=process.DEVNULL,
        )
    except process.TimeoutExpired:
        raise EnvError(f"{what}: ran past {timeout:.0f}s", argv=argv) from None
    except OSError as exc:
        raise EnvError(f"{what}: {exc.strerror or exc}", argv=argv) from None
    said = (proc.stdout or b"").decode("utf-8", "replace")
    if proc.returncode != 0:
        lines = [ln.rstrip() for ln in said.splitlines() if ln.strip()]
        raise EnvError(
            f"{what} exited {proc.returncode}: " + headline(lines)[:300],
            argv=argv,
            returncode=proc.returncode,
            output=said,
        )
    return said


# The installers' own lines start a line; a build's output, quoted inside, is indented. pip's
# ``error: <code>`` lines (subprocess-exited-with-error, failed-wheel-build-for-install) name no
# package.
_UV_ERROR = re.compile(r"^error: (?![a-z0-9-]+$)\S")
_PIP_ERROR = re.compile(r"^ERROR: \S")
_WANTED_BY = re.compile(r"^hint: (.* was included because .*)$")
_BECAUSE = re.compile(r"^\s*(?:cause: |╰─▶ )(Because .*)$")  # uv's reason a resolution failed


def headline(lines: Sequence[str]) -> str:
    """What an installer's output says went wrong, in one line: pip's last ``ERROR:``, else uv's
    first ``error:`` (the package that failed; its last line is a generic hint) with its reason
    where a resolution failed, else the last line; with uv's hint of why the failing package was
    wanted."""
    # pip's own summary first (uv writes no ``ERROR:``; pip also writes ``error: <code>`` lines)
    said = next((ln for ln in reversed(lines) if _PIP_ERROR.match(ln)), None)
    if said is None:
        said = next((ln for ln in lines if _UV_ERROR.match(ln)), None)
    if said is None:
        return lines[-1].strip() if lines else ""
    because = next((m.group(1) for ln in lines if (m := _BECAUSE.match(ln))), None)
    why = next((m.group(1) for ln in lines if (m := _WANTED_BY.match(ln))), None)
    return said + "".join(f"; {x}" for x in (because, why) if x)
