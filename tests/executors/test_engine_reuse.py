"""Engine cells on the ray executor: served from the driver's cache by their content key, so a
re-run on a driver that does not hold the workers' engine environments submits nothing remote;
engine_pin columns ask for the version label their pin file names."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from harness.columns.trees import identify
from harness.executors import Resources
from harness.git import GitRepo
from harness.inputs.scenario import load_scenario
from harness.probes.column_task import ColumnJob
from harness.probes.engine import ColumnRun, column_resources

PROBES = Path(__file__).resolve().parents[2] / "probes"

HANDLER = """class Handler:
    def __init__(self, engine):
        self.engine = engine

    def _build_sampling_params(self, request):
        params = {"max_new_tokens": 16}
        if request.get("min_tokens"):
            params["min_new_tokens"] = request["min_tokens"]
        return params
"""

SCENARIO = """refs: {{base: main, head: pr}}
controls:
  repinned:
    ref: base
    edits:
      - {{replace: "v0.5.11-cu126", new: "v0.5.18-cu126", path: docker/Dockerfile}}
probes:
  - id: params
    kind: sglang_params
    build: {{kind: python, file: {probe}, function: build_params}}
    engine_pin: {{file: docker/Dockerfile}}
    columns: {columns}
    rows: {{min_tokens: [0, 8]}}
"""


def _repo(builder) -> GitRepo:  # type: ignore[no-untyped-def]
    builder.commit(
        "init",
        {
            "serving/__init__.py": "",
            "serving/handler.py": HANDLER,
            "docker/Dockerfile": "FROM lmsysorg/sglang:v0.5.11-cu126\n",
        },
    )
    builder.branch("pr")
    builder.checkout("pr")
    builder.commit("bump", {"docker/Dockerfile": "FROM lmsysorg/sglang:v0.5.18-cu130-runtime\n"})
    return GitRepo(builder.path)


def _scenario(tmp_path: Path, columns: str) -> object:
    path = tmp_path / "engine.yaml"
    path.write_text(SCENARIO.format(probe=PROBES / "sglang_handler_probe.py", columns=columns))
    return load_scenario(str(path))


def test_engine_pin_columns_ask_for_the_version_their_pin_names(builder, tmp_path: Path) -> None:
    repo = _repo(builder)
    scenario = _scenario(tmp_path, "[base, head, repinned]")
    probe = scenario.probes[0]  # type: ignore[attr-defined]
    got = {
        col.name: column_resources(
            repo, sys.executable, ColumnRun(col, identify(repo, col)), [ColumnJob(probe, [0, 1])]
        )
        for col in scenario.columns  # type: ignore[attr-defined]
    }
    assert got["base"] == Resources(0, (("sglang-0.5.11", 1.0),))
    assert got["head"] == Resources(0, (("sglang-0.5.18", 1.0),))
    # a control that edits the pin file: its version is known only in the edited tree
    assert got["repinned"] == Resources()


@pytest.mark.slow
@pytest.mark.engine
def test_a_rerun_of_remote_engine_cells_submits_nothing(
    ray_cluster: str, builder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not os.environ.get("HARNESS_ENGINE_DIR"):
        pytest.skip("HARNESS_ENGINE_DIR: the prebuilt sglang params environments")
    from harness.checks.probe_table import probe_sections
    from harness.executors.ray_executor import RayExecutor
    from harness.infra.cache import Cache

    repo = _repo(builder)
    scenario = _scenario(tmp_path, "[base, head]")
    cache = Cache(root=tmp_path / "cache")
    rounds = []
    for n in range(2):
        if n == 1:
            # the driver no longer holds the environments the workers measured in (the workers'
            # engine store is the one they started with)
            monkeypatch.setenv("HARNESS_ENGINE_DIR", str(tmp_path / "no-engines"))
        ex = RayExecutor(ray_cluster)
        sections = probe_sections(repo, scenario, cache=cache, executor=ex)  # type: ignore[arg-type]
        rounds.append((ex.submitted, [s.data for s in sections]))
        ex.close()
    (cold, cold_data), (warm, warm_data) = rounds
    assert cold == 3 and warm == 0  # base, head and the control (its edit proofs)
    text = repr(cold_data)
    assert "sglang==0.5.18 (docker/Dockerfile)" in text and "ACCEPTED" in text
    strip = re.compile(r"'from': '(run|cache)'")
    assert strip.sub("", text) == strip.sub("", repr(warm_data))
