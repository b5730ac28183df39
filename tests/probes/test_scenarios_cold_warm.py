"""Every scenario shipped in scenarios/: a warm run (all cells from the cache) gives the cold run's
results byte for byte in JSON, and says that its cells came from the cache.

Scenarios that need a real engine environment run in the engine tier (skipped with the reason when
the environment is not built); the cold/warm equality is what catches a cache key that serves one
column's answer to another (issue 16: two columns at one tree, two engine versions).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness import demo
from harness.checks.probe_table import probe_sections
from harness.engines.store import EngineStore, EnvKey, engine_root
from harness.git.repo import GitRepo
from harness.infra.cache import Cache
from harness.infra.resources import data_dir
from harness.inputs.scenario import load_scenario
from harness.testing.decoder_repo import build_decoder_repo

SCENARIOS = sorted(p.name for p in data_dir("scenarios").glob("*.yaml"))
# What each scenario needs beyond the demo repository: engine environments (engine, version, runtime).
NEEDS: dict[str, list[tuple[str, str, str]]] = {
    "demo-engine.yaml": [],  # params environments: built on demand from the package index
    "engine-n.yaml": [("sglang", "0.5.18", "cpu"), ("sglang", "0.5.22", "cpu")],
}
ON_DECODER_REPO = {
    "probe-example.yaml"
}  # its refs main/pr: the decoder repository of the probe tests
NOT_ON_DEMO = {
    "llm-serving.yaml": "names a real project's refs (origin/release/1.4) and layout: an example to adapt"
}


def test_every_scenario_is_listed():
    assert "demo.yaml" in SCENARIOS and set(NOT_ON_DEMO) <= set(SCENARIOS)


@pytest.fixture(scope="module")
def demo_repo(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "repo"
    demo.build(path)
    return path


def _results(sections: list) -> str:
    """Everything a section says, less the provenance of its cells (which differs by design)."""
    out = []
    for s in sections:
        data = {k: v for k, v in (s.data or {}).items() if k != "cache"}
        tables = [
            [[c for j, c in enumerate(r) if t.columns[j] != "cells (cache key)"] for r in t.rows]
            for t in s.tables
        ]
        out.append([s.id, s.summary, data, tables, [f.__dict__ for f in s.findings]])
    return json.dumps(out, sort_keys=True, default=str)


def _provenance(sections: list) -> set[str]:
    return {
        c["from"] for s in sections for col in (s.data or {}).get("cache", {}).values() for c in col
    }


@pytest.mark.parametrize("name", SCENARIOS)
def test_warm_equals_cold(name, demo_repo, builder, tmp_path, monkeypatch, request):
    if name in NOT_ON_DEMO:
        load_scenario(data_dir("scenarios") / name)  # it still loads and validates
        pytest.skip(NOT_ON_DEMO[name])
    if name in NEEDS:
        request.applymarker(pytest.mark.engine)
        root = (
            Path(os.environ["HARNESS_ENGINE_DIR"])
            if os.environ.get("HARNESS_ENGINE_DIR")
            else engine_root()
        )
        missing = [k for k in NEEDS[name] if EngineStore(root).get(EnvKey(*k)) is None]
        if missing:
            pytest.skip(
                f"engine environment(s) not built in {root}: "
                + ", ".join(f"{e}=={v} ({r})" for e, v, r in missing)
            )
        monkeypatch.setenv("HARNESS_ENGINE_DIR", str(root))
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    if name in ON_DECODER_REPO:
        build_decoder_repo(builder)
    path = builder.path if name in ON_DECODER_REPO else demo_repo
    repo, scenario = (
        GitRepo(path),
        load_scenario(data_dir("scenarios") / name, require_probes=False),
    )
    if not scenario.probes:
        pytest.skip(f"{name} has no probes")
    cold_cache, warm_cache = Cache(), Cache()
    cold = probe_sections(repo, scenario, cache=cold_cache)
    warm = probe_sections(repo, scenario, cache=warm_cache)
    assert _results(warm) == _results(cold)
    assert _provenance(cold) >= {"run"}
    assert _provenance(warm) == {"cache"} and warm_cache.misses == 0
    if name == "engine-n.yaml":
        # the table: 0.5.22 aborts every unfinished choice and leaves no state, also warm
        cells = {c: [x["value"] for x in v] for c, v in warm[0].data["cells"].items()}
        rows = [r["question"] for r in warm[0].data["rows"]]
        new = dict(zip(rows, cells["v0522"], strict=False))
        assert new["cancel_midstream"].startswith("every unfinished choice aborted")
        assert new["state_left"] == "0 rid_to_state entries left"
        assert cells["v0518"] != cells["v0522"]
