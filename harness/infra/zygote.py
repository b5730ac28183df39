"""pytest runs forked from a zygote: a process of the project's Python that imported pytest once
(``probes/pytest_zygote.py``), so that the section's many pytest runs (columns, hunks, pins, lanes)
do not each import pytest and its plugins again (~0.13 CPU-s a run, most of a small run's cost).

A run goes through a zygote only where a fresh ``python -m pytest`` would have started the same:
the same interpreter, the same variables read at start-up (``PYTHON*`` but the path, locale,
``TZ``, ``LD_*``), no user site folder, and no top-level name in the tree (or another folder the
run puts on the path) that the zygote has imported (a tree that is pytest, pluggy or a module of
the standard library it shadows runs fresh). Everything else runs as a fresh process. The runs
forked from one zygote share its hash seed: ``fresh()`` starts another (a rerun looking for a
flaky outcome gets an interpreter of its own).

Only inside ``forking()`` (the tests section's runs, a mutation table's rows, collections of several
refs) or ``reusing()`` (a mutation row run as a task of a remote executor's worker); elsewhere
every run is a fresh process.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import json
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.infra import process, workarea
from harness.infra.resources import PROBES_DIR

_SOURCE = PROBES_DIR / "pytest_zygote.py"
_REAPER = PROBES_DIR / "_reaper.py"
_START_PREFIXES = ("PYTHON", "LC_", "LD_")
_START_NAMES = frozenset({"LANG", "LANGUAGE", "TZ"})
_RUNTIME = frozenset({"PYTHONPATH", "PYTHONBREAKPOINT"})  # read by the run, not at start-up
_ALWAYS_SHADOW = frozenset({"sitecustomize", "usercustomize"})  # imported at start-up by name
READY_TIMEOUT = 120.0


def _start_vars(env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The variables an interpreter reads once, at start-up."""
    return tuple(
        sorted(
            (k, v)
            for k, v in env.items()
            if (k.startswith(_START_PREFIXES) or k in _START_NAMES) and k not in _RUNTIME
        )
    )


def _entries(env: Mapping[str, str]) -> list[str]:
    """The folders ``PYTHONPATH`` puts on the path, in order."""
    return env["PYTHONPATH"].split(os.pathsep) if env.get("PYTHONPATH") else []


def _under(entry: str, folder: str) -> bool:
    return entry == folder or entry.startswith(folder.rstrip(os.sep) + os.sep)


