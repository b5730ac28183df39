"""The one way the harness runs a program (the git layer's own runner in ``harness/git/repo.py``
aside): ``run`` and ``popen`` with a timeout, a process group killed on a timeout or an interrupt,
an error that shows the command with the tail of its output, and ``child_env`` for the environment.

Child processes never outlive the harness. Every pytest, probe, mutmut or engine child starts in
its own process group (``start_new_session``) and its group id is registered with one watchdog
process per run. The watchdog reads its stdin, the write end of which only the harness holds: when
the harness exits, however it exits (SIGKILL included), the pipe closes and the watchdog kills
every group still registered, then exits. Groups are unregistered once their leader is reaped, so a
reused id is never signalled.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import IO, Any

PIPE = subprocess.PIPE
STDOUT = subprocess.STDOUT
DEVNULL = subprocess.DEVNULL
TimeoutExpired = subprocess.TimeoutExpired
CalledProcessError = subprocess.CalledProcessError
CompletedProcess = subprocess.CompletedProcess
Popen = subprocess.Popen
TAIL_LINES = 15


def tail(output: str | bytes | None, lines: int = TAIL_LINES) -> str:
    """The last ``lines`` lines of a child's output, decoded."""
    if output is None:
        return ""
    text = output.decode("utf-8", "replace") if isinstance(output, bytes) else output
    return "\n".join(text.strip().splitlines()[-lines:])


class ProcessError(subprocess.CalledProcessError):
    """A child exited non-zero under ``check=True``: the message carries its output's tail."""

    def __str__(self) -> str:
        said = "\n".join(t for t in (tail(self.stdout), tail(self.stderr)) if t)
        return super().__str__() + (f"\n{said}" if said else "")


# What an outer git (a hook, ``git rebase --exec``, a worktree's shell) leaves in the environment to
# point git at a repository, an index or another object store, or to change a diff's shape: dropped
# from every child (git, pytest, probes: a test that runs git must not reach the user's repository)
# unless the call sets one itself, so ``--repo`` alone says which repository is read.
GIT_LOCATING_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_DIFF_OPTS",
    "GIT_EXTERNAL_DIFF",
)


def child_env(extra: dict[str, str] | None = None, *, drop: Sequence[str] = ()) -> dict[str, str]:
    """The harness's environment without ``drop`` (and ``GIT_LOCATING_ENV``) and with ``extra``:
    what a child is given."""
    env = {k: v for k, v in os.environ.items() if k not in drop and k not in GIT_LOCATING_ENV}
    env.update(extra or {})
    return env


_WATCHDOG = r"""
import os, signal, sys
groups = set()
for line in sys.stdin:
    try:
        pgid = int(line[1:])
    except ValueError:
        continue
    (groups.add if line[0] == "+" else groups.discard)(pgid)
for pgid in groups:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
"""

_lock = threading.Lock()
_pipe: dict[int, IO[bytes]] = {}  # pid of the harness → the watchdog's stdin (a fork gets its own)


def _watchdog() -> IO[bytes] | None:
    pipe = _pipe.get(os.getpid())
    if pipe is None:
        try:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _WATCHDOG],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:
            return None
        pipe = proc.stdin
        if pipe is None:
            return None
        _pipe[os.getpid()] = pipe
    return pipe


def _tell(op: str, pgid: int) -> None:
    with _lock:
        pipe = _watchdog()
        if pipe is None:
            return
        try:
            pipe.write(f"{op}{pgid}\n".encode())
            pipe.flush()
        except (OSError, ValueError):
            pass


def register(pgid: int) -> None:
    """The process group ``pgid`` dies with the harness."""
    _tell("+", pgid)


def unregister(pgid: int) -> None:
    """``pgid``'s leader was reaped: forget it."""
    _tell("-", pgid)


def kill_group(proc: subprocess.Popen[Any]) -> None:
    """SIGKILL the child's whole group and reap the child."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def popen(argv: Sequence[str] | str, **kw: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen`` in a new process group registered with the watchdog (``unregister`` after reaping)."""
    kw["start_new_session"] = True
    proc = subprocess.Popen(argv, **kw)
    register(proc.pid)
    return proc


def run(
    argv: Sequence[str] | str,
    *,
    input: Any = None,
    timeout: float | None = None,
    check: bool = False,
    capture_output: bool = False,
    **kw: Any,
) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run`` whose child (and its descendants) die with the harness and on a timeout."""
    if capture_output:
        kw["stdout"] = kw["stderr"] = subprocess.PIPE
    if input is not None:
        kw["stdin"] = subprocess.PIPE
    proc = popen(argv, **kw)
    try:
        with proc:
            try:
                out, err = proc.communicate(input, timeout=timeout)
            except subprocess.TimeoutExpired as exc:
                kill_group(proc)
                out, err = proc.communicate()
                raise subprocess.TimeoutExpired(
                    proc.args, exc.timeout, output=out, stderr=err
                ) from None
            except BaseException:
                kill_group(proc)
                raise
    finally:
        unregister(proc.pid)
    code = proc.poll()
    assert code is not None
    if check and code:
        raise ProcessError(code, proc.args, out, err)
    return subprocess.CompletedProcess(proc.args, code, out, err)
