"""A run on a local Ray the harness starts itself leaves nothing: no Ray WARNING line on stderr
(Ray announced the token authentication it turns on), no worker run folder or lock in the work
area (Ray ends idle workers without their exit handlers; the folder now goes with each task)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None,
    reason="ray is not installed (pip install 'harness[ray]')",
)

PROBE = "UNDER_TEST = ['m']\ndef run(n):\n    import m\n    return m.x * n\n"


def test_a_ray_run_leaves_no_line_and_no_folder(builder, tmp_path: Path) -> None:
    builder.commit("one", {"m.py": "x = 1\n"})
    (tmp_path / "p.py").write_text(PROBE)
    scen = tmp_path / "s.yaml"
    scen.write_text(
        "refs: {head: main}\nprobes:\n"
        f"  - {{id: p, kind: python, file: {tmp_path / 'p.py'}, function: run, rows: {{n: [1, 2]}}}}\n"
    )
    work = tmp_path / "w"
    env = {
        **os.environ,
        "HARNESS_EXECUTOR": "ray",
        "HARNESS_WORK_DIR": str(work),
        "HARNESS_CACHE_DIR": str(tmp_path / "c"),
        "HARNESS_PROGRESS": "none",
    }
    env.pop("RAY_ADDRESS", None)
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "probe", str(scen), "--repo", str(builder.path)]
        + ["--format", "none", "--no-cache"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "WARNING" not in proc.stderr, proc.stderr
    runs = work / "runs"
    assert not runs.exists() or sorted(p.name for p in runs.iterdir()) == []
