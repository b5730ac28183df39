"""pytest runs forked from a zygote (harness/infra/zygote.py, probes/pytest_zygote.py) start as a
fresh ``python -m pytest`` would, or run fresh; they end with their timeout, their zygote and the
harness. Real pytest runs of real trees, forked and fresh side by side."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from harness.checks.tests_as_evidence.pytest_run import pytest_env, run_in_tree, tree_paths
from harness.infra import process, zygote
from harness.testing.processes import alive, wait_for

pytestmark = pytest.mark.skipif(not process.REAPS_TREE, reason="the reaper needs Linux")

TESTS = """
import atexit, os, sys, tempfile

def test_passes():
    assert 1 + 1 == 2

def test_fails():
    assert 1 + 1 == 3

def test_sees_its_own_start():
    assert os.environ["CELL_NAME"] == os.path.basename(os.getcwd())
    assert sys.path.index(os.getcwd()) < sys.path.index(os.path.dirname(os.__file__))
    assert tempfile.gettempdir() == os.environ["TMPDIR"]
    assert not open(0).read()  # (pytest's own stdin refuses reads)
    atexit.register(lambda: open(os.environ["AT_EXIT"], "w").write("ran"))
"""


def _tree(root: Path, name: str, files: dict[str, str] | None = None) -> Path:
    tree = root / name
    (tree / "tests").mkdir(parents=True)
    (tree / "tests" / "test_x.py").write_text(TESTS)
    for rel, text in (files or {}).items():
        (tree / rel).write_text(text)
    return tree


def _env(tree: Path, root: Path) -> dict[str, str]:
    env = pytest_env(tree_paths(tree))
    tmp = root / f"tmp-{tree.name}"
    tmp.mkdir(exist_ok=True)
    env.update(
        {"CELL_NAME": tree.name, "TMPDIR": str(tmp), "AT_EXIT": str(root / f"{tree.name}.exit")}
    )
    return env


def _argv(tree: Path) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tree)]


def _summary(out: bytes) -> str:
    lines = [ln for ln in out.decode().splitlines() if " in " in ln or "Error" in ln]
    return lines[-1].split(" in ")[0] if lines else ""


def test_a_forked_run_is_what_a_fresh_run_is(tmp_path: Path) -> None:
    # (a pytest.ini, a setup.py and a README do not shadow what the zygote imported)
    files = {"pytest.ini": "[pytest]\n", "setup.py": "", "README.md": ""}
    trees = [_tree(tmp_path, f"cell{i}", files) for i in range(2)]
    fresh = run_in_tree(_argv(trees[0]), trees[0], _env(trees[0], tmp_path), 120)
    (tmp_path / "cell0.exit").unlink()
    with zygote.forking() as forks:
        forked = [run_in_tree(_argv(t), t, _env(t, tmp_path), 120) for t in trees]
        assert forks.forked == 2
    for run in forked:
        assert run.returncode == fresh.returncode == 1
        assert _summary(run.stdout) == _summary(fresh.stdout) == "1 failed, 2 passed"
        assert "assert (1 + 1) == 3" in run.stdout.decode()
    assert (tmp_path / "cell0.exit").read_text() == "ran"
    assert (tmp_path / "cell1.exit").read_text() == "ran"


@pytest.mark.parametrize(
    "files,said",
    [
        (
            {"pluggy.py": "raise ImportError('the tree shadows pluggy')\n"},
            "the tree shadows pluggy",
        ),
        (
            {"sitecustomize.py": "import os\nos.environ['CELL_NAME'] = 'changed at start-up'\n"},
            "changed at start-up",
        ),
    ],
    ids=["shadows-what-pytest-imports", "sitecustomize"],
)
def test_a_tree_shadowing_an_imported_module_runs_fresh(tmp_path: Path, files, said) -> None:
    tree = _tree(tmp_path, "cell", files)
    env = _env(tree, tmp_path)
    fresh = run_in_tree(_argv(tree), tree, env, 120)
    with zygote.forking() as forks:
        got = run_in_tree(_argv(tree), tree, env, 120)
        assert forks.forked == 0
    assert said in (got.stdout + got.stderr).decode()  # the tree's module ran, as fresh
    assert got.returncode == fresh.returncode
    assert _summary(got.stdout + got.stderr) == _summary(fresh.stdout + fresh.stderr)


def test_a_different_start_up_variable_gets_its_own_zygote_or_runs_fresh(tmp_path: Path) -> None:
    tree = _tree(tmp_path, "cell")
    env = _env(tree, tmp_path)
    with zygote.forking() as forks:
        zygote.prestart(sys.executable, {**pytest_env(), "PYTHONHASHSEED": "1"})
        first = forks._live[next(iter(forks._live))]  # noqa: SLF001
        assert first.path(_argv(tree), str(tree), {**env, "PYTHONHASHSEED": "2"}) is None
        assert first.path(_argv(tree), str(tree), {**env, "PYTHONHASHSEED": "1"}) is not None
        assert first.path(["python3", "-m", "pytest"], str(tree), env) is None
        run_in_tree(_argv(tree), tree, {**env, "PYTHONHASHSEED": "2"}, 120)
        assert len(forks._live) == 2  # noqa: SLF001


def test_fresh_hands_on_another_interpreter(tmp_path: Path) -> None:
    tree = _tree(tmp_path, "cell")
    tree.joinpath("tests", "test_pid.py").write_text(
        "import os\n"
        "def test_pid():\n"
        "    stat = open(f'/proc/{os.getppid()}/stat').read()\n"  # the reaper's parent: the zygote
        "    zygote = stat[stat.rindex(')') + 2 :].split()[1]\n"
        "    open(os.environ['ZYGOTES'], 'a').write(zygote + '\\n')\n"
    )
    env = {**_env(tree, tmp_path), "ZYGOTES": str(tmp_path / "zygotes")}
    argv = [*_argv(tree), "tests/test_pid.py"]
    with zygote.forking() as forks:
        zygote.prestart(sys.executable, pytest_env(), spare=True)
        for _ in range(2):
            assert run_in_tree(argv, tree, env, 120).returncode == 0
        forks.fresh()
        assert run_in_tree(argv, tree, env, 120).returncode == 0
        assert forks.forked == 3
    first, second, third = (tmp_path / "zygotes").read_text().split()
    assert first == second != third


SLOW = """import os, subprocess
def test_slow():
    p = subprocess.Popen(["setsid", "sleep", "300"])
    open(os.environ["PIDS"], "a").write(f"{os.getpid()}\\n{p.pid}\\n")
    import time
    time.sleep(300)
