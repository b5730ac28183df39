"""``go test -json`` as a runner of the tests section: ``*_test.go`` files inside a module (a
folder with ``go.mod``), node ids ``<file>::<TestName>`` (a test's file found from its ``func``
line in the package's test files), outcomes read from go's own JSON events. Runs with
``GOPROXY=off`` and ``GOFLAGS=-mod=mod``: a module whose dependencies are not in the cell's module
cache fails to build, an env-error, never a pass."""

from __future__ import annotations

import json
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
from harness.checks.fix_tests.runners.scrub import reason_text, run_places

NAME = "go"
USES_PYTHON = False
_TEST_FN = re.compile(rb"^func\s+(Test[A-Za-z0-9_]*)\s*\(")
_STATUS = {"pass": "passed", "fail": "failed", "skip": "skipped"}
# t.Log/t.Skip's output: "    clamp_test.go:12: words", its further lines indented deeper
_LOCATION = re.compile(r"^ {4}[\w.-]+\.go:\d+:[ ]?")


def configure(read: Reader, listing: Sequence[str]) -> list[str]:
    """The module folders (those with a go.mod)."""
    return roots_with(listing, "go.mod")


def is_test_file(path: str, config: list[str]) -> bool:
    return path.endswith("_test.go") and root_of(path, config) is not None


def is_support_file(path: str) -> bool:
    return False


def test_spans(path: str, data: bytes) -> dict[str, tuple[int, int]]:
    return spans_by(_TEST_FN, data)


def run(tree: Path, files: Sequence[str], nodeids: Sequence[str] | None, ctx: RunContext) -> Cell:
    cell = Cell()
    if shutil.which("go") is None:
        cell.problem = "go is not on the PATH"
        return cell
    start = time.monotonic()
    modules = roots_in(tree, "go.mod")
    by_pkg: dict[str, list[str]] = {}
    for f in files:
        by_pkg.setdefault(posixpath.dirname(f), []).append(f)
    env = {
        "GOPROXY": "off",
        "GOFLAGS": "-mod=mod",
        "GOCACHE": str(ctx.home / "gocache"),
        "GOPATH": str(ctx.home / "gopath"),
        "GOTOOLCHAIN": "local",
    }
    for pkg, mine in sorted(by_pkg.items()):
        module = root_of(mine[0], modules) or ""
        owner = _owners(tree, mine)
        wanted = [n.split("::", 1)[1] for n in nodeids or () if n.split("::", 1)[0] in mine]
        rel = "./" + (pkg[len(module) + 1 :] if module else pkg) if pkg != module else "."
        argv = ["go", "test", "-json", "-count=1"]
        if wanted:
            argv += ["-run", "^(" + "|".join(map(re.escape, wanted)) + ")$"]
        code, said = run_tool([*argv, rel], tree / module, ctx, env)
        if code is None:
            cell.problem = said
            break
        failed_build = _read(said, owner, cell, run_places(tree, ctx.home))
        if failed_build or (code != 0 and not any(n.split("::")[0] in mine for n in cell.outcomes)):
            for f in mine:
                cell.errors[f] = failed_build or "go test failed before running tests"
    cell.seconds = time.monotonic() - start
    return cell


def _owners(tree: Path, files: Sequence[str]) -> dict[str, str]:
    """Test name → the selected file that defines it."""
    out: dict[str, str] = {}
    for f in files:
        try:
            data = (tree / f).read_bytes()
        except OSError:
            continue
        for name in test_spans(f, data):
            out.setdefault(name, f)
    return out


def _read(
    said: str, owner: dict[str, str], cell: Cell, places: Sequence[tuple[str, str]] = ()
) -> str:
    """Outcomes from the JSON events; returns the first build error line, if the build failed."""
    build = ""
    # a test's last block of logged words: t.Skip("why") logs "why" then stops (t.SkipNow after
    # a t.Log reads as that log: go's output does not tell them apart)
    said_last: dict[str, list[str]] = {}
    for line in said.splitlines():
        if not line.startswith("{"):
            if not build and (": " in line and ".go:" in line):
                build = line.strip()[:300]
            continue
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if not isinstance(ev, dict):  # a line of the test's own that looks like JSON
            continue
        test = ev.get("Test")
        action = ev.get("Action")
        if test and action == "output":
            text = str(ev.get("Output", "")).rstrip("\n")
            at = _LOCATION.match(text)
            if at:
                said_last[test] = [text[at.end() :]]
            elif text.startswith("        ") and test in said_last:  # a logged text's next line
                said_last[test].append(text)
        if test and action in _STATUS and "/" not in test and test in owner:
            cell.outcomes[f"{owner[test]}::{test}"] = _STATUS[action]
            if action == "skip":
                words = " ".join(said_last.get(test, []))
                cell.skips[f"{owner[test]}::{test}"] = reason_text(words, places)
        elif not test and action == "output" and "[build failed]" in str(ev.get("Output", "")):
            build = build or "build failed"
    return build
