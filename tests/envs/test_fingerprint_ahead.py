"""An interpreter's description asked ahead (the tests section asks it beside the fidelity check):
the run's first call takes that answer, the same a call would get; one not taken is dropped at the
run's end, so no later run is served it."""

from __future__ import annotations

import sys

from harness.envs import fingerprint
from harness.envs.fingerprint import Ahead, interpreter_fingerprint


def test_the_first_call_takes_the_answer_asked_ahead(monkeypatch):
    calls: list[str] = []
    real = fingerprint.describe

    def counted(python: str) -> tuple[str, list[str]]:
        calls.append(python)
        return real(python)

    monkeypatch.setattr(fingerprint, "describe", counted)
    ahead = Ahead(sys.executable)
    got = interpreter_fingerprint(sys.executable)
    assert calls == [sys.executable]  # described once, in the thread
    assert got == real(sys.executable)[0] and not got.startswith("unusable")
    interpreter_fingerprint(sys.executable)  # taken: a second call describes again
    assert calls == [sys.executable] * 2
    ahead.close()


def test_one_not_taken_is_dropped_and_a_failed_one_is_asked_again(monkeypatch):
    ahead = Ahead(sys.executable)
    ahead.close()
    assert sys.executable not in fingerprint._AHEAD

    def broken(python: str) -> tuple[str, list[str]]:
        raise OSError("no such interpreter")

    monkeypatch.setattr(fingerprint, "describe", broken)
    failed = Ahead(sys.executable)
    failed.asked.thread.join()
    monkeypatch.setattr(fingerprint, "describe", lambda p: ("fp:" + p, []))
    assert interpreter_fingerprint(sys.executable) == "fp:" + sys.executable
