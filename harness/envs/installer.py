"""How distributions get into an environment: uv, or pip where uv is absent.

``choose()`` is the one choice: uv on the PATH or beside this interpreter (installed into the
harness's own venv), unless ``HARNESS_ENV_INSTALLER=pip``; else pip. pip is the harness's own,
pointed at the environment (``pip --python``, pip >= 22.3): an environment needs no pip of its own.
``install`` takes pip's arguments (both installers read the same ones); ``install_offline``
installs a list of requirements from a folder of wheels only, resolving nothing (``--no-index
--find-links DIR --no-deps``).
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.envs.step import Log, run_step
from harness.infra import process

INSTALLER_ENV = "HARNESS_ENV_INSTALLER"
INSTALL_TIMEOUT_S = 900


@dataclass(frozen=True)
class Installer:
    """``name``: "uv" or "pip"; ``uv``: the uv program (uv only)."""

    name: str
    uv: str = ""

    def venv_argv(self, base_python: str, dest: Path, *, with_pip: bool = False) -> list[str]:
        """The command that makes a venv at ``dest`` from ``base_python`` (uv's never holds pip)."""
        if self.name == "uv":
            return [self.uv, "venv", "-q", "--python", base_python, str(dest)]
        # -I: the working folder (the repository under review) off the path of any interpreter
        flags = ["-I", "-m", "venv", *([] if with_pip else ["--without-pip"])]
        return [base_python, *flags, str(dest)]

    def install_argv(self, python: Path | str, args: Sequence[str]) -> list[str]:
        """The command that installs ``args`` (pip's install arguments) into ``python``'s env."""
        if self.name == "uv":
            return [self.uv, "pip", "install", "-q", "--python", str(python), *args]
        return process.own_module(
            "pip", "--python", str(python), "install", "--disable-pip-version-check", "-q", *args
        )


PIP = Installer("pip")


def find_uv() -> str | None:
    """uv on the PATH, or beside this interpreter; None under ``HARNESS_ENV_INSTALLER=pip``."""
    if os.environ.get(INSTALLER_ENV) == "pip":
        return None
    beside = Path(sys.executable).parent / "uv"
    return shutil.which("uv") or (str(beside) if beside.is_file() else None)


def choose() -> Installer:
    """uv where there is one (and ``HARNESS_ENV_INSTALLER`` is not ``pip``), else pip."""
    uv = find_uv()
    return Installer("uv", uv) if uv else PIP


def install(
    python: Path | str,
    args: Sequence[str],
    *,
    using: Installer,
    log: Log | None = None,
    timeout: float = INSTALL_TIMEOUT_S,
) -> None:
    """Install ``args`` into the environment of ``python``; ``EnvError`` when it fails."""
    what = "uv pip install" if using.name == "uv" else "pip install"
    run_step(using.install_argv(python, args), what, timeout=timeout, log=log)


def as_of_args(using: Installer, as_of: str) -> list[str] | None:
    """The install arguments that leave out what was uploaded after ``as_of`` (uv's
    ``--exclude-newer``, pip's ``--uploaded-prior-to``); None where this pip has no such option."""
    if using.name == "uv":
        return ["--exclude-newer", as_of]
    return ["--uploaded-prior-to", as_of] if _pip_limits_dates() else None


@functools.cache
def _pip_limits_dates() -> bool:
    """Whether the harness's pip takes ``--uploaded-prior-to`` (a recent pip's option)."""
    try:
        proc = process.run(
            process.own_module("pip", "install", "--help"),
            stdout=process.PIPE,
            stderr=process.DEVNULL,
            stdin=process.DEVNULL,
            timeout=60,
        )
    except (OSError, process.TimeoutExpired):
        return False
    return b"--uploaded-prior-to" in (proc.stdout or b"")


def install_offline(
    python: Path | str,
    wheels: Path,
    requirements: Sequence[str],
    *,
    using: Installer,
    log: Log | None = None,
    timeout: float = INSTALL_TIMEOUT_S,
) -> None:
    """Install ``requirements`` from the wheels in ``wheels`` alone: no index, nothing resolved."""
    install(
        python,
        ["--no-index", "--find-links", str(wheels), "--no-deps", *requirements],
        using=using,
        log=log,
        timeout=timeout,
    )
