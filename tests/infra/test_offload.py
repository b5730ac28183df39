"""harness/infra/offload.py: calls answered by a second interpreter, and by this one when it cannot."""

from __future__ import annotations

import json
import os
import signal

import pytest

from harness.checks.fidelity.check import fidelity_section
from harness.checks.fidelity.endstate import diff_at
from harness.git import GitRepo
from harness.infra.offload import Worker
from harness.report.model import Section

A = [b"a", b"b", b"c", b"d", b"e"]
B = [b"a", b"x", b"c", b"e", b"f"]


def test_calls_are_answered_in_order_by_the_worker_as_here():
    worker = Worker("harness.checks.fidelity.endstate", "diff_at")
    pid = worker._proc.pid if worker._proc else None
    futures = [worker.submit(A, B), worker.submit(B, A), worker.submit(A, A)]
    worker.close()
    assert [f.result(timeout=60) for f in futures] == [diff_at(A, B), diff_at(B, A), []]
    assert pid is not None and worker._proc is not None
    assert worker._proc.wait(timeout=60) == 0  # it exits once the calls are answered


def test_an_exception_in_the_worker_is_raised_here():
    worker = Worker("harness.checks.fidelity.endstate", "diff_at")
    bad = worker.submit(None, A)
    good = worker.submit(A, B)
    worker.close()
    with pytest.raises(TypeError):
        bad.result(timeout=60)
    assert good.result(timeout=60) == diff_at(A, B)  # the worker went on with the next call


def test_a_worker_killed_midway_leaves_its_calls_to_this_process():
    worker = Worker("harness.checks.fidelity.endstate", "diff_at")
    assert worker._proc is not None
    os.killpg(worker._proc.pid, signal.SIGKILL)
    futures = [worker.submit(A, B) for _ in range(3)]
    worker.close()
    assert [f.result(timeout=60) for f in futures] == [diff_at(A, B)] * 3


def test_a_worker_of_another_harness_copy_is_not_used(monkeypatch):
    monkeypatch.setattr("harness.infra.offload._where", lambda: "/nowhere/harness")
    worker = Worker("harness.checks.fidelity.endstate", "diff_at")
    future = worker.submit(A, B)
    worker.close()
    assert future.result(timeout=60) == diff_at(A, B)
    assert worker._proc is not None and worker._proc.wait(timeout=60) == 3


def _picks(builder, n: int) -> str:
    body = "".join(f"line_{i} = {i}\n" for i in range(4 * n))
    builder.commit("base", {"f.py": body, "g.py": body})
    builder.branch("release")
    builder.commit("Main only (#1)", {"g.py": "# main\n" + body})
    srcs = []
    for k in range(n):
        body = body.replace(f"line_{4 * k} = ", f"line_{4 * k} = 1")
        srcs.append(builder.commit(f"Fix {k} (#{100 + k})", {"f.py": body}))
    builder.checkout("release")
    fork = builder.rev("HEAD")
    for s in srcs:
        builder.cherry_pick(s, "-x")
    # A release-only commit moves the file and edits it: HEAD holds the picks' lines elsewhere.
    builder.move("f.py", "h.py")
    builder.commit("Move f.py", {"h.py": (builder.path / "h.py").read_text() + "tail = 1\n"})
    return fork


def test_fidelity_with_a_worker_reports_what_it_reports_without(builder, monkeypatch):
    """From OFFLOAD_PICKS picks on the end states come from the worker: the same section."""
    import harness.checks.fidelity.check as fidelity

    fork = _picks(builder, 4)
    repo = GitRepo(builder.path)
    started: list[Worker] = []
    monkeypatch.setattr(
        "harness.infra.offload.Worker", lambda *a: started.append(Worker(*a)) or started[-1]
    )
    monkeypatch.setattr(fidelity, "_cores", lambda: 2)  # a one-CPU runner would never offload
    monkeypatch.setattr(fidelity, "OFFLOAD_PICKS", 10**6)
    here = fidelity_section(repo, fork, "release", "main")
    assert not started
    monkeypatch.setattr(fidelity, "OFFLOAD_PICKS", 1)
    there = fidelity_section(repo, fork, "release", "main")
    assert len(started) == 1 and started[0]._proc is not None
    assert started[0]._proc.wait(timeout=60) == 0  # it ran and exited, not fell back
    assert there.data == here.data
    # Each later pick changed the file again, and a release commit of the range moved and grew it:
    # the worker was sent the picks' lines at the path HEAD holds the file at (h.py) too.
    statuses = [p["end_state"][0]["status"] for p in there.data["picks"] if p["end_state"]]
    assert statuses == ["other-picks"] * 4


