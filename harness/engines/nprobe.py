"""n>1 behaviour of a real sglang Engine version: runs probes/sglang_n_probe.py in its env.

The model is a tiny Llama config (hidden 64, 2 layers, vocab 512) with dummy weights and no
tokenizer, so no download happens; the engine runs on the CPU (``cpu`` runtime) or, on a machine
with a GPU and a GPU environment, with ``device="cuda"``.
"""

from __future__ import annotations

import os
from typing import Any

from harness.engines import sglang
from harness.engines.cpu_runtime import CPU_ENV
from harness.engines.store import EngineStore

TINY_LLAMA = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 4,
    "vocab_size": 512,
    "max_position_embeddings": 1024,
    "rms_norm_eps": 1e-6,
    "hidden_act": "silu",
    "torch_dtype": "float32",
    "bos_token_id": 1,
    "eos_token_id": 2,
    "tie_word_embeddings": False,
    "rope_theta": 10000.0,
}
CPU_ENGINE_KWARGS = {
    "load_format": "dummy",
    "skip_tokenizer_init": True,
    "device": "cpu",
    "attention_backend": "torch_native",
    "sampling_backend": "pytorch",
    "disable_overlap_schedule": True,
    "disable_cuda_graph": True,
    "mem_fraction_static": 0.3,
    "log_level": "error",
}
GPU_ENGINE_KWARGS = {
    "load_format": "dummy",
    "skip_tokenizer_init": True,
    "mem_fraction_static": 0.2,
    "log_level": "error",
}

QUESTIONS = ("distinct_ids", "abort_caller", "abort_choices", "cancel_midstream", "state_left")


def n_request(
    n: int = 2,
    max_new_tokens: int = 200,
    device: str = "cpu",
    extra_kwargs: dict[str, Any] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """The probe's stdin: the tiny model, the engine arguments for ``device`` (plus
    ``extra_kwargs``, e.g. what a bundle's stand-ins need) and ``options`` (``params_cases``,
    ``tokenizer``, ``n_table``; see probes/sglang_n_probe.py)."""
    kwargs = dict(CPU_ENGINE_KWARGS if device == "cpu" else GPU_ENGINE_KWARGS)
    kwargs.update(extra_kwargs or {})
    return {
        "model_config": TINY_LLAMA,
        "n": n,
        "max_new_tokens": max_new_tokens,
        "settle_s": 2.0,
        "engine_kwargs": kwargs,
        **options,
    }


def run_n_probe(
    version: str,
    *,
    runtime: str = "cpu",
    store: EngineStore | None = None,
    log: sglang.Log = sglang._stderr,
    timeout: float = 900,
    device: str | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Start the real Engine of ``version`` once and answer the n>1 questions (raw JSON).

    A ``gpu`` environment built from a bundle brings the engine switches its stand-ins need
    (manifest ``env`` and ``engine_kwargs``); ``device`` overrides where it runs (``cpu`` for a
    gpu environment on a machine without one, as the CPU half of bench/gpu_engine.sh does)."""
    env, _ = sglang.ensure_env(version, runtime, store=store, log=log)
    device = device or ("cpu" if runtime == "cpu" else "cuda")
    penv = {**os.environ, **env.manifest.get("env", {})}
    extra = dict(env.manifest.get("engine_kwargs", {}))
    if device == "cpu":
        penv.update(CPU_ENV)
    out = sglang.run_probe(
        env.python,
        n_request(device=device, extra_kwargs=extra, **options),
        script="sglang_n_probe.py",
        timeout=timeout,
        env=penv,
    )
    out["fingerprint"] = env.fingerprint
    out["env_path"] = str(env.path)
    return out


def answers(raw: dict[str, Any]) -> dict[str, str]:
    """One short cell per question, from the probe's raw JSON."""
    s = raw["scenarios"]
    ids = s["ids"]
    ac, ach, cm = s["abort_caller"], s["abort_choices"], s["cancel_midstream"]
    left = sorted({*ac["state_left"], *ach["state_left"], *cm["state_left"], *ids["state_left"]})
    return {
        "distinct_ids": (
            f"{'distinct' if ids['distinct'] else 'shared'} ids; caller rid "
            f"{'is' if ids['caller_rid_among_choices'] else 'is not'} a choice id"
        ),
        "abort_caller": f"choices end {'/'.join(str(f) for f in ac['final'])}",
        "abort_choices": f"choices end {'/'.join(str(f) for f in ach['final'])}",
        "cancel_midstream": (
            f"{'every' if cm['every_unfinished_aborted'] else 'not every'} unfinished choice "
            f"aborted ({sum(v['finish'] == 'abort' for v in cm['after'].values())}/"
            f"{len(cm['unfinished_at_cancel'])})"
        ),
        "state_left": f"{len(left)} rid_to_state entr{'y' if len(left) == 1 else 'ies'} left",
    }
