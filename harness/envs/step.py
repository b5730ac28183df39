"""One build step of an environment (make a venv, install into it): run through
``harness/infra/process.py`` with a timeout, a clean environment and no input, said on ``log``
first, and on failure an ``EnvError`` that keeps what the step printed.

``EnvError``'s message is one line (which step, its exit code, its last line): the tests section
shows it in its ``env-error`` cells. A caller that wants more (the engines show the output's tail,
and read pip's "no matching distribution" as the user's input) reads ``output``.
"""

from __future__ import annotations

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
        lines = [ln.strip() for ln in said.splitlines() if ln.strip()]
        raise EnvError(
            f"{what} exited {proc.returncode}: " + (lines[-1][:300] if lines else ""),
            argv=argv,
            returncode=proc.returncode,
            output=said,
        )
    return said
