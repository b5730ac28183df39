"""The ``params`` runtime: the sglang package without its dependencies, plus what
``sampling_params.py`` imports, enough to construct the real ``SamplingParams``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from harness.engines.sglang_env import TORCH_SPEC, Log, create_venv, pip_install, run_probe
from harness.engines.versions import version_key
from harness.envs.fingerprint import describe_env
from harness.errors import HarnessError

NAME = "params"


def params_requirements(version: str) -> list[str]:
    """What sampling_params.py of ``version`` imports beyond the standard library (checked in
    the wheels: 0.5.11 and 0.5.14 need nothing, msgspec later, torch from 0.5.22)."""
    reqs = ["msgspec"]
    if version_key(version) >= (0, 5, 22):
        reqs.append(TORCH_SPEC)
    return reqs


def build(version: str, path: Path, log: Log, bundle: Path | None = None) -> dict[str, Any]:
    """The package with ``--no-deps`` and the sampling module's imports; a smoke probe checks the
    version the module reports."""
    python = create_venv(path, log)
    pip_install(python, ["--no-deps", f"sglang=={version}"], log)
    extras = params_requirements(version)
    pip_install(python, extras, log)
    manifest = {"requirements": [f"sglang=={version} (--no-deps)", *extras], **describe_env(python)}
    # Smoke: the sampling module must import and report the version asked for.
    run = run_probe(python, {"vocab": 32000, "cases": []})
    if run["version"] != version:
        raise HarnessError(f"environment has sglang {run['version']}, expected {version}")
    manifest["module_file"] = os.path.relpath(run["module_file"], path)
    return manifest
