"""The cache a user can trust (issue 41), on a real repository's history: every kept file (sections,
whole answers, memos, the index, its packs, code.json) truncated, bit-flipped or edited into another
well-formed answer; a read-only cache; a full disk; kill -9 at many points while the index is
written. Each time the next report equals a cold ``--no-cache`` run, and stderr says why."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from harness.infra.history_index import wait_for_writers
from harness.testing.repos import RepoBuilder

A = "".join(f"a_{i} = {i}\n" for i in range(30))
B = "".join(f"b_{i} = {i}\n" for i in range(30))
NOTE = "kept answer for {} did not match its digest: recomputed"


def _history(b: RepoBuilder) -> str:
    """main with numbered commits; a release with picks identical (trailer, PR number, content)
    and one adapted. Returns the range's base."""
    b.commit("base", {"a.py": A, "b.py": B})
    b.branch("release")
    made, a = [], A
    for i in range(1, 5):
        k = 3 * i
        a = a.replace(f"a_{k} = {k}\n", f"a_{k} = {k * 100}\n")
        made.append(b.commit(f"Raise a_{k} (#{i})", {"a.py": a}))
    b.commit("Tune b (#9)", {"b.py": B.replace("b_3 = 3", "b_3 = 33")})
    b.checkout("release")
    base = b.rev("HEAD")
    b.cherry_pick(made[0], "-x")
    b.cherry_pick(made[1])
    b.commit("Tune b (#9)", {"b.py": B.replace("b_3 = 3", "b_3 = 34")})  # adapted
    return base