"""


def test_a_timeout_kills_the_run_and_what_it_started(tmp_path: Path) -> None:
    tree = _tree(tmp_path, "cell")
    tree.joinpath("tests", "test_slow.py").write_text(SLOW)
    env = {**_env(tree, tmp_path), "PIDS": str(tmp_path / "pids")}
    with zygote.forking() as forks:
        with pytest.raises(process.TimeoutExpired):
            run_in_tree([*_argv(tree), "tests/test_slow.py"], tree, env, 10)
        pids = [int(x) for x in (tmp_path / "pids").read_text().split()]
        assert wait_for(lambda: not any(alive(p) for p in pids), 5)
        # the zygote still serves
        assert run_in_tree([*_argv(tree), "tests/test_x.py"], tree, env, 120).returncode == 1
        assert forks.forked == 1


KILLED = """import sys, threading
sys.path.insert(0, {root!r})
from pathlib import Path
from harness.checks.tests_as_evidence.pytest_run import pytest_env, run_in_tree, tree_paths
from harness.infra import zygote
tree = Path({tree!r})
env = {{**pytest_env(tree_paths(tree)), "PIDS": {pids!r}}}
with zygote.forking() as forks:
    zygote.prestart(sys.executable, pytest_env())
    z = next(iter(forks._live.values()))
    open({pids!r}, "a").write(f"{{z.proc.pid}}\\n")
    run_in_tree([sys.executable, "-m", "pytest", "tests/test_slow.py"], tree, env, 600)
"""


def test_the_zygote_and_its_runs_die_with_the_harness(tmp_path: Path) -> None:
    tree = _tree(tmp_path, "cell")
    tree.joinpath("tests", "test_slow.py").write_text(SLOW)
    pids = tmp_path / "pids"
    root = str(Path(__file__).resolve().parents[2])
    script = KILLED.format(root=root, tree=str(tree), pids=str(pids))
    env = {**os.environ, "HARNESS_WORK_DIR": str(tmp_path / "work")}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env)
    assert wait_for(lambda: pids.exists() and len(pids.read_text().split()) >= 3, 60)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    started = [int(x) for x in pids.read_text().split()]
    assert wait_for(lambda: not any(alive(p) for p in started), 10), [
        p for p in started if alive(p)
    ]


def test_an_interpreter_without_pytest_runs_fresh(tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    python = str(bare / "bin" / "python")
    tree = _tree(tmp_path, "cell")
    env = _env(tree, tmp_path)
    argv = [python, "-m", "pytest", "-q"]
    fresh = run_in_tree(argv, tree, env, 60)
    with zygote.forking() as forks:
        got = run_in_tree(argv, tree, env, 60)
        assert forks.forked == 0
    assert got.returncode == fresh.returncode == 1
    assert b"No module named pytest" in got.stderr


def test_a_run_killed_by_a_signal_reads_as_one(tmp_path: Path) -> None:
    tree = _tree(tmp_path, "cell")
    tree.joinpath("tests", "test_die.py").write_text(
        textwrap.dedent(
            """\
            import os, signal
            def test_die():
                os.kill(os.getpid(), signal.SIGKILL)
            """
        )
    )
    env = _env(tree, tmp_path)
    argv = [*_argv(tree), "tests/test_die.py"]
    fresh = run_in_tree(argv, tree, env, 60)
    with zygote.forking() as forks:
        got = run_in_tree(argv, tree, env, 60)
        assert forks.forked == 1
    assert got.returncode == fresh.returncode == -signal.SIGKILL


ORPHAN = """import os, time
def test_s():
    if not os.path.exists(os.environ["MARK"]):
        open(os.environ["MARK"], "w").write(str(os.getpid()))
        time.sleep(60)
