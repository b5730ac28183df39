"""The process helper: errors carry the output's tail, a timeout kills the whole group, the
environment a child gets."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from harness.infra import process


def test_failure_message_carries_command_code_and_output_tail() -> None:
    code = "import sys; print('\\n'.join(f'line {i}' for i in range(40))); sys.exit(3)"
    with pytest.raises(process.ProcessError) as err:
        process.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    said = str(err.value)
    assert "exit status 3" in said
    assert "line 39" in said and "line 25" in said
    assert "line 24" not in said  # only the tail: the last 15 lines
    assert isinstance(err.value, process.CalledProcessError)


def test_timeout_kills_the_child_and_its_descendants(tmp_path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    code = (
        "import subprocess, sys, time;"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']);"
        f"open({str(pidfile)!r}, 'w').write(str(p.pid)); time.sleep(60)"
    )
    from harness.testing.processes import alive, wait_for

    start = time.monotonic()
    with pytest.raises(process.TimeoutExpired):
        process.run([sys.executable, "-c", code], timeout=10)
    assert time.monotonic() - start < 40
    grandchild = int(pidfile.read_text())
    # (a zombie left for init to reap is dead: ``alive`` says so, ``os.kill(pid, 0)`` does not)
    assert wait_for(lambda: not alive(grandchild), 20), f"grandchild {grandchild} outlived it"


def test_child_env_drops_and_adds(monkeypatch) -> None:
    monkeypatch.setenv("HARNESS_TEST_DROPPED", "1")
    monkeypatch.setenv("HARNESS_TEST_KEPT", "1")
    env = process.child_env({"HARNESS_TEST_ADDED": "x"}, drop=("HARNESS_TEST_DROPPED",))
    assert "HARNESS_TEST_DROPPED" not in env
    assert env["HARNESS_TEST_KEPT"] == "1" and env["HARNESS_TEST_ADDED"] == "x"
    assert os.environ["HARNESS_TEST_DROPPED"] == "1"  # the harness's own environment unchanged


def test_the_watchdog_is_waited_for_at_exit() -> None:
    """A run that started children exits with its watchdog reaped: no "still running" warning
    (Python's ResourceWarning for a child never waited for), the watchdog gone at once."""
    script = (
        "import os\n"
        "from harness.infra import process\n"
        "process.run(['true'])\n"
        "print(process._watchdogs[os.getpid()].pid)\n"
    )
    done = subprocess.run(
        [sys.executable, "-X", "dev", "-c", script], capture_output=True, text=True, check=True
    )
    assert "ResourceWarning" not in done.stderr, done.stderr
    watchdog = int(done.stdout)
    with pytest.raises(ProcessLookupError):
        os.kill(watchdog, 0)  # reaped before the harness exited, not merely orphaned


def _sleeper_with_grandchild(pidfile) -> list[str]:
    code = (
        "import subprocess, sys, time;"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']);"
        f"open({str(pidfile)!r}, 'w').write(str(p.pid)); time.sleep(60)"
    )
    return [sys.executable, "-c", code]


def test_a_run_given_up_by_its_caller_is_killed_with_what_it_started(tmp_path) -> None:
    import threading

    from harness.testing.processes import alive, wait_for

    pidfile = tmp_path / "grandchild.pid"
    stop = threading.Event()
    threading.Timer(0.5, lambda: wait_for(pidfile.exists, 20) and stop.set()).start()
    start = time.monotonic()
    with pytest.raises(process.Stopped):
        process.run(_sleeper_with_grandchild(pidfile), timeout=60, stop=stop, reap_tree=True)
    assert time.monotonic() - start < 30
    grandchild = int(pidfile.read_text())
    assert wait_for(lambda: not alive(grandchild), 10), "the grandchild outlived the stop"


def test_a_stoppable_run_keeps_its_timeout_and_takes_no_input() -> None:
    import threading

    stop = threading.Event()  # never set
    start = time.monotonic()
    with pytest.raises(process.TimeoutExpired):
        process.run([sys.executable, "-c", "import time; time.sleep(60)"], timeout=1, stop=stop)
    assert 0.9 < time.monotonic() - start < 30
    got = process.run(
        [sys.executable, "-c", "import time; time.sleep(0.3); print('done')"],
        capture_output=True,
        text=True,
        timeout=60,
        stop=stop,
    )
    assert got.returncode == 0 and got.stdout.strip() == "done"  # waited for across polls
    with pytest.raises(ValueError):  # communicate() would stop writing it after the first poll
        process.run([sys.executable, "-c", "pass"], input="x", timeout=60, stop=stop)
