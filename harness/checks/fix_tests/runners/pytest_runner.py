"""pytest as a runner of the tests section: discovery by the project's own configuration
(``testpaths``, ``python_files``, from pytest.ini, pyproject.toml, tox.ini or setup.cfg, in pytest's
order), node ids from pytest itself (``probes/pytest_outcomes_plugin.py``), the project's
``addopts`` kept as a plain ``pytest`` run keeps them (dropped, with a note, only when pytest
refuses them: a plugin they name is not installed)."""

from __future__ import annotations

import ast
import configparser
import fnmatch
import json
import posixpath
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.checks.fix_tests.runners.base import Cell, Reader, RunContext
from harness.checks.fix_tests.runners.scrub import reason_text, run_places, scrub
from harness.checks.tests_as_evidence.pytest_run import (
    last_line,
    output_text,
    pytest_env,
    run_in_tree,
    run_setup,
    tree_paths,
)
from harness.envs.spec import MAX_FILE, _load_toml
from harness.infra import process

NAME = "pytest"
USES_PYTHON = True
DEFAULT_FILES = ("test_*.py", "*_test.py")


@dataclass(frozen=True)
class Config:
    python_files: tuple[str, ...] = DEFAULT_FILES
    testpaths: tuple[str, ...] = ()
    inifile: str = ""  # where they were read ("" : pytest's defaults)


def _split(value: Any) -> tuple[str, ...]:
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, str) and v)
    if isinstance(value, str):
        return tuple(value.split())
    return ()


def _ini(data: bytes, section: str) -> dict[str, str] | None:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(data.decode("utf-8", "replace"))
    except configparser.Error:
        return None
    return dict(parser[section]) if parser.has_section(section) else None


def configure(read: Reader, listing: Sequence[str]) -> Config:
    """The first configuration file pytest would take at the tree's root."""
    for name, section in (
        ("pytest.ini", "pytest"),
        (".pytest.ini", "pytest"),
        ("pyproject.toml", None),
        ("tox.ini", "pytest"),
        ("setup.cfg", "tool:pytest"),
    ):
        data = read(name) if name in listing else None
        if data is None or len(data) > MAX_FILE:
            continue
        if section is None:
            tool = (_load_toml(data) or {}).get("tool")
            table = tool.get("pytest") if isinstance(tool, dict) else None
            if not isinstance(table, dict):
                continue
            opts = table.get("ini_options", table)
            if not isinstance(opts, dict):
                continue
        else:
            found = _ini(data, section)
            if found is None and name not in ("pytest.ini", ".pytest.ini"):
                continue
            opts = found or {}
        return Config(
            _split(opts.get("python_files")) or DEFAULT_FILES, _split(opts.get("testpaths")), name
        )
    return Config()


def is_test_file(path: str, config: Config) -> bool:
    """Whether pytest would collect ``path`` in a plain run at the root."""
    base = posixpath.basename(path)
    if not path.endswith(".py") or base == "conftest.py":
        return False
    if not any(fnmatch.fnmatch(path if "/" in pat else base, pat) for pat in config.python_files):
        return False
    if not config.testpaths:
        return True
    return any(
        path == tp.rstrip("/") or path.startswith(tp.rstrip("/") + "/") or fnmatch.fnmatch(path, tp)
        for tp in config.testpaths
    )


def is_support_file(path: str) -> bool:
    return posixpath.basename(path) == "conftest.py"


def test_spans(path: str, data: bytes) -> dict[str, tuple[int, int]]:
    """``test_x`` and ``TestC::test_y`` → their lines (decorators included), from the file's AST."""
    if len(data) > MAX_FILE:
        return {}
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return {}
    spans: dict[str, tuple[int, int]] = {}

    def walk(body: list[ast.stmt], prefix: str, depth: int) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                spans[prefix + node.name] = (first, node.end_lineno or node.lineno)
            elif isinstance(node, ast.ClassDef) and depth < 4:
                walk(node.body, f"{prefix}{node.name}::", depth + 1)

    walk(tree.body, "", 0)
    return spans


def _argv(ctx: RunContext, tree: Path, args: Sequence[str], addopts: bool) -> list[str]:
    return [
        ctx.python,
        "-m",
        "pytest",
        "-q",
        "-p",
        "pytest_outcomes_plugin",
        "-p",
        "no:cacheprovider",
        *([] if addopts else ["-o", "addopts="]),
        "-o",
        "console_output_style=classic",
        # a file that fails to collect is an outcome of its own, not the end of the run
        "--continue-on-collection-errors",
        "--rootdir",
        str(tree),
        "--",
        *args,
    ]


