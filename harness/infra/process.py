"""The one way the harness runs a program (the git layer's own runner in ``harness/git/repo.py``
aside): ``run`` and ``popen`` with a timeout, a process group killed on a timeout or an interrupt,
an error that shows the command with the tail of its output, and ``child_env`` for the environment.

Child processes never outlive the harness. Every pytest, probe, mutmut or engine child starts in
its own process group (``start_new_session``) and its group id is registered with one watchdog
process per run. The watchdog reads its stdin, the write end of which only the harness holds: when
the harness exits, however it exits (SIGKILL included), the pipe closes and the watchdog kills
every group still registered (SIGTERM, then SIGKILL half a second later), then exits. Groups are
unregistered once their leader is reaped, so a reused id is never signalled.

A child started with ``popen(reap_tree=True)`` (probe processes) runs under a reaper, the child
subreaper of its subtree: what it starts outside its group (``setsid``, a double fork) is killed
with it when it ends, is timed out (``kill_group`` sends the reaper SIGTERM first) or the harness
dies. Every child's environment leaves out ``GIT_LOCATING_ENV`` (``child_env``).
"""

from __future__ import annotations

import atexit
import errno
import os
import signal
import subprocess
import sys
import threading
import time
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
for pgid in groups:  # a reaper (the group's leader) kills what left the group, then dies
    try:
        os.killpg(pgid, signal.SIGTERM)
    except OSError:
        pass
if groups:
    import time
    time.sleep(0.5)
for pgid in groups:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
"""

_reaper_text: str | None = None


def _reaper() -> str:
    """``probes/_reaper.py``: run as ``python -I -S -c <text> ARGV``, it runs ARGV and, when it
    ends or is told to stop (SIGTERM), kills every process ARGV left (it is their subreaper)."""
    global _reaper_text
    if _reaper_text is None:
        from harness.infra.resources import PROBES_DIR

        _reaper_text = (PROBES_DIR / "_reaper.py").read_text(encoding="utf-8")
    return _reaper_text


REAPS_TREE = sys.platform.startswith("linux")  # the wrapper needs prctl and /proc

# ``python -m X`` puts its working folder first on ``sys.path``: started where the user stands (the
# repository under review), a ``pip/``, ``json.py`` or ``harness/`` there would be imported instead
# of the installed one. The harness's own Python children leave it out (``-P``, Python 3.11+; on
# 3.10 ``-I``, which also leaves out PYTHON* variables and the user's site).
SAFE_PATH = ("-P",) if sys.version_info >= (3, 11) else ("-I",)


def own_module(module: str, *args: str) -> list[str]:
    """``python -m module args`` on the harness's own interpreter, its working folder off the path."""
    return [sys.executable, *SAFE_PATH, "-m", module, *args]


_lock = threading.Lock()
_pipe: dict[int, IO[bytes]] = {}  # pid of the harness → the watchdog's stdin (a fork gets its own)
_watchdogs: dict[int, subprocess.Popen[bytes]] = {}  # pid of the harness → its watchdog


def _reap_watchdog() -> None:
    """At a normal exit: close the pipe (the watchdog kills what is still registered, as when the
    harness dies otherwise) and wait for the watchdog, so that it is not left unwaited for."""
    proc = _watchdogs.pop(os.getpid(), None)
    _pipe.pop(os.getpid(), None)
    if proc is None:
        return
    locked = _lock.acquire(timeout=1)  # a daemon thread may hold it forever at exit
    try:
        if proc.stdin is not None:
            proc.stdin.close()
    except OSError:
        pass
    finally:
        if locked:
            _lock.release()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass  # it still ends when it reads the end of its pipe


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
        if not _watchdogs:
            atexit.register(_reap_watchdog)
        _watchdogs[os.getpid()] = proc
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
    """SIGKILL the child's whole group and reap the child (a child run under the reaper is first
    told to kill what it started, inside or outside its group)."""
    if getattr(proc, "harness_reaper", False) and proc.poll() is None:
        try:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def _check_runnable(program: str, cwd: Any, env: dict[str, str] | None) -> None:
    """Raise the ``OSError`` that ``Popen`` would for ``program`` (the reaper runs it in a fork,
    where the error would only be an exit code)."""
    if os.sep in program:
        path = os.path.join(str(cwd), program) if cwd is not None else program
        if not os.path.exists(path):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
        if os.path.isdir(path) or not os.access(path, os.X_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)
        return
    search = (env if env is not None else os.environ).get("PATH", os.defpath)
    import shutil  # (its compression modules are not every run's start-up)

    if shutil.which(program, path=search) is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)


def popen(
    argv: Sequence[str] | str, *, reap_tree: bool = False, **kw: Any
) -> subprocess.Popen[Any]:
    """``subprocess.Popen`` in a new process group registered with the watchdog (``unregister`` after reaping).

    ``reap_tree`` (a list ``argv``, Linux): run it under the reaper, so whatever it starts —
    in its group, in a session of its own, in the background — is killed when it ends."""
    kw["start_new_session"] = True
    wrapped = reap_tree and REAPS_TREE and not isinstance(argv, str) and not kw.get("shell")
    if wrapped:
        _check_runnable(str(argv[0]), kw.get("cwd"), kw.get("env"))
        argv = [sys.executable, "-I", "-S", "-c", _reaper(), *argv]
    proc = subprocess.Popen(argv, **kw)
    proc.harness_reaper = wrapped  # type: ignore[attr-defined]
    register(proc.pid)
    return proc


class Stopped(Exception):
    """A child given up by its caller (``run``'s ``stop``): killed with what it started."""


STOP_POLL = 0.05  # how often ``run`` looks at its ``stop`` event


def run(
    argv: Sequence[str] | str,
    *,
    input: Any = None,
    timeout: float | None = None,
    check: bool = False,
    capture_output: bool = False,
    stop: threading.Event | None = None,
    **kw: Any,
) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run`` whose child (and its descendants) die with the harness and on a timeout;
    with ``stop``, also once it is set (``Stopped`` then; such a run takes no ``input``: after its
    first wait, ``Popen.communicate`` would write no more of it)."""
    if stop is not None and input is not None:
        raise ValueError("process.run: a stoppable run takes no input")
    if capture_output:
        kw["stdout"] = kw["stderr"] = subprocess.PIPE
    if input is not None:
        kw["stdin"] = subprocess.PIPE
    proc = popen(argv, **kw)
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        with proc:
            try:
                while True:
                    left = None if deadline is None else max(0.0, deadline - time.monotonic())
                    wait = left if stop is None else min(STOP_POLL, left or STOP_POLL)
                    try:
                        out, err = proc.communicate(input, timeout=wait)
                        break
                    except subprocess.TimeoutExpired:
                        if stop is not None and stop.is_set():
                            kill_group(proc)
                            proc.communicate()
                            raise Stopped() from None
                        if deadline is None or time.monotonic() < deadline:
                            continue
                        raise
            except subprocess.TimeoutExpired:
                kill_group(proc)
                out, err = proc.communicate()
                raise subprocess.TimeoutExpired(
                    proc.args, timeout or 0.0, output=out, stderr=err
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