def test_what_the_function_prints_does_not_reach_the_answers():
    worker = Worker("builtins", "print")  # prints to stdout, answers None
    futures = [worker.submit("not an answer"), worker.submit("nor this")]
    worker.close()
    assert [f.result(timeout=60) for f in futures] == [None, None]
    assert worker._proc is not None and worker._proc.wait(timeout=60) == 0  # answered there


def test_a_worker_starts_only_for_rows_the_index_does_not_keep(builder, monkeypatch, tmp_path):
    """With end-state rows kept in the history index, a re-run computes none and starts no worker;
    one that must compute OFFLOAD_PICKS picks' rows starts it then, with the same answer."""
    import harness.checks.fidelity.check as fidelity
    from harness.infra.history_index import HistoryIndex

    fork = _picks(builder, 4)
    started: list[Worker] = []
    monkeypatch.setattr(
        "harness.infra.offload.Worker", lambda *a: started.append(Worker(*a)) or started[-1]
    )
    monkeypatch.setattr(fidelity, "_cores", lambda: 2)  # a one-CPU runner would never offload
    monkeypatch.setattr(fidelity, "OFFLOAD_PICKS", 1)
    plain = fidelity_section(GitRepo(builder.path), fork, "release", "main")

    def run() -> Section:
        repo = GitRepo(builder.path)
        index = HistoryIndex(repo, tmp_path / "index")
        section = fidelity.fidelity_check(repo, fork, "release", "main", index=index).section
        index.save()
        for answer in (tmp_path / "index").rglob("results/*.json"):
            answer.unlink()  # not served whole: the rows are what is tested
        return section

    assert run().data == plain.data and len(started) == 2  # cold: started up front
    assert run().data == plain.data and len(started) == 2  # every row kept: none started
    for memo in (tmp_path / "index").rglob("memo-end-state.json"):  # kept, but of no use
        data = json.loads(memo.read_text())
        data["entries"] = {k: [v[0], "not a row"] for k, v in data["entries"].items()}
        memo.write_text(json.dumps(data))
    assert run().data == plain.data and len(started) == 3  # rows to compute: started for them


_CLOSED_AT_EXIT = r"""
import atexit, sys
from pathlib import Path
from harness.infra.offload import Worker

out = Path(sys.argv[1])
worker = None
# Registered first, so run last: what became of the worker once every other callback ran.
atexit.register(lambda: out.write_text(repr(worker._proc.returncode)))
worker = Worker("harness.checks.fidelity.endstate", "diff_at")
assert worker.submit([b"a"], [b"b"]).result(timeout=60)
worker.close()  # and the process ends at once
"""


def test_a_worker_closed_as_the_process_ends_exits_on_its_own(tmp_path):
    """A process that closes its worker and ends at once waits (``atexit``) for the worker to
    leave on its input's end: it is not left registered for the watchdog to kill (SIGTERM, then
    half a second) as the process ends."""
    for i in range(3):
        assert _worker_code_at_exit(_CLOSED_AT_EXIT, tmp_path / f"code-{i}") == "0"


def _worker_code_at_exit(script: str, out) -> str:
    """Run ``script`` (it writes its worker's exit status at its process's very end into ``out``)
    in a process of its own; that status."""
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", script, str(out)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return out.read_text()


_UNANSWERED_AT_EXIT = r"""
import atexit, sys
from pathlib import Path
from harness.infra.offload import Worker

out = Path(sys.argv[1])
worker = None
atexit.register(lambda: out.write_text(repr(worker._proc.returncode)))  # (runs last)
worker = Worker("time", "sleep")
worker.submit(120)  # a call still unanswered when the process ends (a run that failed)
worker.close()
"""


def test_a_worker_with_calls_unanswered_at_exit_is_killed_not_waited_for(tmp_path):
    """A run that fails or is interrupted closes its worker with calls still queued: at exit it
    is killed (its group, as the watchdog would) and reaped, not waited for."""
    assert _worker_code_at_exit(_UNANSWERED_AT_EXIT, tmp_path / "code") == str(-signal.SIGKILL)
