"""Calls of one harness function run in a second interpreter, for Python work that would otherwise
share this process's GIL with the rest of a run (``fidelity``'s end states: about half a second of
line diffs on a 40-pick release range, while the main thread resolves sources and follow-ups).

    worker = Worker("harness.checks.fidelity.endstate", "end_states")  # starts, imports now
    future = worker.submit(args...)  # pickled to its stdin; calls run in order
    worker.close()                   # no more calls: it exits after the last answer

The interpreter is started early, so that its start-up and imports overlap the caller's own work.
It is a child like any other (``process.popen``: its own process group, killed with the harness,
git children included). Only this process and the one it started speak the pickle, over two
pipes; what is pickled is data the harness computed (the reviewed repository's lines among it),
which pickle carries as values. Whatever goes wrong with the worker (it cannot start, dies, or
answers nonsense), every call it has not answered runs here instead, in a thread: the results are
the same, only the second core is not used. An exception the function raises in the worker is
raised here by that in-process call, with this process's traceback.
"""

from __future__ import annotations

import atexit
import importlib
import os
import pickle
import queue
import struct
import sys
import threading
import weakref
from collections.abc import Callable
from typing import IO, Any

from harness.infra import process
from harness.infra.futures import Future

_SIZE = struct.Struct(">Q")
_open: weakref.WeakSet[Worker] = weakref.WeakSet()  # workers started by this process
_hooked: list[bool] = []


def _at_exit_once() -> None:
    """At exit, before the watchdog is told to end (``atexit`` runs the last registered first:
    the watchdog's was registered as the first worker started), wait for the workers closed but
    not yet reaped: a worker exits at its input's end, and one still registered then is what the
    watchdog kills, after which it waits half a second."""
    if not _hooked:
        _hooked.append(True)
        atexit.register(_workers_ended)


def _workers_ended() -> None:
    for worker in list(_open):
        worker._ended(5)


def _send(pipe: IO[bytes], obj: object) -> None:
    data = pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)
    pipe.write(_SIZE.pack(len(data)) + data)
    pipe.flush()


def _receive(pipe: IO[bytes]) -> Any:
    """The next message, or EOFError when the other side has closed."""
    head = pipe.read(_SIZE.size)
    if len(head) < _SIZE.size:
        raise EOFError
    size = _SIZE.unpack(head)[0]
    data = pipe.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


class Worker:
    """A second interpreter holding ``module`` imported, running ``function`` for each call."""

    def __init__(self, module: str, function: str) -> None:
        self.module, self.function = module, function
        self._lock = threading.Lock()
        self._pending: list[tuple[Future[Any], tuple[Any, ...]]] = []  # sent, not answered
        self._failed = False
        self._proc: process.Popen[bytes] | None = None
        try:
            self._proc = process.popen(
                process.own_module("harness.infra.offload", module, function, _where()),
                stdin=process.PIPE,
                stdout=process.PIPE,
                stderr=process.DEVNULL,
            )
        except OSError:
            self._failed = True
            return
        # Calls are written by a thread of their own: the worker reads the next one only when it
        # has answered the last, and the caller must not wait for that.
        self._outbox: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
        self._closed = False
        self._reader = threading.Thread(target=self._read, name="harness-offload-read", daemon=True)
        self._reader.start()
        threading.Thread(target=self._write, name="harness-offload-write", daemon=True).start()
        _at_exit_once()
        _open.add(self)

    def submit(self, *args: Any) -> Future[Any]:
        """``function(*args)``, answered by the worker (here when it cannot answer)."""
        fut: Future[Any] = Future()
        with self._lock:
            if not self._failed:
                self._pending.append((fut, args))
                self._outbox.put(args)
                return fut
        self._here(fut, args)
        return fut

    def close(self) -> None:
        """No more calls: the worker exits once it has answered the ones sent."""
        if self._proc is not None:
            self._closed = True
            self._outbox.put(None)

    def _ended(self, timeout: float) -> None:
        """Once closed: wait (at most ``timeout``) until the worker is reaped and unregistered;
        a worker with calls still unanswered (a run that failed or was interrupted) is killed
        first, as the watchdog would kill it, rather than waited for."""
        if not self._closed:
            return
        with self._lock:
            pending = bool(self._pending) and not self._failed
        if pending and self._proc is not None and self._proc.poll() is None:
            process.kill_group(self._proc)
        self._reader.join(timeout)

    def _write(self) -> None:
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        try:
            while (args := self._outbox.get()) is not None:
                _send(proc.stdin, args)
            proc.stdin.close()
        except (OSError, ValueError, pickle.PicklingError):
            with self._lock:
                self._fail_locked()
            process.kill_group(proc)

    def _read(self) -> None:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        try:
            while True:
                ok, value = _receive(proc.stdout)
                with self._lock:
                    fut, args = self._pending.pop(0)
                if ok:
                    fut.set_result(value)
                else:  # the function raised there: raise it here, with this process's traceback
                    self._here(fut, args)
        except Exception:  # noqa: BLE001 - EOF, a broken pipe, an answer that is no answer
            pass
        with self._lock:
            self._fail_locked()
        if proc.poll() is None:
            process.kill_group(proc)
        else:
            proc.wait()
        process.unregister(proc.pid)
        proc.stdout.close()

    def _fail_locked(self) -> None:
        """The worker answers no more: what it has not answered runs here."""
        self._failed = True
        pending, self._pending = self._pending, []
        for fut, args in pending:
            self._here(fut, args)

    def _here(self, fut: Future[Any], args: tuple[Any, ...]) -> None:
        def run() -> None:
            try:
                fut.set_result(self._target()(*args))
            except BaseException as exc:  # noqa: BLE001 - handed to whoever waits on the future
                fut.set_exception(exc)

        threading.Thread(target=run, name="harness-offload-here", daemon=True).start()

    def _target(self) -> Callable[..., Any]:
        return getattr(importlib.import_module(self.module), self.function)


def _where() -> str:
    """Where this process imported the harness from: the worker refuses to run another copy."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the harness package


def main(argv: list[str]) -> int:
    module, function, where = argv
    if _where() != where:
        return 3  # another copy of the harness on this interpreter's path: the caller runs it
    # The answers' pipe is this stream alone: anything the function prints goes to stderr.
    answers, sys.stdout = sys.stdout.buffer, sys.stderr
    target = getattr(importlib.import_module(module), function)
    while True:
        try:
            args = _receive(sys.stdin.buffer)
        except EOFError:
            return 0
        try:
            answer: tuple[bool, Any] = (True, target(*args))
        except Exception:  # noqa: BLE001 - the caller runs it again and raises it there
            answer = (False, None)
        _send(answers, answer)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
