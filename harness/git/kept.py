"""How a git batch process kept for a run (``cat-file --batch``, ``--batch-check``) ends: the end
of its input, then reaped; once the command line's verb is over (``leaving``), not waited for."""

from __future__ import annotations

import subprocess

_leaving = False  # the command line's verb is over and its process ends next (``leaving``)


def leaving() -> None:
    """The process ends next: a kept batch process is given the end of its input and not waited
    for (it exits at once, and init reaps it), as the command line's end need not wait."""
    global _leaving
    _leaving = True


def end_kept(proc: subprocess.Popen[bytes]) -> None:
    """End a kept batch process: EOF on its input, then reaped (killed if it does not stop)."""
    if _leaving:
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass
        return
    if proc.poll() is None:
        try:
            proc.stdin.close()  # type: ignore[union-attr]
            proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()
