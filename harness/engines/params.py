"""Run sampling params through the real SamplingParams of a pinned sglang version.

One interpreter per version answers every case (a batch), inside that version's ``params``
environment; each answer carries the module path and version it came from as proof.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.engines import sglang
from harness.engines.store import EngineStore

DEFAULT_VOCAB = 32000


@dataclass
class ParamsOutcome:
    params: dict[str, Any]
    outcome: str  # "ACCEPTED" or "<ExceptionType>: <message>"
    stage: str  # construct | normalize | verify | accepted


@dataclass
class ParamsRun:
    """Answers of one engine version, with the proof of which code gave them."""

    version: str  # asked for
    version_proof: str  # importlib.metadata version inside the environment
    module_file: str  # sampling_params.py the answers came from
    python: str
    fingerprint: str
    env_path: str
    vocab: int
    outcomes: list[ParamsOutcome] = field(default_factory=list)

    @property
    def proof_ok(self) -> bool:
        return self.version_proof == self.version and Path(
            self.module_file
        ).resolve().is_relative_to(Path(self.env_path).resolve())


def check_params(
    version: str,
    cases: list[dict[str, Any]],
    *,
    vocab: int = DEFAULT_VOCAB,
    store: EngineStore | None = None,
    log: sglang.Log = sglang._stderr,
) -> ParamsRun:
    """Feed each params dict to ``SamplingParams(**p).normalize(None); .verify(vocab)`` of
    sglang==version (its environment is built first when missing)."""
    env, _ = sglang.ensure_env(version, "params", store=store, log=log)
    answer = sglang.run_probe(env.python, {"vocab": vocab, "cases": cases})
    outcomes = [
        ParamsOutcome(dict(p), r["outcome"], r["stage"])
        for p, r in zip(cases, answer["results"], strict=False)
    ]
    return ParamsRun(
        version=version,
        version_proof=answer["version"],
        module_file=answer["module_file"],
        python=answer["python"],
        fingerprint=env.fingerprint,
        env_path=str(env.path),
        vocab=vocab,
        outcomes=outcomes,
    )
