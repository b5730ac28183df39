"""SIGKILL a real run at a few points, then run once more: no leftover folder, no orphan child."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.testing.processes import alive, wait_for

SLOW_PROBE = """import os, time
UNDER_TEST = ["m"]
def run(n):
    import m
    with open(os.environ["PIDS"], "a") as fh:
        fh.write(f"{os.getpid()}\\n")
    time.sleep(60)
    return n
"""

SCENARIO = """refs: {{base: main, head: main}}
controls:
  ctl: {{ref: main, edits: [{{replace: "x = 1", new: "x = 2", path: m.py}}]}}
probes:
  - {{id: slow, kind: python, file: {probe}, function: run, timeout: 120, rows: {{n: [1, 2]}}}}
"""

SLOW_CONFTEST = """import os, time
with open(os.environ["PIDS"], "a") as fh:
    fh.write(f"{os.getpid()}\\n")
time.sleep(60)
"""


def _setup(builder, tmp_path: Path, verb: str) -> tuple[list[str], dict[str, str]]:
    builder.commit(
        "one",
        {
            "m.py": "x = 1\n",
            "tests/conftest.py": SLOW_CONFTEST,
            "tests/test_m.py": "def test_m():\n    assert True\n",
        },
    )
    env = {
        **os.environ,
        "PIDS": str(tmp_path / "pids"),
        "HARNESS_WORK_DIR": str(tmp_path / "work"),
        "HARNESS_CACHE_DIR": str(tmp_path / "cache"),
        "TMPDIR": str(tmp_path / "tmp"),
    }
    (tmp_path / "tmp").mkdir()
    if verb == "probe":
        (tmp_path / "p.py").write_text(SLOW_PROBE)
        (tmp_path / "s.yaml").write_text(SCENARIO.format(probe=tmp_path / "p.py"))
        return ["probe", str(tmp_path / "s.yaml")], env
    if verb == "mutate":
        return [
            "mutate",
            "--replace",
            "m.py",
            "x = 1",
            "x = 3",
            "--tests",
            "tests",
            "--timeout",
            "120",
        ], env
    return ["select", "--lane", "all=not slow", "--timeout", "120"], env


def _pids(tmp_path: Path) -> list[int]:
    f = tmp_path / "pids"
    return [int(x) for x in f.read_text().split()] if f.exists() else []


@pytest.mark.parametrize(
    "verb,when",
    [
        ("probe", "children"),
        ("select", "children"),
        ("mutate", "children"),
        ("probe", "start"),
        ("select", "start"),
    ],
)
def test_sigkill_then_one_more_run_leaves_nothing(
    builder, tmp_path: Path, verb: str, when: str
) -> None:
    argv, env = _setup(builder, tmp_path, verb)
    cmd = [sys.executable, "-m", "harness", *argv, "--repo", str(builder.path)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if when == "children":
        want = 3 if verb == "probe" else 1
        assert wait_for(lambda: len(_pids(tmp_path)) >= want, 60), (
            "the children should have started"
        )
    else:
        time.sleep(0.4)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    children = _pids(tmp_path)
    assert wait_for(lambda: not any(alive(p) for p in children), 5), (
        f"children outlived the harness: {[p for p in children if alive(p)]}"
    )
    # one more run, of a verb that makes no temporary folder itself
    after = subprocess.run(
        [sys.executable, "-m", "harness", "lanes", "--repo", str(builder.path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert after.returncode in (0, 1), after.stderr
    work = tmp_path / "work"
    runs = list((work / "runs").iterdir()) if (work / "runs").exists() else []
    assert runs == [], runs
    trees = list((work / "trees").iterdir()) if (work / "trees").exists() else []
    assert not [t for t in trees if t.suffix == ".lock" or ".tmp-" in t.name or "-p" in t.name], (
        trees
    )
    assert list((tmp_path / "tmp").iterdir()) == []
    time.sleep(0.2)
    assert not any(alive(p) for p in children)
