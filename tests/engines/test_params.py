"""Params tier: the real SamplingParams of sglang 0.5.11, 0.5.18 and 0.5.22, each in its own env.

Environments are built once per session into $HARNESS_ENGINE_DIR, else into the pytest cache
(``.pytest_cache/d/harness-engines``), so later runs reuse them. A cold build downloads the sglang
wheels (7-35 MB each) and, for 0.5.22, installs torch from the machine's local CPU wheel.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness.engines.params import check_params
from harness.engines.store import EngineStore, EnvKey
from harness.testing.network import need_index

VERSIONS = ("0.5.11", "0.5.18", "0.5.22")
MIN8 = (
    "ValueError: min_new_tokens=8 is unavailable when skip_tokenizer_init=True "
    "(requires tokenizer for eos_token_id)."
)
CASES = [
    {"min_new_tokens": 0, "max_new_tokens": 16},  # control: accepted everywhere
    {"min_new_tokens": 8, "max_new_tokens": 16},
    {"stop": ["\n"], "max_new_tokens": 16},
    {"temperature": -1},
    {"repetition_penalty": 0},
    {"top_p": 0},
]


@pytest.fixture(scope="session")
def engine_store(request) -> EngineStore:
    root = os.environ.get("HARNESS_ENGINE_DIR")
    path = Path(root) if root else request.config.cache.mkdir("harness-engines")
    return EngineStore(path)


@pytest.fixture(scope="session")
def runs(engine_store):
    if any(engine_store.get(EnvKey("sglang", v, "params")) is None for v in VERSIONS):
        need_index()  # a cold build downloads the sglang wheels
    return {v: check_params(v, CASES, store=engine_store, log=lambda m: None) for v in VERSIONS}


def outcomes(runs, version):
    return [o.outcome for o in runs[version].outcomes]


@pytest.mark.slow
@pytest.mark.parametrize("version", VERSIONS)
def test_answers_come_from_that_version(runs, engine_store, version):
    run = runs[version]
    assert run.version_proof == version
    assert run.proof_ok
    assert Path(run.module_file).name == "sampling_params.py"
    assert Path(run.module_file).is_relative_to(engine_store.root / f"sglang-{version}-params")
    assert len(run.fingerprint) == 64


@pytest.mark.slow
def test_control_row_accepted_everywhere(runs):
    assert {outcomes(runs, v)[0] for v in VERSIONS} == {"ACCEPTED"}


@pytest.mark.slow
def test_tokenizer_checks_arrive_after_0_5_11(runs):
    assert outcomes(runs, "0.5.11")[1:3] == ["ACCEPTED", "ACCEPTED"]
    for v in ("0.5.18", "0.5.22"):
        got = outcomes(runs, v)
        assert got[1] == MIN8
        assert got[2].startswith(
            "ValueError: stop=['\\n'] is unavailable when skip_tokenizer_init=True"
        )
        assert runs[v].outcomes[1].stage == "normalize"


@pytest.mark.slow
def test_verify_messages_change_across_versions(runs):
    assert outcomes(runs, "0.5.11")[3] == "ValueError: temperature must be non-negative, got -1."
    assert (
        outcomes(runs, "0.5.18")[3]
        == "ValueError: temperature must be a non-negative finite number, got -1."
    )
    assert outcomes(runs, "0.5.11")[4] == "ACCEPTED"
    assert outcomes(runs, "0.5.22")[4].startswith(
        "ValueError: repetition_penalty must be in (0, 2]"
    )
    assert {outcomes(runs, v)[5] for v in VERSIONS} == {
        "ValueError: top_p must be in (0, 1], got 0."
    }
    assert runs["0.5.18"].outcomes[3].stage == "verify"


@pytest.mark.slow
def test_cli_check_json(run_cli, engine_store, monkeypatch, runs):
    monkeypatch.setenv("HARNESS_ENGINE_DIR", str(engine_store.root))
    code, out, err = run_cli(
        "engine",
        "check",
        "sglang==0.5.18",
        "--format",
        "json",
        "--params",
        '{"min_new_tokens": 8, "max_new_tokens": 16}',
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["outcome"] == MIN8
    assert doc["proof"]["version"] == "0.5.18" and doc["proof"]["ok"] is True
    code, out, _ = run_cli(
        "engine",
        "check",
        "sglang==v0.5.18-cu130-runtime",
        "--params",
        '{"min_new_tokens": 0, "max_new_tokens": 16}',
    )
    assert code == 0 and out.splitlines()[0] == "ACCEPTED"
    assert "sampling_params.py" in out
    code, out, _ = run_cli("engine", "list", "--format", "json")
    assert code == 0
    listed = {(e["version"], e["runtime"]) for e in json.loads(out)["environments"]}
    assert {(v, "params") for v in VERSIONS} <= listed


def test_cli_bad_params_is_usage_error(run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_ENGINE_DIR", str(tmp_path))
    code, out, err = run_cli("engine", "check", "sglang==0.5.18", "--params", "{bad")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "--params is not valid JSON" in err
    code, _, err = run_cli("engine", "check", "sglang==0.5.18", "--params", "[1]")
    assert code == 2 and "JSON object" in err
    code, _, err = run_cli("engine", "check", "sglang>=0.5", "--params", "{}")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []  # nothing built for bad input
