"""Progress of the phases that can take a while (sections, collections, mutations, sweeps, engine builds).

On a terminal (stderr is a TTY) a rich spinner shows every open phase with its elapsed time and
each finished one leaves a line with its duration; otherwise plain lines (``harness: LABEL …`` and
``harness: LABEL: done in 1.2s``). ``NO_COLOR`` turns colour off; ``HARNESS_PROGRESS=plain|none``
forces plain lines or silence. Phases nest (a compare section holds its collections).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

_live: Any = None  # the rich Progress while a phase is open on a terminal
_depth = 0


def _mode(stream: IO[str]) -> str:
    forced = os.environ.get("HARNESS_PROGRESS", "")
    if forced in ("plain", "none", "rich"):
        return forced
    try:
        return "rich" if stream.isatty() and os.environ.get("TERM") != "dumb" else "plain"
    except (AttributeError, ValueError):
        return "plain"


def _elapsed(seconds: float) -> str:
    return f"{seconds:.1f}s" if seconds < 60 else f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


def _start_live(stream: IO[str]) -> Any:
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    console = Console(file=stream, highlight=False, force_terminal=True)  # NO_COLOR is read by rich
    live = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )
    live.start()
    return live


@contextmanager
def phase(label: str, stream: IO[str] | None = None) -> Iterator[None]:
    """Show ``label`` while the block runs, then how long it took."""
    global _live, _depth
    from harness.infra import interrupt

    interrupt.check()  # a safe point: a Ctrl-C kept from inside a finalizer stops the run here
    stream = stream or sys.stderr
    mode = _mode(stream)
    if mode == "none":
        yield
        interrupt.check()
        return
    start = time.monotonic()
    indent = "  " * _depth
    task = None
    if mode == "rich":
        if _live is None:
            _live = _start_live(stream)
        task = _live.add_task(indent + label, total=None)
    else:
        stream.write(f"harness: {indent}{label} …\n")
        stream.flush()
    _depth += 1
    ok = False
    try:
        yield
        interrupt.check()
        ok = True
    finally:
        _depth -= 1
        took = _elapsed(time.monotonic() - start)
        outcome = "done" if ok else "stopped"
        if task is not None and _live is not None:
            from rich.markup import escape

            _live.remove_task(task)
            mark = "[green]✓[/]" if ok else "[red]✗[/]"
            _live.console.print(f"{indent}{mark} {escape(label)} [dim]{outcome} in {took}[/]")
            if _depth == 0:
                _live.stop()
                _live = None
        else:
            stream.write(f"harness: {indent}{label}: {outcome} in {took}\n")
            stream.flush()


def note(message: str, stream: IO[str] | None = None) -> None:
    """A one-off line among the phases (printed above the spinner on a terminal)."""
    stream = stream or sys.stderr
    if _mode(stream) == "none":
        return
    if _live is not None:
        from rich.markup import escape

        _live.console.print("  " * _depth + escape(message))
    else:
        stream.write(f"harness: {'  ' * _depth}{message}\n")
        stream.flush()
