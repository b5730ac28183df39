"""The ``gpu`` runtime installed offline from a bundle (``engine add … --runtime gpu --from-bundle DIR``).

A venv over the machine's own interpreter that sees that interpreter's site folders (its torch,
CUDA and triton) after its own: the effect of ``--system-site-packages``, done with a ``.pth`` of
``site.addsitedir`` lines so that it also holds when the interpreter is itself a venv (the
device's python3 is /opt/torch/.venv, whose torch a plain --system-site-packages would miss);
then ``pip install --no-index --find-links DIR --no-deps`` of the bundle's requirement list
(nothing is resolved from an index; dependencies the engine path does not import are not shipped,
hence ``--no-deps``). ``$HARNESS_ENGINE_BASE_SITE`` (folders, ``:``-separated) replaces
the interpreter's folders: how a machine whose torch lives elsewhere (here: the ``cpu``
environment's, see ``base_site.py``) stands in for the image.

The manifest records the bundle (sha256 of its ``bundle.json``, stand-ins, what was left out), the
torch and CUDA the environment found, the engine switches the stand-ins need, and the fingerprint.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
from pathlib import Path
from typing import Any

from harness.engines import sglang_env as sg
from harness.engines.bundle import MANIFEST, read_bundle
from harness.envs import venv
from harness.envs.fingerprint import describe_env, interpreter_version
from harness.errors import HarnessError, UsageError
from harness.infra import process

NAME = "gpu"
BASE_SITE_ENV = "HARNESS_ENGINE_BASE_SITE"
_TORCH = (
    "import json, torch; a = torch.cuda.is_available(); print(json.dumps({'torch': torch.__version__, "
    "'cuda': torch.version.cuda, 'cuda_available': a, "
    "'device': torch.cuda.get_device_name(0) if a else None}))"
)
_IMPORT = "import sglang.srt.entrypoints.engine"


def _minor(python: str) -> str:
    """``3.12`` for the interpreter the environment will be created from."""
    version = interpreter_version(python)
    if version == "unknown":
        raise UsageError(f"engine interpreter {python} does not run")
    return ".".join(version.split(".")[:2])


def check_bundle(folder: Path, version: str) -> dict[str, Any]:
    """Everything ``--from-bundle`` can refuse before anything is written (UsageError)."""
    manifest = read_bundle(folder, version)
    want = manifest["target"]["python_version"]
    have = _minor(sg.env_python())
    if have != want:
        raise UsageError(
            f"--from-bundle {folder}: bundle is for Python {want}, the engine interpreter "
            f"{sg.env_python()} is {have} (set HARNESS_ENGINE_PYTHON)"
        )
    return manifest


def torch_info(python: Path) -> dict[str, Any]:
    """torch and CUDA as the environment sees them ({} with the error when torch does not import)."""
    proc = process.run(
        [str(python), "-I", "-c", _TORCH], capture_output=True, text=True, timeout=300
    )
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(proc.stdout)


def build_from_bundle(version: str, folder: Path, path: Path, log: sg.Log) -> dict[str, Any]:
    """Create the environment at ``path`` from the bundle in ``folder``; return its manifest."""
    bundle = read_bundle(folder, version)
    base = [d for d in os.environ.get(BASE_SITE_ENV, "").split(os.pathsep) if d]
    system_site = not base
    if system_site:
        # the interpreter's own site folders: when it is itself a venv (the device's python3 is
        # /opt/torch/.venv), --system-site-packages would see its base's, not the torch beside it
        base = venv.site_dirs(sg.env_python())
    python = sg.create_venv(path, log)
    venv.add_site_dirs(python, base)
    sg.pip_install_offline(python, folder, bundle["requirements"], log)
    torch = torch_info(python)
    if "torch" not in torch:
        raise HarnessError(
            f"gpu runtime from bundle: torch does not import in {path}: {torch.get('error')}"
        )
    env = {**os.environ, **bundle.get("engine_env", {})}
    proc = process.run(
        [str(python), "-I", "-c", _IMPORT], capture_output=True, text=True, timeout=600, env=env
    )
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-6:])
        raise HarnessError(f"gpu runtime from bundle: `{_IMPORT}` failed in {path}:\n{tail}")
    run = sg.run_probe(python, {"vocab": 32000, "cases": []})
    if run["version"] != version:
        raise HarnessError(f"environment has sglang {run['version']}, expected {version}")
    digest = hashlib.sha256((folder / MANIFEST).read_bytes()).hexdigest()
    return {
        "requirements": [
            f"{r} (--no-index --find-links bundle --no-deps)" for r in bundle["requirements"]
        ],
        "bundle": {
            "path": str(folder.resolve()),
            "sha256": digest,
            "lock": bundle["lock"],
            "standins": bundle["standins"],
            "left_out": len(bundle["left_out"]),
            "total_bytes": bundle["total_bytes"],
        },
        "site_under": base,
        "site_from": "interpreter" if system_site else BASE_SITE_ENV,
        "machine": platform.node(),
        "torch": torch.get("torch", ""),
        "cuda": torch.get("cuda"),
        "cuda_available": torch.get("cuda_available"),
        "gpu": torch.get("device"),
        "env": bundle.get("engine_env", {}),
        "engine_kwargs": bundle.get("engine_kwargs", {}),
        "standins": bundle["standins"],
        "module_file": os.path.relpath(run["module_file"], path),
        **describe_env(python),
    }


def build_gpu(version: str, path: Path, log: sg.Log) -> dict[str, Any]:
    """``pip install sglang==X`` with every dependency it declares: no stand-in anywhere."""
    python = sg.create_venv(path, log)
    sg.pip_install(python, [f"sglang=={version}"], log)
    return {"requirements": [f"sglang=={version}"], **describe_env(python)}


def build(version: str, path: Path, log: sg.Log, bundle: Path | None = None) -> dict[str, Any]:
    """Offline from ``bundle`` when given, else every declared dependency from the index."""
    if bundle is not None:
        return build_from_bundle(version, bundle, path, log)
    return build_gpu(version, path, log)
