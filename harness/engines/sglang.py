"""SGLang engine environments: what each runtime installs, how it is built, and its fingerprint.

Runtimes:
- ``params``: the real sglang wheel at that version (``--no-deps``) plus only what
  ``sglang/srt/sampling/sampling_params.py`` imports: msgspec, and torch from 0.5.22 on (its
  ``watermarking.core`` imports torch). Enough to run ``SamplingParams`` without the server.
- ``cpu``: the real engine on the CPU (see ``cpu_runtime.py``).
- ``gpu``: the full distribution with its own dependencies (CUDA torch, the real ``sgl_kernel``), for
  machines with a GPU that reach an index; or, offline, from a bundle (``bundle.py``,
  ``gpu_runtime.py``) over the machine's own torch.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness import process
from harness.engines.store import EngineEnv, EngineStore, EnvKey
from harness.engines.versions import version_key
from harness.errors import HarnessError, UsageError
from harness.progress import phase
from harness.resources import PROBES_DIR

ENGINE = "sglang"
RUNTIMES = ("params", "cpu", "gpu")
# The CPU build of torch 2.13.0 lies on this project's machines (pip's find-links); override to
# point elsewhere (e.g. "torch==2.13.0+cpu --extra-index-url ...") on other machines.
TORCH_SPEC = os.environ.get("HARNESS_TORCH_SPEC", "torch==2.13.0")
PIP_TIMEOUT_S = 1800

Log = Callable[[str], None]


def _stderr(msg: str) -> None:
    sys.stderr.write(f"harness: {msg}\n")
    sys.stderr.flush()


def probe_script(name: str) -> Path:
    """A script under the repository's ``probes/`` folder (they run inside engine envs)."""
    path = PROBES_DIR / name
    if not path.is_file():
        raise HarnessError(f"probe script {path} is missing")
    return path


def params_requirements(version: str) -> list[str]:
    """What sampling_params.py of ``version`` imports beyond the standard library (checked in
    the wheels: 0.5.11 and 0.5.14 need nothing, msgspec later, torch from 0.5.22)."""
    reqs = ["msgspec"]
    if version_key(version) >= (0, 5, 22):
        reqs.append(TORCH_SPEC)
    return reqs


def env_python() -> str:
    """Interpreter the environments are created from (sglang ships wheels per CPython)."""
    return os.environ.get("HARNESS_ENGINE_PYTHON") or sys.executable


_NO_SUCH_VERSION = re.compile(r"No matching distribution found for (\S+)")


def run_logged(
    cmd: list[str], log: Log, *, env: dict[str, str] | None = None, timeout: float = PIP_TIMEOUT_S
) -> None:
    """Run a build step; on failure raise with the tail of its output."""
    log("$ " + " ".join(cmd))
    proc = process.run(
        cmd, stdout=process.PIPE, stderr=process.STDOUT, text=True, env=env, timeout=timeout
    )
    if proc.returncode != 0:
        missing = _NO_SUCH_VERSION.search(proc.stdout or "")
        if (
            missing
        ):  # the index has no such release: the user's input, one line (not pip's version list)
            raise UsageError(f"{missing.group(1)}: no such release in the package index")
        tail = "\n".join(proc.stdout.strip().splitlines()[-15:])
        raise HarnessError(f"build step failed ({proc.returncode}): {' '.join(cmd)}\n{tail}")


def create_venv(path: Path, log: Log) -> Path:
    run_logged([env_python(), "-m", "venv", "--without-pip", str(path)], log)
    return path / "bin" / "python"


def pip_install(python: Path, args: list[str], log: Log) -> None:
    # The harness's own pip installs into the environment (pip >= 22.3 has --python): no
    # ensurepip per environment.
    run_logged(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--disable-pip-version-check",
            "-q",
            *args,
        ],
        log,
    )


def describe(python: Path) -> dict[str, Any]:
    """Installed distributions and interpreter of an environment, and a fingerprint over them."""
    code = (
        "import importlib.metadata as m, json, platform;"
        "print(json.dumps({'python': platform.python_version(), 'packages': sorted("
        "f\"{d.metadata['Name'].lower().replace('_','-')}=={d.version}\" for d in m.distributions())}))"
    )
    out = process.run([str(python), "-I", "-c", code], capture_output=True, text=True, check=True)
    data = json.loads(out.stdout)
    text = "python " + data["python"] + "\n" + "\n".join(data["packages"])
    data["fingerprint"] = hashlib.sha256(text.encode()).hexdigest()
    return data


def build_params(version: str, path: Path, log: Log) -> dict[str, Any]:
    python = create_venv(path, log)
    pip_install(python, ["--no-deps", f"sglang=={version}"], log)
    extras = params_requirements(version)
    pip_install(python, extras, log)
    manifest = {"requirements": [f"sglang=={version} (--no-deps)", *extras], **describe(python)}
    # Smoke: the sampling module must import and report the version asked for.
    run = run_probe(python, {"vocab": 32000, "cases": []})
    if run["version"] != version:
        raise HarnessError(f"environment has sglang {run['version']}, expected {version}")
    manifest["module_file"] = os.path.relpath(run["module_file"], path)
    return manifest


def build_gpu(version: str, path: Path, log: Log) -> dict[str, Any]:
    """``pip install sglang==X`` with every dependency it declares: no stand-in anywhere."""
    python = create_venv(path, log)
    pip_install(python, [f"sglang=={version}"], log)
    return {"requirements": [f"sglang=={version}"], **describe(python)}


def run_probe(
    python: Path,
    request: dict[str, Any],
    *,
    script: str = "sglang_params_check.py",
    timeout: float = 300,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Run a probe script in an environment's interpreter (isolated mode) and parse its JSON."""
    proc = process.run(
        [str(python), "-I", str(probe_script(script))],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-12:])
        raise HarnessError(f"{script} failed in {python} (exit {proc.returncode}):\n{tail}")
    try:
        return json.loads(proc.stdout)
    except ValueError as exc:
        raise HarnessError(f"{script} printed no JSON: {proc.stdout[-500:]!r}") from exc


def released(version: str) -> bool | None:
    """Whether the package index lists ``sglang==version`` (one ``pip index versions`` query, before any
    environment is made); None when the index cannot be asked (then the build step says)."""
    try:
        proc = process.run(
            [
                sys.executable,
                "-m",
                "pip",
                "index",
                "versions",
                ENGINE,
                "--disable-pip-version-check",
            ],
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
    if runtime not in RUNTIMES:
        raise HarnessError(f"unknown runtime {runtime!r}")
    store = store or EngineStore()
    key = EnvKey(ENGINE, version, runtime)
    if (rebuild or store.get(key) is None) and released(version) is False:
        raise UsageError(f"{ENGINE}=={version}: no such release in the package index")

    def builder(tmp: Path) -> dict[str, Any]:
        log(f"building engine environment {key} in {store.path_for(key)}")
        start = time.monotonic()
        with phase(f"build engine environment {key}"):
            if runtime == "params":
                manifest = build_params(version, tmp, log)
            elif runtime == "gpu" and bundle is not None:
                from harness.engines.gpu_runtime import build_from_bundle

                manifest = build_from_bundle(version, bundle, tmp, log)
            elif runtime == "gpu":
                manifest = build_gpu(version, tmp, log)
            else:
                from harness.engines.cpu_runtime import build_cpu

                manifest = build_cpu(version, tmp, log)
        manifest["build_seconds"] = round(time.monotonic() - start, 1)
        log(f"built {key} in {manifest['build_seconds']} s")
        return manifest

    return store.build(key, builder, rebuild=rebuild)
