"""The truth the tests section is held to: a plain ``pytest`` run made by hand in a tree (a plain
checkout of a commit, test files overlaid from other commits), outcomes read from pytest's own
``-rA`` summary lines — no harness code on the way. Used by the tests and by ``bench/``."""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

# ``-v`` prints "NODEID STATUS [ 50%]" per test (node ids may hold spaces); a file that fails to
# collect is only in the ``-rA`` summary, "ERROR path - reason".
_LINE = re.compile(r"^(\S.*?) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)(?: \(.*\))?\s+\[\s*\d+%\]$")
_COLLECT = re.compile(r"^ERROR (\S+) - ")
_MAP = {
    "PASSED": "passed",
    "FAILED": "failed",
    "ERROR": "error",
    "SKIPPED": "skipped",
    "XFAIL": "skipped",
    "XPASS": "passed",
}


def _git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True).stdout


def plain_checkout(repo: Path | str, commit: str, dest: Path) -> None:
    """``commit``'s files written into ``dest`` the way a checkout writes them (a reviewer's tree):
    ``read-tree`` into an index of its own and ``checkout-index``; the repository's index, work
    tree and refs are not touched. Unlike ``git archive``, ``export-ignore`` leaves nothing out."""
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="truth-index-") as tmp:
        env = {**os.environ, "GIT_INDEX_FILE": str(Path(tmp) / "index")}
        for args in (
            ["read-tree", commit],
            ["--work-tree", str(dest), "checkout-index", "-a", "-f"],
        ):
            subprocess.run(
                ["git", "-C", str(repo), *args], check=True, capture_output=True, env=env
            )


def plain_pytest(
    repo: Path,
    commit: str,
    files: Sequence[str],
    overlay: Sequence[tuple[str, str]] = (),
    python: str = "python3",
) -> dict[str, str]:
    """Node id → outcome of ``python -m pytest -rA FILES`` in ``commit``'s tree with ``overlay``
    ((path, commit) pairs) written over it."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        plain_checkout(repo, commit, tree)
        for path, at in overlay:
            (tree / path).parent.mkdir(parents=True, exist_ok=True)
            (tree / path).write_bytes(_git(repo, "show", f"{at}:{path}"))
        paths = [str(tree / "src"), str(tree)] if (tree / "src").is_dir() else [str(tree)]
        proc = subprocess.run(
            [python, "-m", "pytest", "-rA", "-v", "-p", "no:cacheprovider", "--", *files],
            cwd=tree,
            capture_output=True,
            text=True,
            env={"PYTHONPATH": ":".join(paths), "PATH": "/usr/bin:/bin", "HOME": tmp},
            timeout=600,
        )
    out: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        m = _LINE.match(line)
        if m:
            out.setdefault(m.group(1), _MAP[m.group(2)])
        elif (c := _COLLECT.match(line)) and "::" not in c.group(1):
            out.setdefault(c.group(1), "error")
    return out
