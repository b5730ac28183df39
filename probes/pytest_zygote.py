"""A pytest zygote: runs in the project's environment (started by ``harness/infra/zygote.py`` with
``python -c`` and this file's text), imports pytest once, then forks one run per request, so that
each of a section's pytest runs does not import pytest and its plugins again (~0.13 CPU-s each).

Protocol (bytes, one line each): requests on fd 0, JSON ``{"argv", "cwd", "env", "path", "out",
"err"}``; replies on fd 1: ``ready <json>`` once, then ``pid <pid>`` for each request in order and
``exit <pid> <status>`` when that run ends. The end of fd 0 stops every run and the zygote.

Each request forks a reaper (a session of its own, the child subreaper: what the run leaves is
killed when it ends; ``probes/_reaper.py``, whose path is the zygote's argument), which forks the
run: fd 0 from /dev/null, fd 1 and 2 to the request's files, its cwd, environment and
``sys.path``, then pytest's ``__main__`` run as ``python -m pytest`` runs it; its end is the
interpreter's own. A reaper whose zygote dies stops its run (``PR_SET_PDEATHSIG``).
"""

import ctypes
import json
import os
import runpy
import select
import signal
import sys
import time

_LIBC = ctypes.CDLL(None, use_errno=True)
REAPER = {"__name__": "_harness_reaper"}  # probes/_reaper.py, loaded by main()


def _run(req):
    """The run itself (the reaper's child): returns only by raising SystemExit from pytest."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    for fd, name in ((1, "out"), (2, "err")):
        f = os.open(req[name], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        os.dup2(f, fd)
        os.close(f)
    os.close(null)
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    # ``-m`` puts the working folder (links resolved) first, unless PYTHONSAFEPATH (or -P) says not
    here = [] if getattr(sys.flags, "safe_path", False) else [os.getcwd()]
    sys.path[:] = [*here, *req["path"]]
    tempfile = sys.modules.get("tempfile")
    if tempfile is not None:
        tempfile.tempdir = None  # read again from this run's TMPDIR
    sys.argv = [sys.argv[0], *req["argv"]]
    if hasattr(sys, "orig_argv"):
        sys.orig_argv[:] = [sys.executable, "-m", "pytest", *req["argv"]]
    # What ``-m`` itself calls: pytest's ``__main__`` run in the ``__main__`` module, which keeps
    # nothing of the zygote (this function holds what it still needs in locals).
    as_main = getattr(runpy, "_run_module_as_main", None)
    run_module = runpy.run_module
    main = sys.modules["__main__"].__dict__
    for name in [n for n in main if not n.startswith("__")]:
        del main[name]
    if as_main is not None:
        as_main("pytest")
    else:
        run_module("pytest", run_name="__main__", alter_sys=True)
    raise SystemExit(0)


def _reaper(req, wake, zygote):
    """The forked request: a session of its own, the subreaper of the run it forks; it stops the
    run (and what the run started) when the zygote dies."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for fd in wake:
        os.close(fd)
    null = os.open(os.devnull, os.O_RDWR)  # the zygote's pipes stay the zygote's
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    os.setsid()
    REAPER["become"]()
    _LIBC.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG: the zygote's death stops it
    if os.getppid() != zygote:  # it died before that was set
        REAPER["stop"](signal.SIGTERM, None)
    try:
        child = os.fork()
    except OSError:
        os._exit(126)
    if child == 0:
        _run(req)
    REAPER["end_as"](child)


def _say(text):
    data = (text + "\n").encode()
    while data:
        data = data[os.write(1, data) :]


def main():
    if sys.path and sys.path[0] == "":
        del sys.path[0]  # ``-c``: the zygote's cwd is no import location
    with open(sys.argv[1], encoding="utf-8") as fh:  # the reaper's text, beside this file
        exec(compile(fh.read(), sys.argv[1], "exec"), REAPER)
    import pytest  # noqa: F401  what every run imports first
    from _pytest.config import default_plugins

    for name in default_plugins:  # pytest's own plugins, imported by every run's config
        try:
            __import__("_pytest." + name)
        except Exception:  # noqa: BLE001 - a run reports it as it would
            pass
    import site

    info = {
        "path": sys.path,
        "modules": sorted({m.split(".")[0] for m in sys.modules}),
        "user_site": bool(site.ENABLE_USER_SITE),
    }
    _say("ready " + json.dumps(info))
    zygote = os.getpid()
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    live = set()
    pending = b""
    while True:
        ready = select.select([0, wake_r], [], [])[0]
        if wake_r in ready:
            try:
                while os.read(wake_r, 512):
                    pass
            except BlockingIOError:
                pass
            while live:
                try:
                    pid, status = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    break
                live.discard(pid)
                code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
                _say(f"exit {pid} {code}")
        if 0 in ready:
            data = os.read(0, 65536)
            if not data:
                _end(live)
            pending += data
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                try:
                    req = json.loads(line)
                    pid = os.fork()
                except (ValueError, OSError):  # the harness runs this one fresh
                    _say("pid 0")
                    continue
                if pid == 0:
                    _reaper(req, (wake_r, wake_w), zygote)
                live.add(pid)
                _say(f"pid {pid}")


def _end(live):
    """The end of the requests: every run still going is stopped (its reaper kills what it
    started), waited for, and the zygote exits."""
    for pid in live:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
    deadline = time.monotonic() + 10
    while live and time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid:
            live.discard(pid)
        else:
            time.sleep(0.01)
    os._exit(0)


main()
