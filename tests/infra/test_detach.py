"""The history index written by a detached process once the report is out (infra/detach.py):
the run ends while its writer still writes, keeps none of the run's pipes open, leaves no zombie
to a caller in-process, and a run opening the index waits for it; ``HARNESS_CACHE_WRITES=inline``
writes in the run itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from harness.infra import detach
from harness.infra.history_index import wait_for_writers
from harness.testing.repos import RepoBuilder

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")

A = "".join(f"a_{i} = {i}\n" for i in range(30))

# The real command line (``cli.main()``: the process's own, ended by ``_end_process``), its writer
# made to wait for a gate file before it writes anything.
_GATED = r"""
import os, sys, time
from pathlib import Path
from harness.infra import history_index

gate, real = Path(sys.argv[1]), history_index.HistoryIndex._after_fork

def after_fork(self, fd):
    real(self, fd)
    deadline = time.monotonic() + 120
    while not gate.exists() and time.monotonic() < deadline:
        time.sleep(0.01)

history_index.HistoryIndex._after_fork = after_fork
sys.argv = ["harness", *sys.argv[2:]]
from harness.cli import main
main()
"""


def _repo(root: Path) -> tuple[RepoBuilder, str]:
    b = RepoBuilder(root)
    b.commit("base", {"a.py": A})
    b.branch("release")
    made, a = [], A
    for i in range(1, 4):
        a = a.replace(f"a_{3 * i} = {3 * i}\n", f"a_{3 * i} = {300 * i}\n")
        made.append(b.commit(f"Raise a_{3 * i} (#{i})", {"a.py": a}))
    b.checkout("release")
    base = b.rev("HEAD")
    for sha in made:
        b.cherry_pick(sha, "-x")
    return b, base


def _argv(repo: Path, base: str, out: Path) -> list[str]:
    return [
        "fidelity",
        f"{base}..release",
        "--source",
        "main",
        "--repo",
        str(repo),
        "--format",
        "json",
        "--output",
        str(out),
    ]


def _index_files(cache: Path) -> list[str]:
    """The index's own file and its kept answers (``results/``), as names."""
    own = [p.name for p in (cache / "history").glob("*/index.json")]
    return own + sorted(p.suffix for p in (cache / "history").glob("*/results/*"))


def test_the_run_ends_before_its_writer_which_holds_none_of_its_pipes(tmp_path: Path) -> None:
    b, base = _repo(tmp_path / "repo")
    cache, gate = tmp_path / "cache", tmp_path / "gate"
    env = {**os.environ, "HARNESS_CACHE_DIR": str(cache)}
    env.pop("HARNESS_CACHE_WRITES", None)
    out = tmp_path / "out.json"
    argv = [sys.executable, "-c", _GATED, str(gate), *_argv(b.path, base, out)]
    try:
        # The pipes are read to their end: a writer holding one would keep this waiting (timeout).
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(out.read_text())["sections"][0]["id"] == "fidelity"
        assert _index_files(cache) == [], "the index was written before the run ended"
    finally:
        gate.touch()  # (never a writer left waiting for its gate)
    wait_for_writers(cache)
    assert _index_files(cache) == ["index.json", ".json", ".txt"]
    assert not list(cache.rglob(".tmp-*"))


def test_a_run_opening_the_index_waits_for_the_writer(tmp_path: Path, run_cli, monkeypatch) -> None:
    """The second run starts while the first one's writer is held at its gate, nothing written:
    it waits for it (the index's lock) and is served the whole answer the writer kept."""
    b, base = _repo(tmp_path / "repo")
    cache, gate = tmp_path / "cache", tmp_path / "gate"
    env = {**os.environ, "HARNESS_CACHE_DIR": str(cache)}
    env.pop("HARNESS_CACHE_WRITES", None)
    argv = [sys.executable, "-c", _GATED, str(gate), *_argv(b.path, base, tmp_path / "one.json")]
    assert subprocess.run(argv, env=env, capture_output=True, timeout=120).returncode == 0
    threading.Timer(0.5, gate.touch).start()
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(cache))
    from harness.infra import history_index

    opened: list[history_index.HistoryIndex] = []
    real = history_index.open_index

    def spy(*a, **kw):
        index = real(*a, **kw)
        opened.append(index)
        return index

    monkeypatch.setattr(history_index, "open_index", spy)
    code, _, err = run_cli(*_argv(b.path, base, tmp_path / "two.json"))
    assert code == 0, err
    # Served whole: the answer the writer kept once its gate opened, not a rebuilt one.
    assert opened and opened[0].served["answers"] == 1, opened[0].served
    one, two = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("one", "two"))
    assert one["sections"] == two["sections"]


