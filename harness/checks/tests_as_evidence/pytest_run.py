"""The one way the tests-as-evidence checks run the project's tests in a tree the harness owns:
pytest (a collection pass, a selection run) or mutmut (which runs pytest itself).

The tree's own modules come first on the path, the harness's pytest plugins from ``probes/`` are
importable, the user's ``PYTEST_ADDOPTS`` never applies, and every child goes through
``harness.infra.process`` (its own process group, killed on a timeout or an interrupt).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path

from harness.infra import process, workarea, zygote
from harness.infra.cache import file_digest
from harness.infra.resources import PROBES_DIR


def code_digests(plugin: str, check_file: str) -> list[str]:
    """What enters a cached result's key as code: the harness's pytest ``plugin`` (a module under
    ``probes/``), the check module that reads its output, this runner, and the module that writes
    the trees it runs in (what a tree holds is the tree writer's too: ``export-ignore``)."""
    from harness.git import tree

    return [
        file_digest(PROBES_DIR / f"{plugin}.py"),
        file_digest(Path(check_file)),
        file_digest(Path(__file__)),
        file_digest(Path(tree.__file__)),
    ]


def tree_paths(tree_dir: Path) -> list[Path]:
    """The tree and its ``src/`` folder (when it has one): where the project's modules live."""
    return [tree_dir] + ([tree_dir / "src"] if (tree_dir / "src").is_dir() else [])


def pytest_env(extra_paths: Sequence[Path] = (), *, bytecode: bool = False) -> dict[str, str]:
    """Environment for a column's pytest: our probes importable, the user's addopts gone.

    ``bytecode``: let Python and pytest cache compiled modules in the tree (trees the harness
    owns and reuses, where the cache speeds up every later run).
    """
    env = process.child_env(drop=("PYTEST_ADDOPTS",))
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        # Compiled files (pytest's rewritten plugins too) go to a harness-owned folder, never
        # next to the sources of probes/ or of anything else on the path.
        env.setdefault("PYTHONPYCACHEPREFIX", str(workarea.work_area() / "pycache"))
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        # A cache prefix of the caller's would hide the compiled files installed beside the
        # environment's packages: with writing off, pytest and everything it imports would be
        # compiled again in every run (~0.3 CPU-s each). Nothing is written: those files are read.
        env.pop("PYTHONPYCACHEPREFIX", None)
    paths = [str(PROBES_DIR), *map(str, extra_paths)]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def mutmut_env(tree_dir: Path, *, drop_addopts: bool) -> dict[str, str]:
    """Environment for mutmut in an exported tree: git discovery fenced off above the tree (mutmut
    asks git about "its" repository: there is none here)."""
    env = process.child_env(drop=("PYTEST_ADDOPTS",) if drop_addopts else ())
    env["GIT_CEILING_DIRECTORIES"] = str(tree_dir.parent)
    return env


def pytest_argv(
    python: str,
    tree_dir: Path,
    plugin: str,
    *,
    collect_only: bool = False,
    args: Sequence[str] = (),
) -> list[str]:
    """``python -m pytest`` with the harness's ``plugin``, no cache provider, no ini ``addopts``,
    rooted at ``tree_dir``; ``args`` follow."""
    return [
        python,
        "-m",
        "pytest",
        # a collection prints one line per file, not per test (the plugin writes what is read)
        *(["--collect-only", "-qq"] if collect_only else ["-q"]),
        "-p",
        plugin,
        "-p",
        "no:cacheprovider",
        "-o",
        "addopts=",
        *(["--continue-on-collection-errors"] if collect_only else []),
        "--rootdir",
        str(tree_dir),
        *args,
    ]


def run_in_tree(
    argv: Sequence[str] | str,
    tree_dir: Path,
    env: dict[str, str],
    timeout: float,
    *,
    shell: bool = False,
    fork: bool = True,
    stop: threading.Event | None = None,
) -> process.CompletedProcess[bytes]:
    """Run ``argv`` in ``tree_dir`` with no stdin, output captured as bytes; a timeout raises
    ``process.TimeoutExpired`` once the child's group is dead. A ``python -m pytest`` run inside
    ``zygote.forking()`` is forked from a zygote where it would start the same (``fork``: the
    caller allows it: no setup command has changed the environment since the zygote started).
    ``stop``: a run that may be given up (``process.Stopped`` once set; always a fresh process)."""
    if fork and stop is None and not shell and not isinstance(argv, str):
        forked = zygote.run(argv, str(tree_dir), env, timeout)
        if forked is not None:
            return forked
    return process.run(
        argv,
        reap_tree=True,  # what the repository's tests start (a server, setsid) ends with them
        shell=shell,
        cwd=str(tree_dir),
        env=env,
        capture_output=True,
        timeout=timeout,
        stdin=process.DEVNULL,
        stop=stop,
    )


def output_text(proc: process.CompletedProcess[bytes]) -> str:
    """A finished child's stdout then stderr, decoded."""
    return (proc.stdout + proc.stderr).decode("utf-8", "replace")


def last_line(text: str) -> str:
    """The last non-blank line of pytest's output (300 characters at most)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return (lines[-1] if lines else "pytest produced no output")[:300]


def run_setup(
    tree_dir: Path, setup: Sequence[str], env: dict[str, str], timeout: float = 600
) -> str:
    """Run the project's own setup commands in a harness-owned tree (e.g. write the version file a
    build step would generate); returns "" or the first failure, in one line."""
    for cmd in setup:
        try:
            proc = run_in_tree(cmd, tree_dir, env, timeout, shell=True)
        except process.TimeoutExpired:
            return f"setup {cmd!r} ran past {timeout:.0f}s"
        if proc.returncode != 0:
            said = output_text(proc)
            return f"setup {cmd!r} exited {proc.returncode}: " + (
                last_line(said) if said.strip() else "no output"
            )
    return ""
