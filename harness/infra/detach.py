"""Work the user does not wait for: the history index's writes, run by a process forked once the
report is out, so that a run ends when its answer is written, not when its cache is.

The writer is a child reaped by a thread of the run's process (a command line run ends first:
init reaps it), its standard streams on /dev/null (a pipe reading the run's output sees its
end when the run ends), deaf to the terminal's Ctrl-C and hang-up (the run it belongs to is over;
its writes are atomic, and a writer killed anyway leaves temporary files the next writer removes)
and ended by SIGALRM after ``LIMIT_S`` should it ever hang. Linux only (as the zygote):
elsewhere, or with ``HARNESS_CACHE_WRITES=inline``, the same work runs in the run's own
process, as before."""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

LIMIT_S = 120  # a writer still alive after this is stuck: SIGALRM ends it (its lock goes with it)
ENV = "HARNESS_CACHE_WRITES"  # "inline": write in the run's own process

# A writer: its jobs, what it runs first in the child (given the descriptor it keeps), that one.
_Writer = tuple[Sequence[Callable[[], object]], Callable[[int], None], int]
_held: list[_Writer] | None = None  # writers held back by ``hold`` until ``end_process``
# Signals that would unwind a child through the run's own code before it takes its own handlers.
_HELD_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT}


def detachable() -> bool:
    """Whether writes may be left to a detached process here: not as a container's first process
    (its end ends every other process of the container, the writer's too)."""
    if os.environ.get(ENV, "").strip().lower() == "inline" or os.getpid() == 1:
        return False
    return sys.platform.startswith("linux") and hasattr(os, "fork")


def hold() -> None:
    """The command line's own process: from now on a writer is forked by ``end_process``, as the
    process's last act, not where the run asks for it. Forked mid-run, the writer shares every
    page of the run's heap, and each page the run's end then writes (freed objects, joined
    threads, its exit) is copied first: ~15 ms of a run of 0.2 s."""
    global _held
    if _held is None:
        _held = []


def run_detached(
    jobs: Sequence[Callable[[], object]], in_child: Callable[[int], None], keep_fd: int
) -> None:
    """Run ``jobs`` in order in a detached child (``in_child(fd)`` first, there), which keeps
    ``keep_fd`` of this process's file descriptors (every other on /dev/null); return once it is
    started, or once it is held for ``end_process`` (after ``hold``: the caller's ``keep_fd`` is
    then kept by a copy of it). A job's exception ends that job, not the others."""
    if _held is not None:
        _held.append((list(jobs), in_child, os.dup(keep_fd)))  # (a lock's descriptor: held on)
        return
    pid = _fork()
    if pid:
        # Reaped when it ends, should this process outlive it (a caller in-process); a command
        # line run ends first, and the writer is then init's to reap.
        try:
            threading.Thread(target=_reap, args=(pid,), name="harness-writer", daemon=True).start()
        except RuntimeError:  # no thread to be had: reaped when this process ends
            pass
        return
    _child([(jobs, in_child, keep_fd)])


def end_process(code: int) -> None:
    """End this process with ``code`` now, once the writers held since ``hold`` are forked (one
    child for all, in the order they were held); return where none is held. Its threads are
    joined, its ``atexit`` callbacks run and its streams flushed already: the caller's end is
    over. With no process to be had, their jobs run here (and then this returns)."""
    writers = _held or []
    _held_clear()
    if not writers:
        return
    try:
        pid = _fork()
    except OSError:  # written here, as the writer would, each taking its lock again
        for jobs, _, fd in writers:
            os.close(fd)
            for job in jobs:
                try:
                    job()
                except Exception:  # noqa: BLE001 - (the run's answer is out: its end stays)
                    continue
        return
    if pid:
        os._exit(code)
    _child(writers)


def _held_clear() -> None:
    global _held
    _held = None


def _fork() -> int:
    """``os.fork()``, the signals that would unwind the child through the run's own code before
    it takes its own handlers blocked until it has them (the parent's are delivered once it is
    forked)."""
    held = _HELD_SIGNALS
    signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        with warnings.catch_warnings():  # (3.12+: "multi-threaded, fork() may deadlock": _writer)
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except BaseException:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
        raise
    if pid:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
    return pid


def _child(writers: Sequence[_Writer]) -> None:
    try:
        _writer(writers, _HELD_SIGNALS)
    finally:
        os._exit(0)  # never the caller's atexit handlers, never its buffered output


def _open_fds() -> set[int]:
    """This process's open descriptors: from /proc where there is one, else each tried."""
    try:
        return set(map(int, os.listdir("/proc/self/fd")))
    except OSError:
        import resource

        limit = min(resource.getrlimit(resource.RLIMIT_NOFILE)[0], 65536)
        out = set()
        for fd in range(3, limit if limit > 0 else 4096):
            try:
                os.fstat(fd)
            except OSError:
                continue
            out.add(fd)
        return out


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _writer(
    writers: Sequence[_Writer],
    held: set[signal.Signals],
) -> None:
    """The child. Only the forking thread lives on here: the jobs take no lock another thread
    may have held (each writer's ``in_child`` makes its own locks anew), submit no work to a
    thread pool and start no process. The descriptors it inherited (pipes to the run's git
    processes, workers and watchdog, whose ends wait for them to close) point at /dev/null but
    the writers' own: they stay taken, so that no object closing one of them later closes a file
    of the writer's."""
    keep = {fd for _, _, fd in writers}
    try:
        gc.disable()  # a short-lived copy of a large heap: the collector would touch every page
        for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGTSTP):
            signal.signal(sig, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
        signal.alarm(LIMIT_S)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in sorted({0, 1, 2} | _open_fds()):
            if fd not in keep and fd != null:
                try:
                    os.dup2(null, fd)
                except OSError:
                    pass  # (the listing's own descriptor, closed since)
        os.close(null)
        sys.stdin = open(os.devnull)
        sys.stdout = sys.stderr = open(os.devnull, "w")
    except BaseException:
        os._exit(0)
    for jobs, in_child, fd in writers:
        try:
            in_child(fd)
        except BaseException:
            continue
        for job in jobs:
            try:
                job()
            except BaseException:  # a cache that was not written costs the next run speed only
                continue


def wait_unlocked(lock: Path, limit_s: float = 10.0) -> None:
    """Wait (at most ``limit_s``) while a writer holds ``lock`` (a flock taken exclusive): a run
    just ended may still be writing what it learned. Readers need no lock (every file is
    replaced whole): past the limit, what is there is read."""
    import fcntl
    import time

    try:
        fd = os.open(lock, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return  # nothing written there yet
    try:
        deadline = time.monotonic() + limit_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    return
                time.sleep(0.005)
            except OSError:
                return
    finally:
        os.close(fd)
