"""harness: differential regression and cherry-pick fidelity harness."""

__version__ = "0.1.0"


def _early_interrupt(_signum: int, _frame: object) -> None:
    """Ctrl-C before the CLI's handlers are in place: one line, exit 130, no traceback."""
    import os
    import sys

    sys.stderr.write("harness: interrupted\n")
    sys.stderr.flush()
    os._exit(130)


def _install_early_interrupt() -> None:
    import os
    import signal
    import sys
    import threading

    argv0 = sys.argv[0] if sys.argv else ""
    if threading.current_thread() is threading.main_thread() and (
            argv0 == "-m" or os.path.basename(argv0) in ("harness", "__main__.py")):
        signal.signal(signal.SIGINT, _early_interrupt)


_install_early_interrupt()
