"""A virtual environment's folder: making one, its interpreter, its site-packages, and site
folders of another interpreter layered under it.

A venv's scripts name their own folder, so it is made where it will live (or in a sibling renamed
into place whole, as the engine store does).
"""

from __future__ import annotations

import json
from pathlib import Path

from harness.envs.installer import INSTALL_TIMEOUT_S, Installer
from harness.envs.step import Log, run_step
from harness.infra import process

SITE_PTH = "_harness_base_site.pth"


def python_in(root: Path) -> Path:
    """The interpreter of the environment at ``root``."""
    return root / "bin" / "python"


def create(
    dest: Path,
    base_python: str,
    *,
    using: Installer,
    with_pip: bool = False,
    log: Log | None = None,
    timeout: float = INSTALL_TIMEOUT_S,
) -> Path:
    """Make a venv at ``dest`` from ``base_python`` with ``using``'s tool; return its interpreter.
    ``with_pip``: the standard library's venv puts pip (and what ensurepip brings) in it."""
    what = "uv venv" if using.name == "uv" else "python -m venv"
    run_step(using.venv_argv(base_python, dest, with_pip=with_pip), what, timeout=timeout, log=log)
    return python_in(dest)


def site_packages(python: Path) -> Path:
    """The environment's own site-packages (``purelib``), as its interpreter names it."""
    out = process.run(
        [str(python), "-I", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return Path(out.stdout.strip())


def site_dirs(python: str) -> list[str]:
    """The site folders ``python`` itself imports from, in its order. When ``python`` is itself a
    venv, a venv made from it with ``--system-site-packages`` would see the base interpreter's
    folders, not these."""
    code = (
        "import json, sys; print(json.dumps([p for p in sys.path "
        "if p.rstrip('/').endswith(('site-packages', 'dist-packages'))]))"
    )
    out = process.run(
        [python, "-I", "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return list(json.loads(out.stdout))


def add_site_dirs(python: Path, dirs: list[str]) -> None:
    """Put ``dirs`` under the environment as site folders, after its own (their ``.pth`` files
    processed too): ``--system-site-packages`` over any folders, through one ``.pth`` of
    ``site.addsitedir`` lines."""
    if dirs:
        (site_packages(python) / SITE_PTH).write_text(
            "".join(f"import site; site.addsitedir({str(Path(d).resolve())!r})\n" for d in dirs)
        )