def _normal(doc: dict[str, Any]) -> dict[str, Any]:
    """A report without what differs between runs: the date, the command line, and the section
    cache's "measured" / "from cache" control."""
    doc = {k: v for k, v in doc.items() if k not in ("generated", "command")}
    for s in doc.get("sections", []):
        s["controls"] = [c for c in s["controls"] if c["name"] != "section cache"]
    return doc


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The repository, its cold reports (``--no-cache``), and a cache two warm runs left."""
    from harness.cli import main

    root = tmp_path_factory.mktemp("faults")
    b = RepoBuilder(root / "repo")
    base = _history(b)
    w: dict[str, Any] = {"root": root, "repo": b.path, "base": base, "cache": root / "cache"}
    mp = pytest.MonkeyPatch()
    mp.setenv("HARNESS_CACHE_DIR", str(w["cache"]))
    try:
        for verb in ("fidelity", "compare"):
            out = root / f"cold-{verb}"
            assert main([*_argv(w, verb, out), "--no-cache"]) == 0
            w[verb] = _read(verb, out)
            assert main(_argv(w, verb, root / f"warm-{verb}")) == 0
            assert _read(verb, root / f"warm-{verb}") == w[verb]
    finally:
        mp.undo()
    assert '"adapted"' in json.dumps(w["fidelity"]) and '"identical"' in json.dumps(w["fidelity"])
    return w


def _argv(w: dict[str, Any], verb: str, out: Path) -> list[str]:
    where = ["--output", str(out)] if verb == "fidelity" else ["--output-dir", str(out)]
    rng = [f"{w['base']}..release"] if verb == "fidelity" else [w["base"], "release"]
    return [verb, *rng, "--source", "main", "--repo", str(w["repo"]), "--format", "json",
            "--fail-on", "never", *where]  # fmt: skip


def _read(verb: str, out: Path) -> dict[str, Any]:
    path = out if verb == "fidelity" else out / "report.json"
    return _normal(json.loads(path.read_text(encoding="utf-8")))


def _kept_files(cache: Path) -> list[Path]:
    return sorted(p for p in cache.rglob("*") if p.is_file() and p.name != "lock")


# -- damage --------------------------------------------------------------------------------------
def _edited(raw: bytes) -> bytes:
    """Another well-formed answer: one status word changed, else one hex digit of an id."""
    if b'"identical"' in raw:
        return raw.replace(b'"identical"', b'"adapted"', 1)
    m = re.search(rb"[0-9a-f]{40}", raw)
    assert m is not None, raw[:200]
    digit = b"1" if raw[m.start() : m.start() + 1] != b"1" else b"2"
    return raw[: m.start()] + digit + raw[m.start() + 1 :]


def _flipped(raw: bytes) -> bytes:
    at = len(raw) // 2
    return raw[:at] + bytes([raw[at] ^ 0x04]) + raw[at + 1 :]


DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "edited": _edited,
    "truncated": lambda raw: raw[: len(raw) // 2],
    "bit-flipped": _flipped,
}


def _reads(rel: Path) -> tuple[str, list[str]]:
    """The verb that reads kept file ``rel`` first, and what else goes so that it is read."""
    if rel.parts[0] != "history":
        return "compare", []
    if rel.name == "code.json" or rel.parts[2] == "results":
        return "fidelity", []
    if rel.name == "memo-range-heads.json":  # read when a range is not kept: a head moved
        return "fidelity", ["results", "memo-range.json"]
    if rel.name.startswith("memo-"):
        return "fidelity", ["results"]
    return "fidelity", ["results", "memo-"]  # the index and the diffs behind the memos


@pytest.mark.parametrize("how", sorted(DAMAGE))
def test_every_kept_file_damaged_is_recomputed_with_a_note(
    world, run_cli, tmp_path, monkeypatch, how
) -> None:
    files = [p.relative_to(world["cache"]) for p in _kept_files(world["cache"])]
    assert len(files) >= 15 and any(p.parts[0] == "sections" for p in files)
    for rel in files:
        cache = tmp_path / f"{how}-{len(list(tmp_path.iterdir()))}"
        shutil.copytree(world["cache"], cache)
        monkeypatch.setenv("HARNESS_CACHE_DIR", str(cache))
        verb, drop = _reads(rel)
        for p in _kept_files(cache):
            if p.relative_to(cache) != rel and any(
                p.parent.name == d or p.name.startswith(d) for d in drop
            ):
                p.unlink()
        raw = (cache / rel).read_bytes()
        damaged = DAMAGE[how](raw)
        assert damaged != raw
        if how == "edited" and rel.suffix == ".json":
            json.loads(damaged)  # still well-formed
        (cache / rel).write_bytes(damaged)
        out = tmp_path / f"out-{cache.name}"
        code, _, err = run_cli(*_argv(world, verb, out))
        assert code == 0, err
        assert _read(verb, out) == world[verb], f"{how} {rel} changed the report"
        notes = [line for line in err.splitlines() if "did not match its digest" in line]
        value_only = verb == "compare" and "fidelity-result" in _value_kind(raw)
        if not value_only:  # (the fidelity result kept for the mutation step: read by it only)
            assert notes == [f"harness: {NOTE.format(rel)}"], (how, rel, err)
        # ... and the cache is whole again: the next run says nothing.
        code, _, err = run_cli(*_argv(world, verb, tmp_path / f"again-{cache.name}"))
        assert code == 0 and "did not match" not in err, err


def _value_kind(raw: bytes) -> str:
    """``fidelity-result`` for the typed result kept beside the fidelity section."""
    try:
        value = json.loads(raw)["value"]
    except (ValueError, KeyError, TypeError):
        return ""
    return "fidelity-result" if isinstance(value, dict) and "value" in value else ""


# -- a cache that cannot be written ----------------------------------------------------------
@contextmanager
def _read_only(folder: Path) -> Iterator[None]:
    """``folder`` read-only: its modes for a user, a read-only bind mount for root (whom modes
    do not stop); skipped where neither is possible."""
    if os.geteuid() != 0:
        folder.chmod(0o500)
        try:
            yield
        finally:
            folder.chmod(0o700)
        return
    bind = subprocess.run(["mount", "--bind", str(folder), str(folder)], capture_output=True)
    if bind.returncode != 0:
        pytest.skip(f"root, and no bind mount here: {bind.stderr.decode().strip()}")
    try:
        ro = ["mount", "-o", "remount,bind,ro", str(folder), str(folder)]
        assert subprocess.run(ro, capture_output=True).returncode == 0
        yield
    finally:
        subprocess.run(["umount", str(folder)], check=True)


@contextmanager
def _full(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No space left for ``folder``: a small tmpfs filled up (root), else ENOSPC injected into
    every write of the cache's files."""
    if os.geteuid() == 0:
        made = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", str(folder)],
            capture_output=True,
        )
        if made.returncode == 0:
            try:
                with open(folder / "filler", "wb", buffering=0) as fh:
                    try:
                        while True:
                            fh.write(b"\0" * 4096)
                    except OSError as e:
                        assert e.errno == errno.ENOSPC
                yield
            finally:
                subprocess.run(["umount", str(folder)], check=True)
            return
    from harness.infra import atomic

    real = atomic.write_atomic

    def no_space(path: Any, *args: Any, **kw: Any) -> None:
        if Path(path).is_relative_to(folder):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(path, *args, **kw)

    for module in ("harness.infra.cache", "harness.infra.history_index"):
        monkeypatch.setattr(f"{module}.write_atomic", no_space)
    yield


@pytest.mark.parametrize("fault", ["read-only", "full"])
@pytest.mark.parametrize("verb", ["fidelity", "compare"])
def test_a_cache_that_cannot_be_written_is_one_line_and_the_same_report(
    world, run_cli, tmp_path, monkeypatch, fault, verb
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(cache))
    why = "Read-only file system" if os.geteuid() == 0 else "Permission denied"
    with _read_only(cache) if fault == "read-only" else _full(cache, monkeypatch):
        for run in range(2):  # and again: nothing was kept, the same report, the same line
            code, _, err = run_cli(*_argv(world, verb, tmp_path / f"out-{run}"))
            assert code == 0, err
            assert _read(verb, tmp_path / f"out-{run}") == world[verb]
            lines = [line for line in err.splitlines() if line.startswith("harness: cache ")]
            assert len(lines) == 1 and "cannot be written" in lines[0], err
            if fault == "full":
                assert "No space left on device" in lines[0], lines
            else:
                assert why in lines[0], lines
    assert not list(cache.rglob("*.json"))


