"""Feed sampling params to the real SamplingParams of the sglang installed in THIS interpreter.

Runs inside an engine environment (never imports harness). Reads JSON on stdin:
    {"vocab": 32000, "cases": [{...params...}, ...]}
and writes JSON on stdout:
    {"version": "0.5.18", "module_file": ".../sampling_params.py", "python": "3.11.7",
     "results": [{"outcome": "ACCEPTED" | "ValueError: ...", "stage": "construct|normalize|verify|accepted"}]}

Each case runs ``SamplingParams(**params)``, ``.normalize(None)`` (no tokenizer, as with
skip_tokenizer_init=True) and ``.verify(vocab)``. ``import sglang`` pulls in torch, triton and the
whole server, so a bare ``sglang`` package module whose ``__path__`` is the installed folder is
registered first; only the sampling module (and what it imports) is loaded.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import json
import platform
import sys
import types


def load_sampling_params():
    spec = importlib.util.find_spec("sglang")  # locates the package without running __init__
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("sglang is not installed in this interpreter")
    pkg = types.ModuleType("sglang")
    pkg.__path__ = list(spec.submodule_search_locations)
    pkg.__file__ = spec.origin
    sys.modules["sglang"] = pkg
    return importlib.import_module("sglang.srt.sampling.sampling_params")


def run_case(cls, params: dict, vocab: int) -> dict:
    stage = "construct"
    try:
        sp = cls(**params)
        stage = "normalize"
        sp.normalize(None)
        stage = "verify"
        sp.verify(vocab)
    except Exception as exc:  # the engine's exact answer is the result
        return {"outcome": f"{type(exc).__name__}: {exc}", "stage": stage}
    return {"outcome": "ACCEPTED", "stage": "accepted"}


def main() -> int:
    request = json.load(sys.stdin)
    module = load_sampling_params()
    vocab = int(request.get("vocab", 32000))
    results = [run_case(module.SamplingParams, dict(p), vocab) for p in request["cases"]]
    json.dump({
        "version": importlib.metadata.version("sglang"),
        "module_file": module.__file__,
        "python": platform.python_version(),
        "results": results,
    }, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
