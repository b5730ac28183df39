"""The standard streams as a shell may leave them: closed (``>&-``, ``2>&-``), a reader that left
(``| true``), an ASCII-only encoding; and a working folder that was removed. None of these is a
harness failure (exit 3) or a silent wrong exit code."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HARNESS = [sys.executable, "-m", "harness"]


def _shape(builder, extra_env: dict[str, str] | None = None, **kw):
    builder.commit("one", {"a.py": "x = 1\n"})
    builder.commit("two", {"a.py": "x = 2\n"})
    argv = [*HARNESS, "shape", "HEAD~1..HEAD", "--repo", str(builder.path), "--format", "md"]
    env = {**os.environ, **(extra_env or {})}
    return subprocess.run(argv, env=env, timeout=120, **kw)


def test_closed_stdout_and_closed_stderr(builder) -> None:
    """Before: ``>&-`` was an internal error, and ``2>&-`` made a run exit 1 with no message (a
    gate reads that as "blocked")."""
    builder.commit("one", {"a.py": "x = 1\n"})
    builder.commit("two", {"a.py": "x = 2\n"})
    cmd = " ".join(HARNESS) + f" shape HEAD~1..HEAD --repo {builder.path} --format md"
    for redirect in (">&-", "2>&-"):
        proc = subprocess.run(
            ["bash", "-c", f"{cmd} {redirect}"], capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, (redirect, proc.stderr)
        assert "internal error" not in proc.stderr


def test_a_reader_that_left_is_the_shell_s_141_not_a_harness_error(builder) -> None:
    builder.commit("one", {"a.py": "x = 1\n"})
    builder.commit("two", {"a.py": "x = 2\n"})
    cmd = " ".join(HARNESS) + f" shape HEAD~1..HEAD --repo {builder.path} --format md"
    proc = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {cmd} | true"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 141 and "internal error" not in proc.stderr, proc.stderr
    assert "Exception ignored" not in proc.stderr


def test_an_ascii_only_terminal_gets_escaped_text(builder) -> None:
    proc = _shape(builder, {"PYTHONIOENCODING": "ascii"}, capture_output=True)
    assert proc.returncode == 0, proc.stderr
    assert b"\\u2705" in proc.stdout  # the controls' check marks, escaped


def test_a_removed_working_folder_is_one_line_exit_2(builder, tmp_path: Path) -> None:
    builder.commit("one", {"a.py": "x = 1\n"})
    gone = tmp_path / "gone"
    gone.mkdir()
    cmd = f"cd {gone} && rmdir {gone} && " + " ".join(HARNESS) + " shape HEAD~1..HEAD"
    proc = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == "harness: the current folder no longer exists: run from one that does\n"


_ENDS = r"""
import atexit, sys, threading, time
from pathlib import Path

marks = Path(sys.argv[1])
atexit.register(lambda: (marks / "atexit").write_text("ran"))

def late():
    time.sleep(0.3)
    (marks / "thread").write_text("joined")

threading.Thread(target=late).start()  # not a daemon: joined before the process ends

class Torn:
    def __del__(self):
        (marks / "teardown").write_text("ran")

kept = Torn()  # freed only by the interpreter's teardown
sys.argv = ["harness", *sys.argv[2:]]
from harness.cli import main
main()
"""


def test_the_command_line_ends_as_python_would_less_its_teardown(builder, tmp_path) -> None:
    """``cli._end_process``: threads joined, ``atexit`` callbacks run (they end the run's workers
    and git processes), the report on a pipe whole and the exit code kept; the teardown of every
    object (~0.2 s after the index's writer is forked) is skipped."""
    builder.commit("one", {"a.py": "x = 1\n"})
    builder.commit("two", {"a.py": "x = 2\n"})
    for argv, code in (
        (["shape", "HEAD~1..HEAD", "--repo", str(builder.path), "--format", "md"], 0),
        (["shape", "HEAD~1..nowhere", "--repo", str(builder.path)], 2),
    ):
        marks = tmp_path / str(code)
        marks.mkdir()
        proc = subprocess.run(
            [sys.executable, "-c", _ENDS, str(marks), *argv],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == code, proc.stderr
        assert sorted(p.name for p in marks.iterdir()) == ["atexit", "thread"]
        if code == 0:  # the whole report, as the run in this process renders it
            same = subprocess.run(
                [*HARNESS, *argv], capture_output=True, text=True, timeout=120, cwd=builder.path
            )
            assert proc.stdout.startswith("# Shape of") and proc.stdout.endswith("\n")
            assert proc.stdout.splitlines()[3:] == same.stdout.splitlines()[3:]
