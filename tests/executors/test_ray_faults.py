"""Faults on a real local Ray cluster: Ctrl-C cancels every remote task (and their probe processes),
a task past its timeout is an outcome, a worker lost more often than the retry bound is a crash cell."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.testing.processes import wait_for

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None,
    reason="ray is not installed (pip install 'harness[ray]')",
)

SLOW = """refs: {{base: main, head: main}}
controls:
  ctl:
    ref: main
    edits: [{{replace: "x = 1", new: "x = 2", path: m.py}}]
probes:
  - id: slow
    kind: python
    file: {probe}
    function: run
    timeout: 120
    rows: {{n: [1, 2]}}
"""

PROBE = """import os, time
def run(n):
    with open({pids!r}, "a") as fh:
        fh.write(f"{{os.getpid()}}\\n")
    time.sleep(90)
    return n
"""


def _alive(pid: int) -> bool:
    """Running, not a zombie left for init to reap (a killed worker's probe is orphaned)."""
    from harness.testing.processes import alive

    return alive(pid)


def _free_cpus() -> float:
    import ray

    return ray.available_resources().get("CPU", 0.0)


def _idle_cpus() -> float:
    """The cluster's CPU count once every earlier task has released its CPU (Ray reports
    resources lazily, and omits a resource whose free amount is zero)."""
    import ray

    total = ray.cluster_resources().get("CPU", 0.0)
    assert wait_for(lambda: _free_cpus() == total, 30), "an earlier test's task still holds a CPU"
    return total


def test_ctrl_c_leaves_no_remote_task_running(ray_cluster: str, builder, tmp_path: Path) -> None:
    builder.commit("one", {"m.py": "x = 1\n"})
    pids = tmp_path / "pids"
    (tmp_path / "p.py").write_text(PROBE.format(pids=str(pids)))
    scen = tmp_path / "s.yaml"
    scen.write_text(SLOW.format(probe=tmp_path / "p.py"))
    total = _idle_cpus()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "harness",
            "probe",
            str(scen),
            "--repo",
            str(builder.path),
            "--no-cache",
            "--executor",
            "ray",
            "--ray-address",
            ray_cluster,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        # both columns (main, ctl) are running their first row on Ray workers
        if not wait_for(lambda: pids.exists() and len(pids.read_text().split()) >= 2, 90):
            proc.kill()
            pytest.fail(
                f"the probes never started on Ray: {proc.communicate()[1].decode()[-2000:]}"
            )
        assert wait_for(lambda: _free_cpus() == total - 2, 30), _free_cpus()
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    err = proc.stderr.read().decode() if proc.stderr else ""
    assert code == 130, err
    probe_pids = [int(p) for p in pids.read_text().split()]
    assert wait_for(lambda: not any(_alive(p) for p in probe_pids), 30), (
        "probe processes outlived Ctrl-C"
    )
    assert wait_for(lambda: _free_cpus() == total, 30), "a remote task still holds a CPU"
    assert len(pids.read_text().split()) == 2  # no row started after the interrupt


def _sleep(tree: object, seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def test_a_task_past_its_timeout_is_an_outcome_and_is_cancelled(ray_cluster: str) -> None:
    import ray

    from harness.executors import Task
    from harness.executors.ray_executor import RayExecutor

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests/
    total = _idle_cpus()
    ex = RayExecutor(ray_cluster)
    started = time.monotonic()
    results = ex.run(
        [
            Task("slow", _sleep, None, (60,), timeout=2, label="slow one"),
            Task("quick", _sleep, None, (0.1,), timeout=30),
        ]
    )
    assert time.monotonic() - started < 50  # not the 60 s the slow task would sleep
    assert [r.status for r in results] == ["timeout", "ok"] and results[1].value == 0.1
    assert "slow one: ran past 2s" in results[0].detail
    assert wait_for(lambda: _free_cpus() == total, 30)


def _die(tree: object) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_worker_lost_past_the_retry_bound_is_lost_not_a_hang(ray_cluster: str) -> None:
    import ray

    from harness.executors import Task
    from harness.executors.ray_executor import RayExecutor

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ex = RayExecutor(ray_cluster, retries=1)
    [result] = ex.run([Task("die", _die, None, timeout=60)])
    assert result.status == "lost" and "worker lost 2 time(s)" in result.detail
