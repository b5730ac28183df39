"""pytest plugin: record every test's outcome and where the code under test was imported from.

Runs inside the column's own pytest (``-p pytest_outcomes_plugin`` with this folder on
PYTHONPATH); it never imports harness. Environment:

* ``HARNESS_OUTCOMES_OUT``: where to write the result JSON.
* ``HARNESS_PROOF_PATHS``: JSON list of tree-relative ``.py`` paths whose module origin to prove.

Outcomes per node id: passed, failed, error (setup/teardown/collection), skipped (xfail included);
a skipped test's reason as pytest gives it (``skips``, cut at 1000 characters: the harness
writes the run's own folders as placeholders before it cuts them shorter); the fixture a test's
setup did not find, where that is why it errored (``lacks``).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

_outcomes: dict[str, str] = {}
_skips: dict[str, str] = {}
_CUT = 1000
_collect_errors: list[dict[str, str]] = []
_lacks: dict[str, str] = {}
_NOT_FOUND = re.compile(r"fixture '([^']{1,200})' not found")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    nid = report.nodeid
    if report.when == "call":
        if report.passed:
            _outcomes[nid] = "passed"
        elif report.skipped:
            _outcomes[nid] = "skipped"  # skip or xfail
            _skips[nid] = _skip_reason(report)
        else:
            _outcomes[nid] = "failed"
    elif report.failed:
        _outcomes[nid] = "error"  # a failing fixture, in setup or teardown
        _skips.pop(nid, None)  # a skip followed by a teardown error is an error
        missing = _NOT_FOUND.search(str(report.longrepr)) if report.when == "setup" else None
        if missing is not None:
            _lacks[nid] = missing.group(1)
    elif report.skipped and report.when == "setup":
        _outcomes[nid] = "skipped"
        _skips[nid] = _skip_reason(report)


def _skip_reason(report: pytest.TestReport) -> str:
    """The reason as ``pytest -rs`` words it (``only on Windows``); an xfail's as ``xfail: …``."""
    xfail = getattr(report, "wasxfail", None)
    if xfail is not None:
        return ("xfail: " + str(xfail)).rstrip(": ")[:_CUT]
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        reason = str(longrepr[2])
        return (reason[len("Skipped: ") :] if reason.startswith("Skipped: ") else reason)[:_CUT]
    lines = str(longrepr or "").strip().splitlines()
    return lines[-1][:_CUT] if lines else "skipped"


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        lines = [ln for ln in str(report.longrepr or "").splitlines() if ln.strip()]
        _collect_errors.append(
            {
                "nodeid": report.nodeid or ".",
                "message": (lines[-1].strip() if lines else "collection error")[:_CUT],
            }
        )


def _module_names(rel: str) -> list[str]:
    parts = list(Path(rel).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return [".".join(parts[i:]) for i in range(len(parts)) if parts[i:]]


def _proofs(root: Path, rels: list[str]) -> dict[str, dict[str, Any]]:
    proofs: dict[str, dict[str, Any]] = {}
    for rel in rels:
        want = (root / rel).resolve()
        entry: dict[str, Any] = {"status": "not imported", "module": None, "file": None}
        for mod in list(sys.modules.values()):
            f = getattr(mod, "__file__", None)
            if f and Path(f).resolve() == want:
                entry = {"status": "in tree", "module": mod.__name__, "file": rel}
                break
        else:
            for name in _module_names(rel):
                mod = sys.modules.get(name)
                f = getattr(mod, "__file__", None) if mod else None
                if f:
                    entry = {"status": "shadowed", "module": name, "file": str(Path(f).resolve())}
                    break
        proofs[rel] = entry
    return proofs


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    out = os.environ.get("HARNESS_OUTCOMES_OUT")
    if not out:
        return
    rels = json.loads(os.environ.get("HARNESS_PROOF_PATHS", "[]"))
    result = {
        "exit_status": int(exitstatus),
        "outcomes": dict(sorted(_outcomes.items())),
        "skips": dict(sorted(_skips.items())),
        "lacks": dict(sorted(_lacks.items())),
        "collection_errors": _collect_errors,
        "module_proofs": _proofs(Path(str(session.config.rootpath)), rels),
        "pytest": pytest.__version__,
    }
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(result, fh, sort_keys=True)
    os.replace(tmp, out)
