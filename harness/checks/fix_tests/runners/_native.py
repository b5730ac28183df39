"""What the native runners (cargo test, go test) share: a crate's or module's root for a file, test
functions found by a pattern with their lines, and a run of one program in a tree with the cell's
own HOME, TMPDIR and caches."""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Sequence
from pathlib import Path

from harness.checks.fix_tests.runners.base import RunContext
from harness.checks.tests_as_evidence.pytest_run import output_text, run_in_tree
from harness.infra import process

MAX_SOURCE = 1 << 20


def root_of(path: str, roots: Sequence[str]) -> str | None:
    """The deepest root folder (``""`` for the tree's top) that holds ``path``."""
    best: str | None = None
    for root in roots:
        if root == "" or path.startswith(root + "/"):
            if best is None or len(root) > len(best):
                best = root
    return best


def roots_with(listing: Sequence[str], manifest: str) -> list[str]:
    """Folders that hold ``manifest`` (Cargo.toml, go.mod)."""
    return sorted(posixpath.dirname(p) for p in listing if posixpath.basename(p) == manifest)


def roots_in(tree: Path, manifest: str) -> list[str]:
    """Folders of an exported tree that hold ``manifest``, found without following a link (the
    reviewed tree may link out of itself, or to itself)."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(tree):  # followlinks=False
        dirnames[:] = [d for d in dirnames if d not in (".git", "target", "node_modules")]
        if manifest in filenames:
            found.append(os.path.relpath(os.path.join(dirpath, manifest), tree))
    return roots_with(found, manifest)


def spans_by(pattern: re.Pattern[bytes], data: bytes) -> dict[str, tuple[int, int]]:
    """Each match's name (group 1) → from its line to the line before the next match."""
    if len(data) > MAX_SOURCE:
        return {}
    lines = data.split(b"\n")
    starts = [
        (i + 1, m.group(1).decode("utf-8", "replace"))
        for i, ln in enumerate(lines)
        if (m := pattern.search(ln))
    ]
    out: dict[str, tuple[int, int]] = {}
    for j, (line, name) in enumerate(starts):
        end = starts[j + 1][0] - 1 if j + 1 < len(starts) else len(lines)
        # the next test's attributes, comments and the blank lines between are not this one's
        while end > line and _between(lines[end - 1]):
            end -= 1
        out[name] = (line, end)
    return out


def _between(line: bytes) -> bool:
    text = line.strip()
    return not text or text.startswith((b"#[", b"//"))


def run_tool(
    argv: list[str], cwd: Path, ctx: RunContext, env: dict[str, str]
) -> tuple[int | None, str]:
    """Run a native test program; (exit code, output) or (None, why) on a timeout or no program."""
    home = ctx.home
    (home / "home").mkdir(parents=True, exist_ok=True)
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    toolchains = {  # rustup and go find their toolchains under the user's home: named, not moved
        k: v
        for k, v in (
            ("RUSTUP_HOME", os.environ.get("RUSTUP_HOME") or str(Path.home() / ".rustup")),
            ("RUSTUP_TOOLCHAIN", os.environ.get("RUSTUP_TOOLCHAIN", "")),
        )
        if v and (k != "RUSTUP_HOME" or Path(v).is_dir())
    }
    full = process.child_env(
        {"HOME": str(home / "home"), "TMPDIR": str(home / "tmp"), **toolchains, **env, **ctx.env}
    )
    try:
        proc = run_in_tree(argv, cwd, full, ctx.timeout)
    except process.TimeoutExpired:
        return None, f"timeout after {ctx.timeout:.0f}s (process tree killed)"
    except OSError as exc:
        return None, f"{argv[0]}: {exc.strerror or exc}"
    return proc.returncode, output_text(proc)
