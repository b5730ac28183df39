"""The truth the tests section is held to: a plain ``pytest`` run made by hand in a tree (``git
archive`` of a commit, test files overlaid from other commits), outcomes read from pytest's own
``-rA`` summary lines — no harness code on the way. Used by the tests and by ``bench/``."""

from __future__ import annotations

import io
import re
import subprocess
import tarfile
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
        tree.mkdir()
        with tarfile.open(fileobj=io.BytesIO(_git(repo, "archive", commit))) as tar:
            tar.extractall(tree, filter="data")
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
