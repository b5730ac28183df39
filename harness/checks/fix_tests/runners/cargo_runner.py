"""``cargo test`` as a runner of the tests section: a crate's integration tests (``tests/*.rs``
beside a ``Cargo.toml``), node ids ``<crate>/tests/<file>.rs::<test path>``, outcomes read from
libtest's own lines (``test NAME ... ok | FAILED | ignored``). Runs offline (``--offline``): a
crate whose dependencies are not vendored or cached fails to build, an env-error, never a pass."""

from __future__ import annotations

import posixpath
import re
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

from harness.checks.fix_tests.runners._native import (
    root_of,
    roots_in,
    roots_with,
    run_tool,
    spans_by,
)
from harness.checks.fix_tests.runners.base import Cell, Reader, RunContext
from harness.checks.fix_tests.runners.scrub import reason_text

NAME = "cargo"
USES_PYTHON = False
_TEST_FN = re.compile(rb"^\s*(?:pub\s+)?(?:async\s+)?fn\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_RUNNING = re.compile(r"^\s*Running (?:unittests )?(\S+)")
# "test it::hi ... ok", "test lo - should panic ... ok", "test hi ... ignored, reason"
_RESULT = re.compile(r"^test (\S+)(?: - should panic)? \.\.\. (ok|FAILED|ignored)\b(?:, (.+))?")
_ERROR = re.compile(r"^error(?:\[E\d+\])?: (.+)$")
_STATUS = {"ok": "passed", "FAILED": "failed", "ignored": "skipped"}


def configure(read: Reader, listing: Sequence[str]) -> list[str]:
    """The crate folders (those with a Cargo.toml)."""
    return roots_with(listing, "Cargo.toml")


def is_test_file(path: str, config: list[str]) -> bool:
    if not path.endswith(".rs"):
        return False
    crate = root_of(path, config)
    if crate is None:
        return False
    rel = path[len(crate) + 1 :] if crate else path
    parts = rel.split("/")
    return parts[0] == "tests" and (len(parts) == 2 or (len(parts) == 3 and parts[2] == "main.rs"))


def is_support_file(path: str) -> bool:
    return False


def test_spans(path: str, data: bytes) -> dict[str, tuple[int, int]]:
    return spans_by(_TEST_FN, data)


def _target(path: str, crate: str) -> str:
    rel = path[len(crate) + 1 :] if crate else path
    parts = rel.split("/")
    return parts[1] if len(parts) == 3 else posixpath.splitext(parts[1])[0]


def run(tree: Path, files: Sequence[str], nodeids: Sequence[str] | None, ctx: RunContext) -> Cell:
    cell = Cell()
    if shutil.which("cargo") is None:
        cell.problem = "cargo is not on the PATH"
        return cell
    start = time.monotonic()
    crates = roots_in(tree, "Cargo.toml")
    by_crate: dict[str, list[str]] = {}
    for f in files:
        by_crate.setdefault(root_of(f, crates) or "", []).append(f)
    for crate, mine in sorted(by_crate.items()):
        for f in mine:  # one target a run: libtest's lines name no file, the run does
            problem = _run_target(tree, crate, f, nodeids, ctx, cell)
            if problem:
                cell.problem = problem
                break
    cell.seconds = time.monotonic() - start
    return cell


def _run_target(
    tree: Path,
    crate: str,
    path: str,
    nodeids: Sequence[str] | None,
    ctx: RunContext,
    cell: Cell,
) -> str:
    """``cargo test --test TARGET`` for one file; its outcomes (or its build error) go to ``cell``;
    returns what stopped the run (a timeout), else ""."""
    names = [n.split("::", 1)[1] for n in nodeids or () if n.split("::", 1)[0] == path]
    argv = [
        "cargo",
        "test",
        "--offline",
        "--no-fail-fast",
        "--manifest-path",
        str(tree / crate / "Cargo.toml"),
        "--test",
        _target(path, crate),
        "--",
        "--test-threads=1",
        *(["--exact", *names] if names else []),
    ]
    env = {"CARGO_TARGET_DIR": str(ctx.home / "target"), "CARGO_TERM_COLOR": "never"}
    code, said = run_tool(argv, tree / crate, ctx, env)
    if code is None:
        return said
    before = len(cell.outcomes)
    for line in said.splitlines():
        r = _RESULT.match(line)
        if r:
            cell.outcomes[f"{path}::{r.group(1)}"] = _STATUS[r.group(2)]
            if r.group(2) == "ignored":
                cell.skips[f"{path}::{r.group(1)}"] = reason_text(r.group(3) or "ignored", ())
    if code != 0 and len(cell.outcomes) == before:  # it did not build (or run)
        first = next((m.group(1) for ln in said.splitlines() if (m := _ERROR.match(ln))), "")
        cell.errors[path] = (first or "cargo test failed before running tests")[:300]
    return ""
