"""Engine tier: n>1 on the real sglang Engine (CPU), and a GPU variant.

The CPU environment is ~7 GB and takes 5-10 minutes to build from a cold pip cache, so this tier
runs when the environment already exists in the store or HARNESS_BUILD_CPU_ENGINE=1 allows
building it; otherwise it is skipped with that reason.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from harness.engines.nprobe import answers, run_n_probe
from harness.engines.store import EngineStore, EnvKey

VERSION = os.environ.get("HARNESS_CPU_ENGINE_VERSION", "0.5.18")


@pytest.fixture(scope="session")
def engine_store(request) -> EngineStore:
    root = os.environ.get("HARNESS_ENGINE_DIR")
    return EngineStore(Path(root) if root else request.config.cache.mkdir("harness-engines"))


@pytest.fixture(scope="session")
def cpu_run(engine_store):
    if (
        engine_store.get(EnvKey("sglang", VERSION, "cpu")) is None
        and os.environ.get("HARNESS_BUILD_CPU_ENGINE") != "1"
    ):
        pytest.skip(
            f"cpu engine env sglang=={VERSION} not built in {engine_store.root} (~7 GB, 5-10 min); "
            f"run `harness engine add sglang=={VERSION} --runtime cpu` or set HARNESS_BUILD_CPU_ENGINE=1"
        )
    return run_n_probe(VERSION, runtime="cpu", store=engine_store, log=lambda m: None)


@pytest.mark.engine
@pytest.mark.slow
def test_n_choices_on_real_cpu_engine(cpu_run):
    assert cpu_run["version"] == VERSION
    s = cpu_run["scenarios"]
    ids = s["ids"]
    assert len(ids["choice_ids"]) == 2 and ids["distinct"] and not ids["caller_rid_among_choices"]
    # Aborting each choice's own id ends every choice aborted: the control that abort works at all.
    assert s["abort_choices"]["final"] == ["abort", "abort"]
    # The caller's rid is not a live request state once the n choices are fanned out.
    assert s["abort_caller"]["caller_rid_in_state"] is False
    assert set(answers(cpu_run)) == {
        "distinct_ids",
        "abort_caller",
        "abort_choices",
        "cancel_midstream",
        "state_left",
    }


@pytest.mark.engine
@pytest.mark.gpu
@pytest.mark.slow
def test_n_choices_on_gpu(engine_store):
    if shutil.which("nvidia-smi") is None:
        pytest.skip("no GPU (nvidia-smi not found)")
    bundle = os.environ.get(
        "HARNESS_GPU_BUNDLE"
    )  # a `harness engine bundle` folder: install offline
    if bundle and engine_store.get(EnvKey("sglang", VERSION, "gpu")) is None:
        from harness.engines.sglang import ensure_env

        ensure_env(VERSION, "gpu", store=engine_store, log=lambda m: None, bundle=Path(bundle))
    if (
        engine_store.get(EnvKey("sglang", VERSION, "gpu")) is None
        and os.environ.get("HARNESS_BUILD_GPU_ENGINE") != "1"
    ):
        pytest.skip(
            f"no gpu env sglang=={VERSION} in {engine_store.root}: run `harness engine add "
            f"sglang=={VERSION} --runtime gpu [--from-bundle DIR]`, set HARNESS_GPU_BUNDLE=DIR "
            f"or HARNESS_BUILD_GPU_ENGINE=1"
        )
    raw = run_n_probe(VERSION, runtime="gpu", store=engine_store, log=lambda m: None)
    got = answers(raw)
    assert raw["version"] == VERSION and raw["scenarios"]["ids"]["distinct"]
    assert (
        got["abort_choices"] == "choices end abort/abort"
    )  # aborting each choice id aborts it, as on the CPU


@pytest.mark.engine
@pytest.mark.slow
def test_sglang_n_kind_in_a_scenario(builder, run_cli, tmp_path, monkeypatch, engine_store):
    if engine_store.get(EnvKey("sglang", VERSION, "cpu")) is None:
        pytest.skip(f"cpu engine env sglang=={VERSION} not built in {engine_store.root}")
    monkeypatch.setenv("HARNESS_ENGINE_DIR", str(engine_store.root))
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    builder.commit("init", {"docker/Dockerfile": f"FROM lmsysorg/sglang:v{VERSION}-cu130\n"})
    sc = tmp_path / "n.yaml"
    sc.write_text(
        "refs: {base: main}\nprobes:\n  - id: n\n    kind: sglang_n\n"
        "    engine_pin: {file: docker/Dockerfile}\n"
        "    rows: {question: [distinct_ids, abort_choices]}\n"
    )
    code, out, err = run_cli("probe", str(sc), "--repo", str(builder.path), "--format", "json")
    assert code == 0, err
    assert "distinct ids; caller rid is not a choice id" in out
    assert "choices end abort/abort" in out and f"sglang=={VERSION} (docker/Dockerfile, cpu)" in out
