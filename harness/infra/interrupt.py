"""Ctrl-C as the harness honours it: at once, unless it lands inside a finalizer or a callback.

Python's own handler raises ``KeyboardInterrupt`` wherever the main thread is; inside a ``__del__``
(``Popen.__del__`` runs whenever a finished child's object is collected) or a weakref callback (the
import system's module-lock clean-up runs one during any import) the exception is printed as
"Exception ignored in …" and the interrupt is lost. This handler records it instead and delivers it
again a moment later, out of the finalizer; ``check`` honours a recorded interrupt at the safe
points the main loop passes (every progress phase). Places the frame test cannot name (a callback
run from C) are caught by ``sys.unraisablehook``: a ``KeyboardInterrupt`` that Python could not
raise is recorded and sent again the same way, never printed.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from types import FrameType
from typing import Any

_pending = threading.Event()
RESEND_SECONDS = 0.02
# (function name, file) of callbacks whose exceptions Python reports as unraisable; None: any file.
_CALLBACKS = (("__del__", None), ("cb", "<frozen importlib._bootstrap>"))


def _in_finalizer(frame: FrameType | None) -> bool:
    while frame is not None:
        code = frame.f_code
        for name, filename in _CALLBACKS:
            if code.co_name == name and (filename is None or code.co_filename == filename):
                return True
        frame = frame.f_back
    return False


def _resend() -> None:
    if _pending.is_set():
        try:
            os.kill(os.getpid(), signal.SIGINT)
        except OSError:
            pass


def _keep() -> None:
    _pending.set()
    timer = threading.Timer(RESEND_SECONDS, _resend)
    timer.daemon = True
    timer.start()


def handler(_signum: int, frame: FrameType | None) -> None:
    """SIGINT: ``KeyboardInterrupt`` now, or (inside a finalizer) recorded and sent again shortly."""
    if _in_finalizer(frame):
        _keep()
        return
    _pending.clear()
    raise KeyboardInterrupt


def _unraisable(unraisable: Any) -> None:
    if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
        _keep()  # raised where Python could only print it: kept, as a finalizer's is
        return
    sys.__unraisablehook__(unraisable)


def install() -> None:
    """Use ``handler`` for SIGINT (main thread only; elsewhere Python refuses and nothing changes)."""
    signal.signal(signal.SIGINT, handler)
    sys.unraisablehook = _unraisable


def pending() -> bool:
    return _pending.is_set()


def check() -> None:
    """A safe point: raise the recorded interrupt here (in the main thread; a no-op elsewhere)."""
    if _pending.is_set() and threading.current_thread() is threading.main_thread():
        _pending.clear()
        raise KeyboardInterrupt
