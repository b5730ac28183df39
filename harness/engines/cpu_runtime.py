"""The ``cpu`` runtime: the real sglang Engine on a machine without a GPU.

Recipe (what ran here for 0.5.18: one engine start plus four n=2 scenarios in ~3 minutes):
- the sglang wheel with ``--no-deps``, then its declared dependencies minus the CUDA-only ones
  (flashinfer, sglang-kernel, deep-ep/gemm, cutlass, tilelang, torch_memory_saver, torchaudio,
  torchcodec ...), read from the wheel's own metadata;
- torch: what pip resolves under this machine's cap (torch<=2.14.1, found on local disk). timm pulls
  torchvision, so 0.5.18 ends up on torch 2.14.1 + torchvision 0.29.1 although it pins 2.13.0; the
  manifest records the installed torch so a reader sees the deviation;
- ``sgl_kernel``: a STAND-IN (``sgl_kernel_standin.py``) installed as the ``sgl_kernel`` package:
  PyPI has no CPU build; on this path its names are imported but never called (a call raises).
Needs ~7 GB of disk and 5-10 minutes with a cold pip cache.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

from harness.engines import sglang_env as sg
from harness.envs import venv
from harness.envs.fingerprint import describe_env
from harness.errors import HarnessError
from harness.infra import process

# Distributions that only make sense with CUDA (or are not needed on the CPU path).
GPU_ONLY = {
    "cuda-python",
    "cuda-tile",
    "flash-attn-4",
    "flashinfer-python",
    "humming-kernels",
    "nvidia-cutlass-dsl",
    "nvidia-mathdx",
    "nvshmem4py-cu13",
    "quack-kernels",
    "sgl-deep-ep",
    "sgl-deep-gemm",
    "sglang-kernel",
    "sgl-kernel",
    "tilelang",
    "tokenspeed-mla",
    "torch-memory-saver",
    "torchaudio",
    "torchcodec",
    "apache-tvm-ffi",
    "kernels",
    "av",
    "decord2",
    "py-spy",
}
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")

NAME = "cpu"
CPU_ENV = {"SGLANG_USE_CPU_ENGINE": "1"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def cpu_requirements(python: Path) -> list[str]:
    """The installed sglang's own Requires-Dist (no extras), minus GPU_ONLY, evaluated in the env."""
    code = "import importlib.metadata as m, json; print(json.dumps(m.requires('sglang') or []))"
    out = process.run(
        [str(python), "-I", "-c", code], capture_output=True, text=True, check=True
    ).stdout
    import json

    keep = []
    for req in json.loads(out):
        if "extra ==" in req:
            continue
        m = _NAME.match(req)
        if not m or _norm(m.group(1)) in GPU_ONLY:
            continue
        if _norm(m.group(1)) == "torch":
            continue  # installed first, on its own
        keep.append(req)
    return keep


def install_standin(python: Path) -> Path:
    target = venv.site_packages(python) / "sgl_kernel"
    target.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(Path(__file__).with_name("sgl_kernel_standin.py"), target / "__init__.py")
    return target


def build_cpu(version: str, path: Path, log: sg.Log) -> dict[str, Any]:
    python = sg.create_venv(path, log)
    sg.pip_install(python, ["--no-deps", f"sglang=={version}"], log)
    sg.pip_install(python, [sg.TORCH_SPEC], log)
    reqs = cpu_requirements(python)
    sg.pip_install(python, reqs, log)
    install_standin(python)
    manifest = {
        "requirements": [f"sglang=={version} (--no-deps)", sg.TORCH_SPEC, *reqs],
        "standins": {"sgl_kernel": "harness/engines/sgl_kernel_standin.py (no CPU build on PyPI)"},
        "env": CPU_ENV,
        **describe_env(python),
    }
    torch = [p for p in manifest["packages"] if p.startswith("torch==")]
    manifest["torch"] = torch[0] if torch else ""
    if not torch:
        raise HarnessError("cpu runtime: torch did not install")
    return manifest


def build(version: str, path: Path, log: sg.Log, bundle: Path | None = None) -> dict[str, Any]:
    """The real engine on the CPU (``bundle`` does not apply)."""
    return build_cpu(version, path, log)
