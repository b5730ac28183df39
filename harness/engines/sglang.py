"""SGLang engine environments: one built on demand per version and runtime, from the runtime
registry (``runtimes.py``; each runtime a module satisfying ``runtime.Runtime``). Each runtime
builds through ``harness/envs/`` (venv, installer, description) and ``sglang_env.py`` (what the
sglang runtimes share: the torch pin, the engine interpreter, the engine probe).

Runtimes (``params_runtime.py``, ``cpu_runtime.py``, ``gpu_runtime.py``):
- ``params``: the real sglang wheel at that version (``--no-deps``) plus only what
  ``sglang/srt/sampling/sampling_params.py`` imports: msgspec, and torch from 0.5.22 on (its
  ``watermarking.core`` imports torch). Enough to run ``SamplingParams`` without the server.
- ``cpu``: the real engine on the CPU (see ``cpu_runtime.py``).
- ``gpu``: the full distribution with its own dependencies (CUDA torch, the real ``sgl_kernel``), for
  machines with a GPU that reach an index; or, offline, from a bundle (``bundle.py``,
  ``gpu_runtime.py``) over the machine's own torch.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from harness.engines.runtimes import RUNTIMES as RUNTIME_REGISTRY
from harness.engines.runtimes import get_runtime
from harness.engines.sglang_env import (
    PIP_TIMEOUT_S,
    TORCH_SPEC,
    Log,
    env_python,
    probe_script,
    run_probe,
)
from harness.engines.store import EngineEnv, EngineStore, EnvKey
from harness.errors import HarnessError, UsageError
from harness.infra import process
from harness.infra.progress import phase

ENGINE = "sglang"
RUNTIMES = tuple(RUNTIME_REGISTRY)  # the names, in the registry's order


def _stderr(msg: str) -> None:
    sys.stderr.write(f"harness: {msg}\n")
    sys.stderr.flush()


def released(version: str) -> bool | None:
    """Whether the package index lists ``sglang==version`` (one ``pip index versions`` query, before any
    environment is made); None when the index cannot be asked (then the build step says)."""
    try:
        proc = process.run(
            process.own_module("pip", "index", "versions", ENGINE, "--disable-pip-version-check"),
            capture_output=True,
            text=True,
            timeout=120,
        )
    except (OSError, process.TimeoutExpired):
        return None
    line = next(
        (ln for ln in proc.stdout.splitlines() if ln.startswith("Available versions:")), None
    )
    if proc.returncode != 0 or line is None:
        return None
    listed = {v.strip() for v in line.split(":", 1)[1].split(",")}
    try:
        from packaging.version import InvalidVersion, Version

        try:
            return Version(version) in {Version(v) for v in listed}
        except InvalidVersion:
            return version in listed
    except ImportError:
        return version in listed


def ensure_env(
    version: str,
    runtime: str = "params",
    *,
    store: EngineStore | None = None,
    log: Log = _stderr,
    rebuild: bool = False,
    bundle: Path | None = None,
) -> tuple[EngineEnv, bool]:
    """The environment for sglang==version/runtime, built when missing (says so via ``log``);
    ``bundle``: build the ``gpu`` runtime offline from that ``harness engine bundle`` folder."""
    runtime_impl = get_runtime(runtime)
    if runtime_impl is None:
        raise HarnessError(f"unknown runtime {runtime!r}")
    store = store or EngineStore()
    key = EnvKey(ENGINE, version, runtime)
    if (rebuild or store.get(key) is None) and released(version) is False:
        raise UsageError(f"{ENGINE}=={version}: no such release in the package index")

    def builder(tmp: Path) -> dict[str, Any]:
        log(f"building engine environment {key} in {store.path_for(key)}")
        start = time.monotonic()
        with phase(f"build engine environment {key}"):
            manifest = runtime_impl.build(version, tmp, log, bundle)
        manifest["build_seconds"] = round(time.monotonic() - start, 1)
        log(f"built {key} in {manifest['build_seconds']} s")
        return manifest

    return store.build(key, builder, rebuild=rebuild)


__all__ = [  # the shared sglang parts live in sglang_env.py; these names stay importable here
    "ENGINE",
    "PIP_TIMEOUT_S",
    "RUNTIMES",
    "TORCH_SPEC",
    "Log",
    "ensure_env",
    "env_python",
    "probe_script",
    "released",
    "run_probe",
]