# -- kill -9 while the index is written ----------------------------------------------------------
_KILL = r"""
import os, signal, sys
from pathlib import Path
from harness.infra import history_index
from harness.infra import atomic

at, events, writing = int(sys.argv[1]), [0], [False]

def tick():
    events[0] += 1
    if events[0] == at:
        os.kill(os.getpid(), signal.SIGKILL)

class Traced:  # a cache file being written: a kill point before each part, and half-way in it
    def __init__(self, fh):
        self.fh = fh
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return self.fh.__exit__(*exc)
    def write(self, data):
        tick()
        self.fh.write(data[: len(data) // 2]); self.fh.flush()
        tick()
        return self.fh.write(data[len(data) // 2 :])

real_fdopen, real_replace, real_write = os.fdopen, os.replace, atomic.write_atomic

def fdopen(fd, *a, **kw):
    fh = real_fdopen(fd, *a, **kw)
    return Traced(fh) if writing[0] else fh

def replace(a, b):
    if writing[0]:
        tick()
    real_replace(a, b)
    if writing[0]:
        tick()

def write_atomic(*a, **kw):
    writing[0] = True
    try:
        real_write(*a, **kw)
    finally:
        writing[0] = False

os.fdopen, os.replace, history_index.write_atomic = fdopen, replace, write_atomic
from harness.cli import main
code = main(sys.argv[2:])
print("events", events[0])
sys.exit(code)
"""


def _killed(argv: list[str], at: int, cache: Path, writes: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HARNESS_CACHE_DIR": str(cache), "HARNESS_CACHE_WRITES": writes}
    proc = subprocess.run(
        [sys.executable, "-c", _KILL, str(at), *argv], env=env, capture_output=True, text=True
    )
    wait_for_writers(cache)  # a detached writer (killed at ``at``, or done)
    return proc


@pytest.mark.parametrize("writes", ["inline", "detached"])
def test_kill_9_at_many_points_while_the_index_is_written(
    world, run_cli, tmp_path, monkeypatch, writes
):
    """A cold run and a run that adds to a kept index (a new pick), each killed at points spread
    over every write of the index (before a part, half-way in it, around the rename): the next
    run's report equals a cold one, and no temporary file is left. Written by the run itself
    (``inline``), or by its detached writer, killed there (the run's own last writes, the lock
    and a probe byte, are kill points too: the run then dies)."""
    repo = tmp_path / "repo"  # the module's repository, grown in a copy
    shutil.copytree(world["repo"], repo)
    argv = _argv({**world, "repo": repo}, "fidelity", tmp_path / "killed.json")
    warm = tmp_path / "warm"
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(warm))
    assert run_cli(*argv)[0] == 0
    monkeypatch.delenv("HARNESS_CACHE_DIR")
    builder = RepoBuilder(repo)
    builder._tick = 1_700_100_000  # (later than the history copied)
    builder.checkout("main")
    fresh = builder.commit("Raise a_27 (#20)", {"a.py": A.replace("a_27 = 27", "a_27 = 2700")})
    builder.checkout("release")
    builder.cherry_pick(fresh)
    cold = tmp_path / "cold.json"
    assert run_cli(*argv[:-1], str(cold), "--no-cache")[0] == 0
    expected = _read("fidelity", cold)
    points = 0
    for start in ("empty", "warm"):
        probe = tmp_path / f"count-{start}"
        shutil.copytree(warm, probe) if start == "warm" else probe.mkdir(mode=0o700)
        counted = _killed(argv, 0, probe, "inline")
        assert counted.returncode == 0, counted.stderr
        total = int(counted.stdout.split()[-1])
        assert total >= 25, counted.stdout
        own = 0  # the run's own write events before its writer is forked (the probe's)
        if writes == "detached":
            again = tmp_path / f"count-{start}-detached"
            shutil.copytree(warm, again) if start == "warm" else again.mkdir(mode=0o700)
            counted = _killed(argv, 0, again, writes)
            assert counted.returncode == 0, counted.stderr
            own = int(counted.stdout.split()[-1])
            assert 0 < own < 10, counted.stdout
            total += own
        for i, at in enumerate(sorted({1 + (total - 1) * k // 29 for k in range(30)})):
            cache = tmp_path / f"{start}-{i}"
            shutil.copytree(warm, cache) if start == "warm" else cache.mkdir(mode=0o700)
            proc = _killed(argv, at, cache, writes)
            # A detached writer's death is not the run's: the run ended with its report written.
            dies = writes == "inline" or at <= own
            assert proc.returncode == (-signal.SIGKILL if dies else 0), (at, proc.stderr)
            monkeypatch.setenv("HARNESS_CACHE_DIR", str(cache))
            out = tmp_path / f"after-{start}-{i}.json"
            code, _, err = run_cli(*argv[:-1], str(out))
            assert code == 0 and "did not match" not in err, err
            assert _read("fidelity", out) == expected, f"killed at {at} of {total} ({start})"
            wait_for_writers(cache)
            assert not list(cache.rglob(".tmp-*")), "a killed run's temporary file was left"
            points += 1
    assert points >= 50
