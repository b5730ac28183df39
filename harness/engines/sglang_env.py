"""What every sglang runtime's environment shares beyond ``harness/envs/`` (which makes the venv,
installs and describes it): the torch they pin, the interpreter they are made from, installing
with a failure that reads as an engine build's (pip's "no matching distribution" is the user's
input: one line, exit 2), and running a ``probes/`` script inside an environment. No runtime is
named here.

Engines install with pip (``envs.installer.PIP``), never uv: their recipes rest on pip's
configuration (the CPU torch found through pip's ``find-links``, its constraints and extra
indexes), which uv does not read.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness.envs import installer, venv
from harness.envs.step import EnvError, Log
from harness.errors import HarnessError, UsageError
from harness.infra import process
from harness.infra.resources import PROBES_DIR

# The CPU build of torch 2.13.0 lies on this project's machines (pip's find-links); override to
# point elsewhere (e.g. "torch==2.13.0+cpu --extra-index-url ...") on other machines.
TORCH_SPEC = os.environ.get("HARNESS_TORCH_SPEC", "torch==2.13.0")
PIP_TIMEOUT_S = 1800

_NO_SUCH_VERSION = re.compile(r"No matching distribution found for (\S+)")


def probe_script(name: str) -> Path:
    """A script under the repository's ``probes/`` folder (they run inside engine envs)."""
    path = PROBES_DIR / name
    if not path.is_file():
        raise HarnessError(f"probe script {path} is missing")
    return path


def env_python() -> str:
    """Interpreter the environments are created from (sglang ships wheels per CPython)."""
    return os.environ.get("HARNESS_ENGINE_PYTHON") or sys.executable


@contextmanager
def _engine_step() -> Iterator[None]:
    """A failed build step as the engines say it: the index lacking a release is the user's input
    (one line, not pip's version list); anything else shows the step and its output's tail."""
    try:
        yield
    except EnvError as exc:
        missing = _NO_SUCH_VERSION.search(exc.output)
        if missing:
            raise UsageError(f"{missing.group(1)}: no such release in the package index") from None
        if exc.returncode is None:  # it did not start, or ran past its time
            raise HarnessError(f"build step failed: {' '.join(exc.argv)}: {exc}") from None
        raise HarnessError(
            f"build step failed ({exc.returncode}): {' '.join(exc.argv)}\n{exc.tail()}"
        ) from None


def create_venv(path: Path, log: Log) -> Path:
    """An empty venv (no pip: the harness's pip installs into it) made from ``env_python()``."""
    with _engine_step():
        return venv.create(path, env_python(), using=installer.PIP, log=log, timeout=PIP_TIMEOUT_S)


def pip_install(python: Path, args: list[str], log: Log) -> None:
    """``args`` (pip's install arguments) into the environment of ``python``."""
    with _engine_step():
        installer.install(python, args, using=installer.PIP, log=log, timeout=PIP_TIMEOUT_S)


def pip_install_offline(python: Path, wheels: Path, requirements: list[str], log: Log) -> None:
    """``requirements`` from the wheels in ``wheels`` alone (a bundle): no index, no resolving."""
    with _engine_step():
        installer.install_offline(
            python, wheels, requirements, using=installer.PIP, log=log, timeout=PIP_TIMEOUT_S
        )


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
