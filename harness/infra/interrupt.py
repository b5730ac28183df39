"""Ctrl-C as the harness honours it: at once, unless it lands inside a finalizer.

Python's own handler raises ``KeyboardInterrupt`` wherever the main thread is; inside a ``__del__``
(``Popen.__del__`` runs whenever a finished child's object is collected) the exception is
printed as "Exception ignored in …" and the interrupt is lost. This handler records it instead and
delivers it again a moment later, when the main thread is out of the finalizer; ``check`` honours a
recorded interrupt at the safe points the main loop passes (every progress phase).
"""

from __future__ import annotations

import os
import signal
import threading
from types import FrameType

_pending = threading.Event()
RESEND_SECONDS = 0.02


def _in_finalizer(frame: FrameType | None) -> bool:
    while frame is not None:
        if frame.f_code.co_name == "__del__":
            return True
        frame = frame.f_back
    return False


def _resend() -> None:
    if _pending.is_set():
        try:
            os.kill(os.getpid(), signal.SIGINT)
        except OSError:
            pass


def handler(_signum: int, frame: FrameType | None) -> None:
    """SIGINT: ``KeyboardInterrupt`` now, or (inside a finalizer) recorded and sent again shortly."""
    if _in_finalizer(frame):
        _pending.set()
        timer = threading.Timer(RESEND_SECONDS, _resend)
        timer.daemon = True
        timer.start()
        return
    _pending.clear()
    raise KeyboardInterrupt


def install() -> None:
    """Use ``handler`` for SIGINT (main thread only; elsewhere Python refuses and nothing changes)."""
    signal.signal(signal.SIGINT, handler)


def pending() -> bool:
    return _pending.is_set()


def check() -> None:
    """A safe point: raise the recorded interrupt here (in the main thread; a no-op elsewhere)."""
    if _pending.is_set() and threading.current_thread() is threading.main_thread():
        _pending.clear()
        raise KeyboardInterrupt
