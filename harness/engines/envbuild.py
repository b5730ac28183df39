"""The build steps every engine runtime shares: the interpreter environments are made from, a
logged pip step whose failure shows its output's tail, an environment's fingerprint, and running a
probe script from ``probes/`` inside an environment. No runtime is named here."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.errors import HarnessError, UsageError
from harness.infra import process
from harness.infra.resources import PROBES_DIR

# The CPU build of torch 2.13.0 lies on this project's machines (pip's find-links); override to
# point elsewhere (e.g. "torch==2.13.0+cpu --extra-index-url ...") on other machines.
TORCH_SPEC = os.environ.get("HARNESS_TORCH_SPEC", "torch==2.13.0")
PIP_TIMEOUT_S = 1800

Log = Callable[[str], None]


def probe_script(name: str) -> Path:
    """A script under the repository's ``probes/`` folder (they run inside engine envs)."""
    path = PROBES_DIR / name
    if not path.is_file():
        raise HarnessError(f"probe script {path} is missing")
    return path


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
