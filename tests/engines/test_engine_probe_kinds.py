"""Scenario integration: each column's own handler builds params, the version it pins judges them.

The repository is real (RepoBuilder); base pins sglang 0.5.11, head pins v0.5.18-cu130-runtime and
adds min_tokens. The engines are the real params environments (built once, cached).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

PROBES = Path(__file__).resolve().parents[2] / "probes"

HANDLER = """import uuid


class Handler:
    def __init__(self, engine):
        self.engine = engine
        self.choices = {}

    def _build_sampling_params(self, request):
        params = {"max_new_tokens": request.get("max_tokens", 16)}
%s        return params

    def generate(self, request_id, request):
        ids = [uuid.uuid4().hex for _ in range(request.get("n", 1))]
        self.choices.setdefault(request_id, []).extend(ids)
        for choice_id in ids:
            self.engine.generate(choice_id, self._build_sampling_params(request))
        return ids

    def cancel(self, request_id):
%s
"""
MIN = """        if request.get("min_tokens"):
            params["min_new_tokens"] = request["min_tokens"]
"""
CANCEL_FIRST = """        ids = self.choices.get(request_id, [])
        if ids:
            self.engine.abort(ids[0])"""
CANCEL_ALL = """        for choice_id in self.choices.get(request_id, []):
            self.engine.abort(choice_id)"""


def scenario(tmp: Path) -> Path:
    sc = tmp / "engine.yaml"
    sc.write_text(f"""
title: handler params against the pinned engine
refs: {{base: main, head: pr}}
probes:
  - id: params
    kind: sglang_params
    build: {{kind: python, file: {PROBES / "sglang_handler_probe.py"}, function: build_params}}
    engine_pin: {{file: docker/Dockerfile}}
    rows: {{min_tokens: [0, 8]}}
    expect:
      - {{column: head, same_as: base, row: {{min_tokens: 0}}, title: control row moved}}
  - id: cancel
    kind: python
    file: {PROBES / "sglang_handler_probe.py"}
    function: cancel
    rows: [{{n: 3, late: 0}}, {{n: 3, late: 1}}]
""")
    return sc


@pytest.mark.slow
def test_params_per_pinned_version_and_handler_cancel(
    builder, run_cli, tmp_path, monkeypatch, request
):
    root = os.environ.get("HARNESS_ENGINE_DIR") or str(
        request.config.cache.mkdir("harness-engines")
    )
    monkeypatch.setenv("HARNESS_ENGINE_DIR", root)
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    builder.commit(
        "init",
        {
            "serving/__init__.py": "",
            "serving/handler.py": HANDLER % ("", CANCEL_FIRST),
            "docker/Dockerfile": "FROM lmsysorg/sglang:v0.5.11-cu126\n",
        },
    )
    builder.branch("pr")
    builder.checkout("pr")
    builder.commit(
        "min_tokens, bump engine",
        {
            "serving/handler.py": HANDLER % (MIN, CANCEL_ALL),
            "docker/Dockerfile": "FROM lmsysorg/sglang:v0.5.18-cu130-runtime\n",
        },
    )
    before = builder.snapshot()
    code, out, err = run_cli(
        "probe", str(scenario(tmp_path)), "--repo", str(builder.path), "--format", "json"
    )
    assert code in (0, 1), err
    assert builder.snapshot() == before
    doc = json.loads(out)
    text = json.dumps(doc)
    # control row: min_tokens=0 builds the same params and both versions accept them
    assert (
        text.count('{\\"max_new_tokens\\": 16} \\u2192 ACCEPTED')
        + text.count('{\\"max_new_tokens\\": 16} → ACCEPTED')
        >= 2
    )
    # head builds min_new_tokens=8 and its pinned 0.5.18 rejects it; base builds no min_new_tokens
    assert "min_new_tokens=8 is unavailable when skip_tokenizer_init=True" in text
    assert (
        "sglang==0.5.18 (docker/Dockerfile)" in text
        and "sglang==0.5.11 (docker/Dockerfile)" in text
    )
    # the tree's own handler: base aborts 1 of 3 choices, head all 3 but not one first seen later
    assert "aborted 1/3" in text and "aborted 3/3" in text and "late 0/1" in text
