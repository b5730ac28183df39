"""Build (or reuse) the virtual environment of an ``EnvSpec`` under ``<cache>/envs/<key>``.

With ``uv`` on the PATH it builds with uv, else with the standard library's ``venv`` and pip. An
environment is used only once its marker (written last) says what it holds; a half-built one (a
killed build) is removed and built again. Concurrent runs wait on one lock per key. A build that
fails raises ``EnvError`` with the installer's last line: the tests section turns it into
``env-error`` cells, never a pass.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from harness.envs.spec import EnvSpec
from harness.infra import process, workarea

BUILD_TIMEOUT_S = 900
MARKER = "harness-env.json"


class EnvError(Exception):
    """The environment could not be built; the message is the installer's last line."""


@dataclass(frozen=True)
class Env:
    """A ready environment: its interpreter, key, and how it was obtained."""

    python: str
    key: str
    how: str  # "built" | "reused" | "given" (--python)
    installer: str = ""


def envs_root() -> Path:
    """``<cache>/envs`` (the cache checked private first)."""
    from harness.infra.cache import cache_dir

    root = cache_dir() / "envs"
    root.mkdir(mode=0o700, exist_ok=True)
    return root


def interpreter_version(python: str) -> str:
    """``X.Y.Z`` of ``python`` (asked of the interpreter itself unless it is this one)."""
    if os.path.realpath(python) == os.path.realpath(sys.executable):
        return ".".join(map(str, sys.version_info[:3]))
    proc = process.run(
        [python, "-c", "import sys; print('.'.join(map(str, sys.version_info[:3])))"],
        capture_output=True,
        timeout=60,
        env=process.child_env(),
    )
    return proc.stdout.decode().strip() or "unknown"


def ensure_env(spec: EnvSpec, base_python: str = sys.executable) -> Env:
    """The environment of ``spec`` made from ``base_python``, built on first use."""
    key = spec.key(interpreter_version(base_python))
    root = envs_root()
    target = root / key
    with open(root / f"{key}.lock", "a+") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        python = target / "bin" / "python"
        if _ready(target, spec):
            os.utime(target / MARKER)  # recently used: gc keeps it
            return Env(str(python), key, "reused", _installer_of(target))
        shutil.rmtree(target, ignore_errors=True)  # half-built by a killed run, or stale
        installer = _build(spec, base_python, target)
        return Env(str(python), key, "built", installer)


def _ready(target: Path, spec: EnvSpec) -> bool:
    try:
        meta = json.loads((target / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return meta.get("requirements") == spec.requirements and (target / "bin" / "python").exists()


def _installer_of(target: Path) -> str:
    try:
        return str(json.loads((target / MARKER).read_text(encoding="utf-8")).get("installer", ""))
    except (OSError, ValueError):
        return ""


def _run(argv: list[str], what: str) -> None:
    try:
        proc = process.run(
            argv,
            capture_output=True,
            timeout=BUILD_TIMEOUT_S,
            env=process.child_env(drop=("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")),
            stdin=process.DEVNULL,
        )
    except process.TimeoutExpired:
        raise EnvError(f"{what}: ran past {BUILD_TIMEOUT_S}s") from None
    except OSError as exc:
        raise EnvError(f"{what}: {exc.strerror or exc}") from None
    if proc.returncode != 0:
        said = (proc.stdout + proc.stderr).decode("utf-8", "replace")
        lines = [ln.strip() for ln in said.splitlines() if ln.strip()]
        raise EnvError(f"{what} exited {proc.returncode}: " + (lines[-1][:300] if lines else ""))


def _uv() -> str | None:
    """uv on the PATH, or beside this interpreter (installed into the harness's own venv);
    ``HARNESS_ENV_INSTALLER=pip`` makes pip build even where uv is."""
    if os.environ.get("HARNESS_ENV_INSTALLER") == "pip":
        return None
    beside = Path(sys.executable).parent / "uv"
    return shutil.which("uv") or (str(beside) if beside.is_file() else None)


def _build(spec: EnvSpec, base_python: str, dest: Path) -> str:
    """Create the venv at ``dest`` (a venv's scripts name their own folder, so it is built where it
    will live; the marker, written last, makes it usable) and install the spec."""
    uv = _uv()
    tmp = workarea.mkdtemp("harness-env-")
    reqs = tmp / "requirements.txt"
    reqs.write_text("\n".join(spec.requirements) + "\n", encoding="utf-8")
    py = str(dest / "bin" / "python")
    try:
        if uv:
            _run([uv, "venv", "-q", "--python", base_python, str(dest)], "uv venv")
            _run([uv, "pip", "install", "-q", "--python", py, "-r", str(reqs)], "uv pip install")
            installer = "uv"
        else:
            _run([base_python, "-m", "venv", str(dest)], "python -m venv")
            _run(
                [py, "-m", "pip", "install", "-q", "--disable-pip-version-check", "-r", str(reqs)],
                "pip install",
            )
            installer = "pip"
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    (dest / MARKER).write_text(
        json.dumps(
            {"requirements": spec.requirements, "sources": spec.sources, "installer": installer},
            sort_keys=True,
        ),
        encoding="utf-8",
    )
    return installer