"""


def test_a_zygote_that_dies_stops_its_runs_and_they_run_fresh(tmp_path: Path) -> None:
    """The zygote killed under a run: the run's processes end with it (they are not left
    running beside the fresh run the harness makes in their place)."""
    tree = _tree(tmp_path, "cell")
    tree.joinpath("tests", "test_s.py").write_text(ORPHAN)
    mark = tmp_path / "mark"
    env = {**_env(tree, tmp_path), "MARK": str(mark)}
    argv = [*_argv(tree), "tests/test_s.py"]
    got: list[subprocess.CompletedProcess[bytes]] = []
    with zygote.forking() as forks:
        zygote.prestart(sys.executable, pytest_env())
        first = next(iter(forks._live.values()))  # noqa: SLF001
        thread = threading.Thread(target=lambda: got.append(run_in_tree(argv, tree, env, 120)))
        thread.start()
        assert wait_for(mark.exists, 60)
        forked = int(mark.read_text())
        assert first.proc is not None
        os.kill(first.proc.pid, signal.SIGKILL)
        thread.join(60)
        assert not alive(forked)  # stopped before the fresh run started
        assert forks.forked == 0
    assert got and got[0].returncode == 0  # the fresh run, which found the mark


def test_pythonsafepath_keeps_the_working_folder_off_the_path(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PYTHONSAFEPATH", "1")
    tree = _tree(tmp_path, "cell")
    tree.joinpath("tests", "test_p.py").write_text(
        "import os, sys\ndef test_p():\n    assert os.getcwd() not in sys.path\n"
    )
    env = pytest_env()  # no tree on the path: the working folder alone would import it
    argv = [*_argv(tree), "tests/test_p.py"]
    assert run_in_tree(argv, tree, env, 60).returncode == 0
    with zygote.forking() as forks:
        assert run_in_tree(argv, tree, env, 60).returncode == 0
        assert forks.forked == 1


def test_a_zygote_never_ready_is_given_up_once(tmp_path: Path, monkeypatch) -> None:
    """An interpreter whose zygote does not start: the first run waits READY_TIMEOUT, the zygote
    is stopped, and every run goes fresh."""
    slow = tmp_path / "python"
    slow.write_text(f'#!/bin/sh\n[ "$1" = -c ] && sleep 60\nexec {sys.executable} "$@"\n')
    slow.chmod(0o755)
    monkeypatch.setattr(zygote, "READY_TIMEOUT", 1.0)
    tree = _tree(tmp_path, "cell")
    env = _env(tree, tmp_path)
    argv = [str(slow), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_x.py"]
    with zygote.forking() as forks:
        assert run_in_tree(argv, tree, env, 60).returncode == 1
        stuck = next(iter(forks._live.values()))  # noqa: SLF001
        assert stuck._dead  # noqa: SLF001
        assert stuck.proc is not None and wait_for(lambda: stuck.proc.poll() is not None, 10)
        assert run_in_tree(argv, tree, env, 60).returncode == 1
        assert forks.forked == 0


def test_forking_within_forking_shares_the_outer_zygotes() -> None:
    with zygote.forking() as outer:
        with zygote.forking() as inner:
            assert inner is outer
        assert zygote._active is outer  # noqa: SLF001
    assert zygote._active is None  # noqa: SLF001


def test_reusing_keeps_the_zygote_for_the_process_s_later_runs(tmp_path: Path) -> None:
    """An executor's worker runs one task after another: the second task's run forks from the
    zygote the first one started; between tasks, and within another forking(), nothing else."""
    tree = _tree(tmp_path, "cell")
    env = _env(tree, tmp_path)
    argv = [*_argv(tree), "tests/test_x.py"]
    with zygote.reusing() as first:
        assert run_in_tree(argv, tree, env, 120).returncode == 1
    assert zygote._active is None  # noqa: SLF001
    with zygote.reusing() as second:
        assert run_in_tree(argv, tree, env, 120).returncode == 1
    assert second is first and first.forked == 2
    assert len(first._live) == 1  # noqa: SLF001  one zygote served both
    with zygote.forking() as outer, zygote.reusing() as inner:
        assert inner is outer