def test_inline_writes_fork_nothing(tmp_path: Path, run_cli, monkeypatch) -> None:
    b, base = _repo(tmp_path / "repo")
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HARNESS_CACHE_WRITES", "inline")

    def no_fork() -> int:
        raise AssertionError("forked with HARNESS_CACHE_WRITES=inline")

    monkeypatch.setattr(detach.os, "fork", no_fork)
    code, _, err = run_cli(*_argv(b.path, base, tmp_path / "out.json"))
    assert code == 0, err
    assert _index_files(tmp_path / "cache") == ["index.json", ".json", ".txt"]  # no wait


def _zombies() -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if fields[0] == "Z" and int(fields[1]) == os.getpid():
                out.append(int(entry))
    return out


def test_a_caller_in_process_is_left_no_zombie(tmp_path: Path, run_cli, monkeypatch) -> None:
    b, base = _repo(tmp_path / "repo")
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("HARNESS_CACHE_WRITES", raising=False)
    forked: list[int] = []
    real = detach.os.fork

    def fork() -> int:
        pid = real()
        if pid:
            forked.append(pid)
        return pid

    monkeypatch.setattr(detach.os, "fork", fork)
    code, _, err = run_cli(*_argv(b.path, base, tmp_path / "out.json"))
    assert code == 0, err
    assert len(forked) == 1
    wait_for_writers(tmp_path / "cache")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (
        forked[0] in _zombies() or any(t.name == "harness-writer" for t in threading.enumerate())
    ):
        time.sleep(0.02)
    assert forked[0] not in _zombies()
    assert _index_files(tmp_path / "cache") == ["index.json", ".json", ".txt"]


def test_no_process_to_be_had_writes_in_the_run(tmp_path: Path, run_cli, monkeypatch) -> None:
    """A fork refused (a process limit) is no failure of the run: its writes are made in it."""
    import errno

    b, base = _repo(tmp_path / "repo")
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("HARNESS_CACHE_WRITES", raising=False)

    def refused() -> int:
        raise OSError(errno.EAGAIN, os.strerror(errno.EAGAIN))

    monkeypatch.setattr(detach.os, "fork", refused)
    code, _, err = run_cli(*_argv(b.path, base, tmp_path / "out.json"))
    assert code == 0 and "internal error" not in err, err
    assert _index_files(tmp_path / "cache") == ["index.json", ".json", ".txt"]
    assert not list((tmp_path / "cache").rglob(".tmp-*"))


def test_without_proc_the_writer_finds_its_descriptors_otherwise(
    tmp_path: Path, run_cli, monkeypatch
) -> None:
    """Where /proc/self/fd cannot be listed, the writer tries each descriptor: the index is still
    written (the writer does not give up at its start)."""
    b, base = _repo(tmp_path / "repo")
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("HARNESS_CACHE_WRITES", raising=False)
    real = detach.os.listdir

    def listdir(path: str = ".") -> list[str]:
        if str(path) == "/proc/self/fd":
            raise FileNotFoundError(path)
        return real(path)

    monkeypatch.setattr(detach.os, "listdir", listdir)
    code, _, err = run_cli(*_argv(b.path, base, tmp_path / "out.json"))
    assert code == 0, err
    wait_for_writers(tmp_path / "cache")
    assert _index_files(tmp_path / "cache") == ["index.json", ".json", ".txt"]


def test_a_run_served_whole_forks_no_writer(tmp_path: Path, run_cli, monkeypatch) -> None:
    """A warm run has nothing to write but the touch of the answers it used: done in the run, no
    process forked for it."""
    b, base = _repo(tmp_path / "repo")
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("HARNESS_CACHE_WRITES", raising=False)
    argv = _argv(b.path, base, tmp_path / "out.json")
    assert run_cli(*argv)[0] == 0
    wait_for_writers(tmp_path / "cache")

    def no_fork() -> int:
        raise AssertionError("forked for a run served whole")

    monkeypatch.setattr(detach.os, "fork", no_fork)
    code, _, err = run_cli(*argv)
    assert code == 0, err


def test_a_reader_that_left_still_leaves_the_index_written(tmp_path: Path) -> None:
    """``| true`` (the report's reader gone, exit 141): the run's work is kept all the same."""
    b, base = _repo(tmp_path / "repo")
    cache = tmp_path / "cache"
    env = {**os.environ, "HARNESS_CACHE_DIR": str(cache)}
    env.pop("HARNESS_CACHE_WRITES", None)
    argv = [*_argv(b.path, base, tmp_path / "unused.json")][:-2]  # the report on stdout
    cmd = " ".join([sys.executable, "-m", "harness", *argv])
    proc = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {cmd} | true"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 141, proc.stderr
    wait_for_writers(cache)
    assert _index_files(cache) == ["index.json", ".json", ".txt"]


