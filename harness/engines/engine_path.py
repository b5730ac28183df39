"""What the sglang engine path imports, per version: the ``gpu`` bundle's requirement list.

Measured, not guessed: ``import_trace.py`` starts the real ``sglang.Engine`` (tiny
Llama, dummy weights, the n>1 probe) in the ``cpu`` environment of that version with a
``sitecustomize`` that records every top-level module in every engine process (the main process,
the scheduler and the detokenizer), then maps modules to distributions with
``importlib.metadata.packages_distributions()``. The versions are the ones installed there
(resolved by pip against sglang's own pins), so the set is known to work together.

On top of that, what the CUDA path imports and the CPU path does not (read in the wheels):
``sglang/srt/layers/sampler.py`` imports ``flashinfer.sampling`` and ``sgl_kernel`` under
``if is_cuda()``; layernorm/activation/rotary import ``sgl_kernel`` names. Those two, and xgrammar
(42.6 MiB; ``server_args`` -> ``function_call_parser`` -> ``inkling_detector`` imports
``StructuralTag`` unconditionally), are ``FIT_OR_STANDIN``: the real wheel when it fits the
bundle, else a stand-in (see bundle.py).
"""

from __future__ import annotations

from harness.engines.versions import version_key

# distribution -> version, from the import trace of the real engine (0.5.18 and 0.5.22, cpu env):
# what both traces found at the same version, then what each version has of its own.
_BOTH: dict[str, str] = {
    "aiohappyeyeballs": "2.7.1",
    "aiohttp": "3.14.5",
    "aiosignal": "1.4.0",
    "annotated-doc": "0.0.7",
    "annotated-types": "0.8.0",
    "anyio": "4.16.0",
    "apache-tvm-ffi": "0.1.15.post2",
    "attrs": "26.1.0",
    "certifi": "2026.10.19.post1",
    "cffi": "2.1.1",
    "charset-normalizer": "3.5.3",
    "click": "8.5.1",
    "cuda-bindings": "13.5.0",
    "cuda-pathfinder": "1.9.1",
    "dill": "0.4.1",
    "distro": "1.9.0",
    "einops": "0.8.2",
    "fastapi": "0.165.0",
    "filelock": "4.3.1",
    "frozenlist": "1.8.0",
    "fsspec": "2026.9.0",
    "gguf": "0.19.0",
    "h11": "0.16.0",
    "httpcore": "1.0.9",
    "httpx": "0.29.0",
    "huggingface-hub": "1.33.0",
    "idna": "3.20",
    "ipython": "9.18.1",
    "jinja2": "3.1.6",
    "jsonschema": "4.26.0",
    "jsonschema-specifications": "2025.9.1",
    "loguru": "0.7.3",
    "markupsafe": "3.0.4",
    "mistral-common": "1.13.1",
    "mpmath": "1.3.0",
    "msgspec": "0.23.0",
    "multidict": "7.2.1",
    "networkx": "3.6.1",
    "numpy": "2.3.5",
    "nvidia-ml-py": "13.615.71",
    "openai": "2.6.1",
    "opentelemetry-api": "1.45.2",
    "orjson": "3.13.0",
    "packaging": "26.4",
    "partial-json-parser": "0.2.1.1.post7",
    "pillow": "13.0.0",
    "propcache": "0.5.4",
    "psutil": "7.2.2",
    "pybase64": "1.5.1",
    "pycountry": "26.2.16",
    "pydantic": "2.14.4",
    "pydantic-core": "2.50.5",
    "pydantic-extra-types": "2.11.1",
    "pygments": "2.21.0",
    "python-multipart": "0.0.34",
    "pyyaml": "6.0.4",
    "pyzmq": "27.3.0",
    "referencing": "0.37.0",
    "regex": "2026.11.19",
    "requests": "2.34.2",
    "rich": "15.0.0",
    "rpds-py": "2026.9.1",
    "safetensors": "0.8.0",
    "scipy": "1.17.1",
    "setproctitle": "1.3.8",
    "setuptools": "84.2.1",
    "smg-grpc-servicer": "0.14.1",
    "sniffio": "1.3.1",
    "soundfile": "0.13.1",
    "starlette": "1.10.0",
    "sympy": "1.14.0",
    "tiktoken": "0.14.0",
    "timm": "1.0.16",
    "torch": "2.14.1",
    "torchvision": "0.29.1",
    "tqdm": "4.70.1",
    "traitlets": "5.16.1",
    "triton": "3.8.0",
    "typing-extensions": "4.16.0",
    "typing-inspection": "0.4.5",
    "urllib3": "2.8.0",
    "uvicorn": "0.55.0",
    "uvloop": "0.23.0",
    "watchfiles": "1.3.0",
    "yarl": "1.25.1",
    "zstandard": "0.25.0",
}
_OWN: dict[str, dict[str, str]] = {
    "0.5.18": {
        "compressed-tensors": "0.20.1",
        "lxml": "6.1.3",
        "sentencepiece": "0.2.3",
        "tokenizers": "0.22.2",
        "transformers": "5.12.1",
        "xgrammar": "0.2.1",
    },
    "0.5.22": {
        "compressed-tensors": "0.18.0",
        "sentencepiece": "0.2.1",
        "tokenizers": "0.23.2",
        "transformers": "5.19.0",
        "xgrammar": "0.2.7",
    },
}
LOCKS: dict[str, dict[str, str]] = {
    version: dict(sorted({**_BOTH, **own}.items())) for version, own in _OWN.items()
}

# Shipped real when the wheel fits what is left of --max-size, else as a stand-in:
# distribution -> (package, stand-in source under harness/engines/, engine kwargs the stand-in needs).
FIT_OR_STANDIN: dict[str, tuple[str, str, dict[str, object]]] = {
    "xgrammar": ("xgrammar", "standin_module.py", {"grammar_backend": "none"}),
    "flashinfer-python": (
        "flashinfer",
        "sgl_kernel_standin.py",  # CUDA path only
        {"attention_backend": "torch_native", "sampling_backend": "pytorch"},
    ),
    "sglang-kernel": (
        "sgl_kernel",
        "sgl_kernel_standin.py",
        {
            "attention_backend": "torch_native",
            "sampling_backend": "pytorch",
            "disable_cuda_graph": True,
        },
    ),
}

# Imported on the engine path only behind try/except or an availability check: the real 0.5.18
# engine (cpu env, tiny model, grammar_backend="none") answered the n>1 questions the same with
# each of these made absent (a PathFinder that finds nothing for them). Never shipped.
_WHY = "the engine ran the n>1 probe with it absent"
OPTIONAL: dict[str, str] = {
    "mistral-common": f"gguf and transformers import it under try/except; {_WHY}",
    "pycountry": f"via pydantic-extra-types, via mistral-common; {_WHY}",
    "pydantic-extra-types": f"via mistral-common; {_WHY}",
    "zstandard": f"httpx imports it under try/except; {_WHY}",
    "soundfile": f"audio inputs only; {_WHY}",
}


def lock_for(version: str) -> tuple[str, dict[str, str]]:
    """The traced lock for ``version``: its own, else the newest traced one below it, else the oldest."""
    if version in LOCKS:
        return version, dict(LOCKS[version])
    known = sorted(LOCKS, key=version_key)
    below = [v for v in known if version_key(v) <= version_key(version)]
    chosen = below[-1] if below else known[0]
    return chosen, dict(LOCKS[chosen])
