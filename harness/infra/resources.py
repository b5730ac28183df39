"""Where the runtime files live: ``probes/`` and ``scenarios/`` beside the package (a source
checkout or an editable install) or inside it as ``harness/_data/`` (a regular install)."""

from __future__ import annotations

from pathlib import Path

from harness.errors import HarnessError

_PKG = Path(__file__).resolve().parent.parent  # the harness package
_MARKERS = {"probes": "_runner.py", "scenarios": "demo.yaml"}


def data_dir(name: str) -> Path:
    """The folder ``probes`` or ``scenarios`` that ships with this harness."""
    for candidate in (_PKG.parent / name, _PKG / "_data" / name):
        if (candidate / _MARKERS[name]).is_file():
            return candidate
    raise HarnessError(
        f"harness is installed without its {name}/ folder (looked beside and inside {_PKG})"
    )


PROBES_DIR = data_dir("probes")
