"""The reaper: the child subreaper (prctl PR_SET_CHILD_SUBREAPER, Linux) of one run, so that a
grandchild whose parent exits (``setsid sleep 300 &``, a daemon that forks twice) is reparented to
it rather than to init; when the run ends, or the reaper is told to stop (SIGTERM), the whole
subtree is found from /proc and SIGKILLed. It ends as the run did.

Two users, one text: ``harness/infra/process.py`` runs it as a program (``python -I -S -c <this
file's text> ARGV...``: ARGV exec'd as its child); ``probes/pytest_zygote.py`` loads it and makes
each forked request a reaper (``become``) of the run it forks. It imports nothing of the harness.
"""

import ctypes
import os
import signal
import sys
import time


def tree():
    """Every process below this one (from /proc)."""
    kids = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as fh:
                    data = fh.read()
                kids.setdefault(int(data[data.rindex(b")") + 2 :].split()[1]), []).append(int(name))
            except (OSError, ValueError, IndexError):
                pass
    out, stack = [], [os.getpid()]
    while stack:
        for kid in kids.get(stack.pop(), ()):
            out.append(kid)
            stack.append(kid)
    return out


def reap():
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return


def clean():
    for _ in range(200):
        left = tree()
        if not left:
            break
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.005)
        reap()
    reap()


def stop(signum, frame):
    clean()
    os._exit(128 + signum)


def become():
    """This process: the subreaper of what it forks; SIGTERM kills all of it."""
    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    signal.signal(signal.SIGTERM, stop)


def end_as(child):
    """Wait for ``child``, kill what is left, and end as it did: the same exit code, or the same
    signal."""
    while True:
        pid, status = os.waitpid(-1, 0)
        if pid == child:
            break
    clean()
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig not in (signal.SIGKILL, signal.SIGSTOP):  # (no handler to reset: setting one fails)
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.WEXITSTATUS(status))


def main(argv):
    become()
    try:
        child = os.fork()
    except OSError:
        os._exit(126)
    if child == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            os.write(2, f"harness: cannot run {argv[0]}: {exc.strerror}\n".encode())
        os._exit(127)
    end_as(child)


if __name__ == "__main__":
    main(sys.argv[1:])
