"""What a probe starts ends with it. Before, a grandchild in the probe's process group, one in a
session of its own (``setsid``), or a command-kind ``setsid … &`` was alive after the run had
exited normally and wrote files two minutes later. Probe processes now run under a reaper (the
child subreaper of ``harness/infra/process.py``), which kills the whole subtree when the probe ends."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from harness.infra import process
from harness.testing.processes import alive

pytestmark = pytest.mark.skipif(
    not process.REAPS_TREE or shutil.which("setsid") is None, reason="needs Linux and setsid"
)

PYTHON_PROBE = """import os, subprocess
UNDER_TEST = ["m"]
def run(n):
    import m
    argv = {argv!r}
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session={new_session})
    with open(os.environ["PIDS"], "a") as fh:
        fh.write(f"{{p.pid}}\\n")
    return m.x * n
"""


def _scenario(tmp_path: Path, how: str) -> Path:
    scen = tmp_path / "s.yaml"
    if how.startswith("command"):
        inner = "setsid sleep 300" if how == "command-setsid" else "sleep 300"
        probe = (
            "{id: c, kind: command, argv: [sh, -c, "
            f"'{inner} > /dev/null 2>&1 & echo $! >> \"$PIDS\"'], rows: {{n: [1]}}}}"
        )
    else:
        file = tmp_path / "p.py"
        argv = ["setsid", "sleep", "300"] if how == "python-setsid" else ["sleep", "300"]
        file.write_text(PYTHON_PROBE.format(argv=argv, new_session=how == "python-session"))
        probe = f"{{id: p, kind: python, file: {file}, function: run, rows: {{n: [1]}}}}"
    scen.write_text(f"refs: {{head: main}}\nprobes:\n  - {probe}\n")
    return scen


@pytest.mark.parametrize(
    "how", ["python-group", "python-setsid", "python-session", "command-group", "command-setsid"]
)
def test_a_probes_grandchildren_do_not_outlive_it(
    builder, run_cli, tmp_path: Path, monkeypatch, how: str
) -> None:
    builder.commit("one", {"m.py": "x = 1\n"})
    pids = tmp_path / "pids"
    monkeypatch.setenv("PIDS", str(pids))
    scen = _scenario(tmp_path, how)
    code, out, err = run_cli(
        "probe", str(scen), "--repo", str(builder.path), "--format", "json", "--no-cache"
    )
    assert code == 0, err
    started = [int(x) for x in pids.read_text().split()]
    assert started, "the probe started its grandchild"
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(alive(p) for p in started):
        time.sleep(0.05)
    left = [p for p in started if alive(p)]
    for p in left:  # do not leave them to the next test
        os.kill(p, 9)
    assert not left, f"{how}: still running after the probe ended: {left}"


def test_the_reaper_keeps_the_exit_status_and_says_when_a_program_is_missing(tmp_path) -> None:
    p = process.popen(["sh", "-c", "exit 7"], reap_tree=True)
    assert p.wait() == 7
    process.unregister(p.pid)
    p = process.popen(["sh", "-c", "kill -TERM $$"], reap_tree=True)
    assert p.wait() == -15
    process.unregister(p.pid)
    with pytest.raises(FileNotFoundError):
        process.popen(["no-such-program-here"], reap_tree=True, env={"PATH": str(tmp_path)})


def test_a_timed_out_probes_session_grandchild_is_killed_too(
    builder, run_cli, tmp_path: Path, monkeypatch
) -> None:
    """A timeout kills the probe's group; the reaper is told first and kills what left the group."""
    builder.commit("one", {"m.py": "x = 1\n"})
    pids = tmp_path / "pids"
    monkeypatch.setenv("PIDS", str(pids))
    file = tmp_path / "p.py"
    file.write_text(
        PYTHON_PROBE.format(argv=["setsid", "sleep", "300"], new_session=False).replace(
            "    return m.x * n", "    import time\n    time.sleep(60)\n    return m.x * n"
        )
    )
    scen = tmp_path / "s.yaml"
    scen.write_text(
        "refs: {head: main}\nprobes:\n"
        f"  - {{id: p, kind: python, file: {file}, function: run, timeout: 8, rows: {{n: [1]}}}}\n"
    )
    code, out, err = run_cli(
        "probe", str(scen), "--repo", str(builder.path), "--format", "json", "--no-cache"
    )
    assert code in (0, 1), err
    assert "timed out" in out
    started = [int(x) for x in pids.read_text().split()]
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(alive(p) for p in started):
        time.sleep(0.05)
    left = [p for p in started if alive(p)]
    for p in left:
        os.kill(p, 9)
    assert started and not left, left


CONFTEST = """import os, subprocess
p = subprocess.Popen(["setsid", "sleep", "300"], stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
with open(os.environ["PIDS"], "a") as fh:
    fh.write(f"{p.pid}\\n")
"""


def test_what_the_repositorys_tests_start_ends_with_the_pytest_run(
    builder, run_cli, tmp_path: Path, monkeypatch
) -> None:
    """The same for pytest runs (collection, mutation rows): a conftest's ``setsid`` daemon."""
    builder.commit(
        "one",
        {"tests/conftest.py": CONFTEST, "tests/test_a.py": "def test_a():\n    pass\n"},
    )
    pids = tmp_path / "pids"
    monkeypatch.setenv("PIDS", str(pids))
    code, _, err = run_cli(
        "select", "--lane", "all=", "--repo", str(builder.path), "--format", "json", "--no-cache"
    )
    assert code == 0, err
    started = [int(x) for x in pids.read_text().split()]
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(alive(p) for p in started):
        time.sleep(0.05)
    left = [p for p in started if alive(p)]
    for p in left:
        os.kill(p, 9)
    assert started and not left, left