def start_env(extra: Mapping[str, str], paths: Sequence[Path] = ()) -> dict[str, str]:
    """What a run's environment holds that its interpreter reads at start-up (the zygote's
    eligibility compares these): ``_env`` without the run's own home and files."""
    return {**pytest_env(paths), "PYTHONDONTWRITEBYTECODE": "1", **extra}


def _env(tree: Path, ctx: RunContext, out: Path, proof_paths: Sequence[str]) -> dict[str, str]:
    env = start_env({}, tree_paths(tree))
    home, tmp = ctx.home / "home", ctx.home / "tmp"
    home.mkdir(parents=True, exist_ok=True)
    tmp.mkdir(parents=True, exist_ok=True)
    env.update(
        {
            "HOME": str(home),
            "TMPDIR": str(tmp),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "HARNESS_OUTCOMES_OUT": str(out),
            "HARNESS_PROOF_PATHS": json.dumps(list(proof_paths)),
            **ctx.env,
        }
    )
    return env


MAX_ALONE = 20  # files run one by one when the run of them all gave no report


def run(tree: Path, files: Sequence[str], nodeids: Sequence[str] | None, ctx: RunContext) -> Cell:
    """One pytest process over ``files`` (or ``nodeids``) with the outcomes plugin; when it gives
    no report (a test calls ``os._exit``, kills its parent, or hangs past the timeout), each file
    once more on its own, so one bad file costs only its own tests."""
    cell = _run_once(tree, files, nodeids, ctx)
    if not cell.problem or nodeids is not None or not 1 < len(files) <= MAX_ALONE:
        return cell
    whole = cell.problem
    merged = Cell(notes=[f"the run of all files gave no report ({whole}): each file ran alone"])
    for f in files:
        alone = _run_once(tree, [f], None, ctx)
        merged.outcomes.update(alone.outcomes)
        merged.errors.update(alone.errors)
        merged.skips.update(alone.skips)
        merged.lacks.update(alone.lacks)
        merged.proofs.update(alone.proofs)
        merged.notes += alone.notes
        merged.seconds += alone.seconds
        if alone.problem:
            merged.errors[f] = alone.problem
    return merged


def _run_once(
    tree: Path, files: Sequence[str], nodeids: Sequence[str] | None, ctx: RunContext
) -> Cell:
    cell = Cell()
    out = ctx.home / "outcomes.json"
    env = _env(tree, ctx, out, ctx.proof_paths)
    start = time.monotonic()
    cell.problem = run_setup(tree, ctx.setup, env, ctx.timeout)
    if cell.problem:
        return cell
    args = list(nodeids) if nodeids is not None else list(files)
    proc = None
    for addopts in (True, False):
        out.unlink(missing_ok=True)
        try:
            # (a setup command may have installed into the environment: pytest then starts fresh)
            argv = _argv(ctx, tree, args, addopts)
            proc = run_in_tree(argv, tree, env, ctx.timeout, fork=not ctx.setup)
        except process.TimeoutExpired:
            cell.problem = f"timeout after {ctx.timeout:.0f}s (process tree killed)"
            cell.seconds = time.monotonic() - start
            return cell
        said = output_text(proc)
        if proc.returncode == 4 and addopts and "unrecognized arguments" in said:
            cell.notes.append(
                "the project's addopts were refused (" + last_line(said)[:120] + "): run without"
            )
            continue
        break
    assert proc is not None
    cell.seconds = time.monotonic() - start
    if not out.is_file():
        cell.problem = f"pytest exited {proc.returncode} without a report: " + last_line(
            output_text(proc)
        )
        return cell
    try:
        data = json.loads(out.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        cell.problem = "pytest's report could not be read"
        return cell
    cell.outcomes = {str(k): str(v) for k, v in data.get("outcomes", {}).items()}
    places = run_places(tree, ctx.home)
    cell.skips = {str(k): reason_text(str(v), places) for k, v in data.get("skips", {}).items()}
    cell.lacks = {str(k): str(v)[:200] for k, v in data.get("lacks", {}).items()}
    for err in data.get("collection_errors", []):
        message = scrub(str(err.get("message", "")), places)
        cell.errors[str(err.get("nodeid", "."))] = message[:300]
    cell.proofs = data.get("module_proofs", {})
    if proc.returncode == 4:
        cell.problem = "pytest usage error (exit 4): " + last_line(output_text(proc))
    return cell
