"""Feed sampling params to the real SamplingParams of the sglang installed in THIS interpreter.

Runs inside an engine environment (never imports harness). Reads JSON on stdin:
    {"vocab": 32000, "cases": [{...params...}, ...]}
and writes JSON on stdout:
    {"version": "0.5.18", "module_file": ".../sampling_params.py", "python": "3.11.7",
     "results": [{"outcome": "ACCEPTED" | "ValueError: ...", "stage": "construct|normalize|verify|accepted"}]}

Each case runs ``SamplingParams(**params)``, ``.normalize(None)`` (no tokenizer, as with
skip_tokenizer_init=True; with ``"tokenizer": true`` a tiny real word-level tokenizer instead)
and ``.verify(vocab)``. ``import sglang`` pulls in torch, triton and the
whole server, so a bare ``sglang`` package module whose ``__path__`` is the installed folder is
registered first; only the sampling module (and what it imports) is loaded.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import sys
import tempfile
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


def run_case(cls, params: dict, vocab: int, tokenizer=None) -> dict:
    stage = "construct"
    try:
        sp = cls(**params)
        stage = "normalize"
        sp.normalize(tokenizer)
        stage = "verify"
        sp.verify(vocab)
    except Exception as exc:  # the engine's exact answer is the result
        return {"outcome": f"{type(exc).__name__}: {exc}", "stage": stage}
    return {"outcome": "ACCEPTED", "stage": "accepted"}


def write_tiny_tokenizer(folder: str, vocab_size: int) -> None:
    """A real (tokenizers/transformers) word-level tokenizer for the tiny model: <unk>=0, <s>=1, </s>=2."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, **{f"t{i}": i for i in range(3, vocab_size)}}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(os.path.join(folder, "tokenizer.json"))
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as fh:
        json.dump(
            {
                "tokenizer_class": "PreTrainedTokenizerFast",
                "bos_token": "<s>",
                "eos_token": "</s>",
                "unk_token": "<unk>",
                "model_max_length": 1024,
            },
            fh,
        )


def main() -> int:
    request = json.load(sys.stdin)
    module = load_sampling_params()
    vocab = int(request.get("vocab", 32000))
    tokenizer = None
    if request.get("tokenizer"):  # a real tokenizer (needs transformers and tokenizers in the env)
        from transformers import AutoTokenizer

        with tempfile.TemporaryDirectory(prefix="harness-tiny-tok-") as folder:
            write_tiny_tokenizer(folder, int(request.get("tokenizer_vocab", 512)))
            tokenizer = AutoTokenizer.from_pretrained(folder)
    results = [run_case(module.SamplingParams, dict(p), vocab, tokenizer) for p in request["cases"]]
    json.dump(
        {
            "version": importlib.metadata.version("sglang"),
            "module_file": module.__file__,
            "python": platform.python_version(),
            "results": results,
        },
        sys.stdout,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