def test_a_harness_error_after_the_history_was_read_keeps_what_it_read(
    tmp_path: Path, run_cli, monkeypatch
) -> None:
    """A run that fails inside the check (exit 3) writes what it learned, as a run writing in
    place did in its ``finally``; bad input (exit 2) writes nothing."""
    import harness.checks.fidelity.check as check

    b, base = _repo(tmp_path / "repo")
    cache = tmp_path / "cache"
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(cache))
    monkeypatch.delenv("HARNESS_CACHE_WRITES", raising=False)
    bad = [*_argv(b.path, base, tmp_path / "out.json")]
    bad[bad.index("main")] = "no-such-source"  # refused once the index is open (judge_range)
    code, _, err = run_cli(*bad)
    assert code == 2 and "no-such-source" in err, err
    wait_for_writers(cache)
    assert not (cache / "history").exists() or _index_files(cache) == []

    def broken(*args: object, **kw: object) -> object:
        raise RuntimeError("a harness bug in the section")

    monkeypatch.setattr(check, "build_section", broken)
    code, _, err = run_cli(*_argv(b.path, base, tmp_path / "out.json"))
    assert code == 3 and "a harness bug in the section" in err, err
    wait_for_writers(cache)
    assert _index_files(cache) == ["index.json"]  # the history; no answer was built


# The command line again, its end watched: an ``atexit`` callback of the run marks its turn, the
# writer notes whether the run's end (its ``atexit`` callbacks, its threads joined) was over when
# it was forked, and whether it was the only thread forked.
_LAST = r"""
import atexit, os, sys, threading
from pathlib import Path
from harness.infra import detach, history_index

marks, real = Path(sys.argv[1]), history_index.HistoryIndex._after_fork
if os.environ.get("REFUSE_FORK"):
    import errno

    def refused():
        raise OSError(errno.EAGAIN, os.strerror(errno.EAGAIN))

    detach.os.fork = refused

def after_fork(self, fd):
    real(self, fd)
    ended = (marks / "atexit").exists()
    (marks / "writer").write_text(f"{ended} {threading.active_count()}")

history_index.HistoryIndex._after_fork = after_fork
atexit.register(lambda: (marks / "atexit").write_text("ran"))
sys.argv = ["harness", *sys.argv[2:]]
from harness.cli import main
main()
"""


def test_the_writer_is_forked_once_the_run_s_end_is_over(tmp_path: Path) -> None:
    """A command line run forks its writer as its last act (``detach.hold``/``end_process``):
    after its ``atexit`` callbacks ran and its threads were joined, so that no page of the heap
    the writer shares is written after it. The exit code and the report are the run's."""
    b, base = _repo(tmp_path / "repo")
    cache, marks = tmp_path / "cache", tmp_path / "marks"
    marks.mkdir()
    env = {**os.environ, "HARNESS_CACHE_DIR": str(cache)}
    env.pop("HARNESS_CACHE_WRITES", None)
    out = tmp_path / "out.json"
    argv = [sys.executable, "-c", _LAST, str(marks), *_argv(b.path, base, out)]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    first = json.loads(out.read_text())["sections"]
    assert first[0]["id"] == "fidelity"
    wait_for_writers(cache)
    assert (marks / "writer").read_text() == "True 1"
    assert _index_files(cache) == ["index.json", ".json", ".txt"]
    # The second run is served whole by what the writer kept, and says the same.
    (marks / "writer").unlink()
    again = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert not (marks / "writer").exists()
    assert json.loads(out.read_text())["sections"] == first


def test_a_fork_refused_at_the_end_writes_in_the_run(tmp_path: Path) -> None:
    """With no process to be had at the command line's end, the held writer's jobs run in the
    run itself before it exits (the index is there when it has ended), and its code stands."""
    b, base = _repo(tmp_path / "repo")
    cache, marks = tmp_path / "cache", tmp_path / "marks"
    marks.mkdir()
    env = {**os.environ, "HARNESS_CACHE_DIR": str(cache), "REFUSE_FORK": "1"}
    env.pop("HARNESS_CACHE_WRITES", None)
    out = tmp_path / "out.json"
    argv = [sys.executable, "-c", _LAST, str(marks), *_argv(b.path, base, out)]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "internal error" not in proc.stderr, proc.stderr
    assert _index_files(cache) == ["index.json", ".json", ".txt"]  # no wait: written already
    assert not (marks / "writer").exists()  # (no child: the jobs ran here)
    assert not list(cache.rglob(".tmp-*"))