def _names(folder: str) -> set[str]:
    """Top-level names a folder on the path offers to ``import``: ``x/``, ``x.py``, ``x.pyc``,
    ``x.so``, ``x.<tag>.so``, ``x.pyd`` (not ``pytest.ini``)."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return set()
    out: set[str] = set()
    for entry in entries:
        name = entry.name
        base, dot, _ = name.partition(".")
        try:
            folder_like = entry.is_dir()
        except OSError:
            folder_like = True
        if folder_like:
            out.add(name)
        elif dot and (name.endswith((".py", ".pyc", ".so", ".pyd")) or name == base + ".pyw"):
            out.add(base)
    return out


class _Slot:
    def __init__(self) -> None:
        self.pid = 0
        self.code: int | None = None
        self.started = threading.Event()
        self.done = threading.Event()


class Zygote:
    """One zygote process and the runs it forks; ``run`` answers None where it cannot serve."""

    def __init__(self, python: str, env: Mapping[str, str], fixed: Sequence[str]) -> None:
        self.python, self.fixed = python, list(fixed)
        self.start_vars = _start_vars(env)
        self.info: dict[str, Any] | None = None
        self._lock = threading.Lock()
        self._pending: collections.deque[_Slot] = collections.deque()
        self._by_pid: dict[int, _Slot] = {}
        self._ready = threading.Event()
        self._dead = False
        start = dict(env)
        start["PYTHONPATH"] = os.pathsep.join(self.fixed)
        self._home: Path | None = None
        try:
            self._home = workarea.mkdtemp("harness-zygote-")
            self.proc: subprocess.Popen[bytes] | None = process.popen(
                [python, "-c", _SOURCE.read_text(encoding="utf-8"), str(_REAPER)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=start,
                cwd=str(self._home),
            )
        except OSError:
            self.proc = None
            self._dead = True
            self._ready.set()
            return
        threading.Thread(target=self._read, name="harness-zygote", daemon=True).start()

    def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            kind, _, rest = line.partition(b" ")
            try:
                if kind == b"ready":
                    self.info = json.loads(rest)
                    self._ready.set()
                elif kind == b"pid":
                    with self._lock:
                        slot = self._pending.popleft()
                        slot.pid = int(rest)
                        if slot.pid:  # (0: it could not fork; the run goes fresh)
                            self._by_pid[slot.pid] = slot
                    slot.started.set()
                elif kind == b"exit":
                    pid, code = (int(x) for x in rest.split())
                    with self._lock:
                        slot = self._by_pid.pop(pid)
                    slot.code = code
                    slot.done.set()
            except (ValueError, KeyError, IndexError):
                break
        with self._lock:  # the zygote is gone: whatever waits on it ends (and runs fresh)
            self._dead = True
            left = [*self._pending, *self._by_pid.values()]
            self._pending.clear()
            self._by_pid.clear()
        self._ready.set()
        for slot in left:
            slot.started.set()
            slot.done.set()

    def path(self, argv: Sequence[str], cwd: str, env: Mapping[str, str]) -> list[str] | None:
        """The run's ``sys.path`` after its working folder (which the run puts first, as
        ``python -m`` does), or None where a forked run would not start as a fresh
        ``python -m pytest`` in ``cwd`` would."""
        if not self._ready.wait(READY_TIMEOUT):
            self._give_up()  # a zygote that never said it was ready serves no run
            return None
        if self.info is None or self._dead:
            return None
        if self.info.get("user_site") or list(argv[:3]) != [self.python, "-m", "pytest"]:
            return None
        if _start_vars(env) != self.start_vars:
            return None
        entries = _entries(env)
        if (
            not all(map(os.path.isabs, entries))
            or [e for e in entries if e in self.fixed] != self.fixed
        ):
            return None
        base = [str(p) for p in self.info.get("path", [])]
        if base[: len(self.fixed)] != self.fixed:
            return None
        own = [cwd, *(e for e in entries if e not in self.fixed)]
        imported = set(self.info.get("modules", [])) | _ALWAYS_SHADOW
        if any(_names(folder) & imported for folder in dict.fromkeys(own)):
            return None
        return [*entries, *base[len(self.fixed) :]]

    def run(
        self, argv: Sequence[str], cwd: str, env: Mapping[str, str], timeout: float | None
    ) -> subprocess.CompletedProcess[bytes] | None:
        """``argv`` forked from the zygote, as ``process.run`` with captured output would run it
        fresh (a timeout raises ``process.TimeoutExpired`` once the run's processes are dead);
        None where the zygote cannot serve it."""
        path = self.path(argv, cwd, env)
        if path is None or self.proc is None or self.proc.stdin is None:
            return None
        try:
            folder = workarea.mkdtemp("harness-forked-")
        except OSError:
            return None
        try:
            out, err = folder / "out", folder / "err"
            request = {"argv": list(argv[3:]), "cwd": cwd, "env": dict(env), "path": path}
            request.update(out=str(out), err=str(err))
            slot = self._send(request)
            if slot is None:
                return None
            process.register(slot.pid)
            try:
                if not slot.done.wait(timeout):
                    self._kill(slot)
                    raise subprocess.TimeoutExpired(
                        list(argv), timeout or 0, output=_read(out), stderr=_read(err)
                    )
            except subprocess.TimeoutExpired:
                raise
            except BaseException:
                self._kill(slot)
                raise
            finally:
                process.unregister(slot.pid)
            if slot.code is None:  # the zygote died under the run: once it is gone, run fresh
                _wait_gone(slot.pid)
                return None
            return subprocess.CompletedProcess(list(argv), slot.code, _read(out), _read(err))
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _send(self, request: dict[str, Any]) -> _Slot | None:
        """The request written and its run's reaper named (None: the zygote cannot take it)."""
        assert self.proc is not None and self.proc.stdin is not None
        slot = _Slot()
        with self._lock:
            if self._dead:
                return None
            try:
                self.proc.stdin.write(json.dumps(request).encode() + b"\n")
                self.proc.stdin.flush()
                self._pending.append(slot)
            except (OSError, ValueError):
                return None
            except BaseException:  # a request half written: the zygote's lines no longer pair
                self._dead = True
                self._stop()
                raise
        if not slot.started.wait(READY_TIMEOUT):
            self._give_up()
            return None
        return slot if slot.pid else None

    def _give_up(self) -> None:
        """The zygote serves no more runs (they run fresh): it is stopped."""
        with self._lock:
            self._dead = True
        self._stop()

    def _stop(self) -> None:
        if self.proc is not None:
            with contextlib.suppress(OSError):
                os.killpg(self.proc.pid, signal.SIGKILL)

    def _kill(self, slot: _Slot) -> None:
        """Stop a run as ``process.kill_group`` does: its reaper cleans up what it started."""
        if not slot.done.is_set():
            with contextlib.suppress(OSError):
                os.kill(slot.pid, signal.SIGTERM)
            if not slot.done.wait(5):
                with contextlib.suppress(OSError):
                    os.killpg(slot.pid, signal.SIGKILL)
                slot.done.wait(5)
        if slot.code is None:  # the zygote died: the reaper stops its run on its own
            _wait_gone(slot.pid)

    def close(self) -> None:
        """End the zygote (the end of its input stops the runs it still has) and wait for it."""
        proc = self.proc
        if proc is not None:
            with self._lock:
                with contextlib.suppress(OSError, ValueError):
                    if proc.stdin is not None:
                        proc.stdin.close()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill_group(proc)
            process.unregister(proc.pid)
        if self._home is not None:
            shutil.rmtree(self._home, ignore_errors=True)


def _wait_gone(pgid: int, seconds: float = 10.0) -> None:
    """Until the group ``pgid`` has no process left (a reaper stops its run and exits when its
    zygote dies), at most ``seconds``, then SIGKILL what is left of it."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except OSError:  # (ProcessLookupError: none left)
            return
        time.sleep(0.02)
    with contextlib.suppress(OSError):
        os.killpg(pgid, signal.SIGKILL)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


class Zygotes:
    """The zygotes of one ``forking()``: one per interpreter, shared path folders and start-up
    variables, started by the first run that asks for it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: dict[tuple[Any, ...], Zygote] = {}
        self._old: list[Zygote] = []
        self._spare: dict[tuple[Any, ...], Zygote] = {}
        self._renewed = False
        self.forked = 0  # runs served (the tests read it)

    def prestart(self, python: str, env: Mapping[str, str], *, spare: bool = False) -> None:
        """Start now the zygote that runs of ``python`` with ``env`` (plus their tree's folders
        on the path) fork from, its import beside the caller's work; ``spare``: also the one
        ``fresh()`` hands on (none once ``fresh()`` was called: the reruns' own is the last)."""
        entries = _entries(env)
        key = (python, tuple(entries), _start_vars(env))
        with self._lock:
            if key not in self._live:
                self._live[key] = Zygote(python, env, entries)
            if spare and not self._renewed and key not in self._spare:
                self._spare[key] = Zygote(python, env, entries)

    def run(
        self, argv: Sequence[str], cwd: str, env: Mapping[str, str], timeout: float | None
    ) -> subprocess.CompletedProcess[bytes] | None:
        if len(argv) < 3 or not os.path.isabs(argv[0]):
            return None
        entries = _entries(env)
        fixed = tuple(e for e in entries if not _under(e, cwd))
        key = (argv[0], fixed, _start_vars(env))
        with self._lock:
            zygote = self._live.get(key)
            if zygote is None:
                zygote = self._live[key] = Zygote(argv[0], env, fixed)
        done = zygote.run(argv, cwd, env, timeout)
        if done is not None:
            with self._lock:
                self.forked += 1
        return done

    def fresh(self) -> None:
        """Later runs fork from new zygotes (the ones started so far end with the others)."""
        with self._lock:
            self._old += self._live.values()
            self._live, self._spare = self._spare, {}
            self._renewed = True

    def close(self) -> None:
        with self._lock:
            every = [*self._old, *self._live.values(), *self._spare.values()]
            self._old, self._live, self._spare = [], {}, {}
        for zygote in every:
            zygote.close()


_active: Zygotes | None = None
_nesting = threading.Lock()


@contextlib.contextmanager
def _activated(make: Callable[[], Zygotes], *, close: bool) -> Iterator[Zygotes]:
    """``make()``'s zygotes active within it (closed at its end with ``close``); within an active
    one (another thread's, an outer call), that one serves."""
    global _active
    with _nesting:
        outer = _active
        mine = outer if outer is not None else make()
        _active = mine
    if outer is not None:
        yield outer
        return
    try:
        yield mine
    finally:
        with _nesting:
            _active = None
        if close:
            mine.close()


def forking() -> contextlib.AbstractContextManager[Zygotes]:
    """Within it, ``run`` forks eligible pytest runs from zygotes; they end with it."""
    return _activated(Zygotes, close=True)


_kept: list[Zygotes] = []  # this process's own, for ``reusing()``


def reusing() -> contextlib.AbstractContextManager[Zygotes]:
    """``forking()`` whose zygotes stay for this process's later runs (an executor's worker, one
    task after another); they end at the process's exit, and with it (the watchdog)."""
    return _activated(_process_zygotes, close=False)


def _process_zygotes() -> Zygotes:
    if not _kept:
        _kept.append(Zygotes())
        atexit.register(_kept[0].close)
    return _kept[0]


def run(
    argv: Sequence[str], cwd: str, env: Mapping[str, str], timeout: float | None
) -> subprocess.CompletedProcess[bytes] | None:
    """A pytest run forked from a zygote of the active ``forking()``, or None (run it fresh)."""
    zygotes = _active
    if zygotes is None or not process.REAPS_TREE:
        return None
    return zygotes.run(argv, cwd, env, timeout)


def prestart(python: str, env: Mapping[str, str], *, spare: bool = False) -> None:
    """``Zygotes.prestart`` in the active ``forking()`` (none: nothing)."""
    zygotes = _active
    if zygotes is not None and process.REAPS_TREE:
        zygotes.prestart(python, env, spare=spare)
