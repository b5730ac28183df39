"""harness: differential regression and cherry-pick fidelity harness."""

import signal as _signal
import sys as _sys


def _early_interrupt(_signum: int, _frame: object) -> None:
    """Ctrl-C before the CLI's own handling is in place: one line, exit 130, no traceback."""
    import os

    _sys.stderr.write("harness: interrupted\n")
    _sys.stderr.flush()
    os._exit(130)


# First thing when the CLI starts (console script or python -m harness): nothing slower runs before it.
_argv0 = _sys.argv[0] if _sys.argv else ""
if (
    _argv0 == "-m"
    or _argv0.rsplit("/", 1)[-1] == "harness"
    or _argv0.endswith("harness/__main__.py")
):
    try:
        _signal.signal(_signal.SIGINT, _early_interrupt)
    except ValueError:  # not the main thread: an embedding program keeps its own handling
        pass

__version__ = "0.1.0"
