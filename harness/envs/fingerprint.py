"""What an interpreter is, as keys need it: its version, the fingerprint that enters cache keys
(realpath, version, prefix and installed distributions), and the description an engine
environment's manifest records (version, distributions and a fingerprint over them).

Every answer comes from a fresh process of that interpreter, never from the running harness: what
the harness has on its own ``sys.path`` (its working directory, an editable checkout) must not
enter a key.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from harness.infra import process
from harness.infra.cache import Cache, content_key


class Store(Protocol):
    """The part of ``harness.infra.cache.Cache`` an interpreter's kept answer needs."""

    root: Path
    enabled: bool


# What an interpreter says of itself, one item a line: realpath, version, prefix, distributions,
# and last the sys.path it searched (JSON).
DESCRIBE = """import sys, os, json, importlib.metadata as m
print(os.path.realpath(sys.executable)); print(sys.version); print(sys.prefix)
print(sorted({(d.metadata["Name"] or "").lower() + "==" + d.version for d in m.distributions()}))
print(json.dumps([os.path.abspath(p) for p in sys.path]))
"""

_ENV_DESCRIBE = (
    "import importlib.metadata as m, json, platform;"
    "print(json.dumps({'python': platform.python_version(), 'packages': sorted("
    "f\"{d.metadata['Name'].lower().replace('_','-')}=={d.version}\" for d in m.distributions())}))"
)


def interpreter_version(python: str) -> str:
    """``X.Y.Z`` of ``python`` (asked of the interpreter itself unless it is this one); ``unknown``
    when it answers nothing."""
    if os.path.realpath(python) == os.path.realpath(sys.executable):
        return ".".join(map(str, sys.version_info[:3]))
    proc = process.run(
        [python, "-c", "import sys; print('.'.join(map(str, sys.version_info[:3])))"],
        capture_output=True,
        timeout=60,
        env=process.child_env(),
    )
    return proc.stdout.decode().strip() or "unknown"


def describe_env(python: Path) -> dict[str, Any]:
    """Installed distributions and interpreter of an environment, and a fingerprint over them (what
    an engine environment's manifest records)."""
    out = process.run(
        [str(python), "-I", "-c", _ENV_DESCRIBE], capture_output=True, text=True, check=True
    )
    data = json.loads(out.stdout)
    text = "python " + data["python"] + "\n" + "\n".join(data["packages"])
    data["fingerprint"] = hashlib.sha256(text.encode()).hexdigest()
    return data


def _stamp(path: str) -> list[int] | None:
    """What changes when a distribution is added to, removed from or upgraded in a ``sys.path``
    entry: the folder's own mtime (a ``*.dist-info`` entry is created or removed), or a zip's."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_ino, st.st_size if not os.path.isdir(path) else 0]


def _stored_under(python: str) -> str:
    """The record key of an interpreter as named: its path and binary, and the environment
    variables that change its ``sys.path``."""
    named = python if os.path.sep in python else (shutil.which(python) or python)
    real = os.path.realpath(named)
    env = sorted((k, v) for k, v in os.environ.items() if k.startswith("PYTHON"))
    return content_key("interpreter", os.path.abspath(named), real, _stamp(real), env)


@lru_cache(maxsize=16)
def describe(python: str) -> tuple[str, list[str]]:
    """The fingerprint of ``python`` and the ``sys.path`` it searched, from a fresh process started
    in ``/``."""
    try:
        proc = process.run([python, "-c", DESCRIBE], capture_output=True, text=True, cwd=os.sep)
    except OSError:  # not there (a worker without it), not executable
        return f"unusable:{python}", []
    if proc.returncode != 0:
        return f"unusable:{python}", []
    *described, paths = proc.stdout.splitlines()
    return content_key("\n".join(described) + "\n"), json.loads(paths)


def runtime_fingerprint(python: str) -> str:
    """The interpreter as a fresh process of it sees itself (realpath, version, prefix,
    distributions), compared between the driver and a remote worker: what results' keys hold of
    it, and nothing machine-local (the working folder, a ``PYTHONPATH`` of the driver's shell, an
    empty user-site folder), which would make every remote result read "differs"."""
    return describe(python)[0]


def worker_differs(python: str, driver: str) -> str:
    """Why a remote task must not run (its interpreter is not the driver's ``driver``
    fingerprint), or "" (also where no fingerprint was sent: a local task)."""
    if not driver or runtime_fingerprint(python) == driver:
        return ""
    return (
        f"this worker's interpreter {python} differs from the driver's "
        "(version or installed distributions): not run"
    )


class Ahead:
    """``interpreter_fingerprint(python)`` asked in a thread before it is needed (the tests section
    asks it at its start, beside the fidelity check): the run's first call for ``python`` without a
    store takes the answer. ``close`` drops one not taken, so no later run is served it."""

    def __init__(self, python: str) -> None:
        from harness.infra.background import Background

        self.python = python
        self.asked = Background(describe, python)
        _AHEAD[python] = self

    def take(self) -> str:
        try:
            return self.asked.result()[0]
        except Exception:  # noqa: BLE001 - asked again here, where a failure is raised
            return describe(self.python)[0]

    def close(self) -> None:
        if _AHEAD.get(self.python) is self:
            del _AHEAD[self.python]


_AHEAD: dict[str, Ahead] = {}


def interpreter_fingerprint(python: str, store: Store | None = None) -> str:
    """Realpath, version, prefix and installed distributions of an interpreter (a different pytest
    or plugin set is a different key). Always a fresh process started in ``/``. One child process
    per interpreter per run.

    With ``store`` (an enabled cache), the answer is kept beside it (``interpreters/``) with the
    stamps of every ``sys.path`` entry the interpreter searched, and served while none of them
    changed (a warm run then starts no interpreter)."""
    if store is None or not store.enabled:
        ahead = _AHEAD.pop(python, None)
        return ahead.take() if ahead is not None else describe(python)[0]
    records = Cache(store.root.parent, namespace="interpreters")
    key = _stored_under(python)
    hit = records.get(key)
    if (
        isinstance(hit, dict)
        and isinstance(hit.get("paths"), list)
        and all(isinstance(p, list) and len(p) in (2, 3) for p in hit["paths"])
        and all(_still(*entry) for entry in hit["paths"])
    ):
        return str(hit["fingerprint"])
    fingerprint, paths = describe(python)
    stamps = {p: _stamp(p) for p in paths}
    # A folder changed within the last seconds could change again within its mtime's resolution
    # unseen (git's "racy" index entries): it is kept with its listing, which a later run compares
    # too (an environment just built is described once, not again by the next run); a zip changed
    # that recently leaves the answer used, not kept.
    now = time.time_ns()
    entries: list[list[Any]] = []
    keep = not fingerprint.startswith("unusable:")
    for p, st in stamps.items():
        racy = st is not None and now - st[0] <= 2_000_000_000
        listing = _listing(p) if racy else None
        keep = keep and not (racy and listing is None)
        entries.append([p, st] if listing is None else [p, st, listing])
    if keep:
        records.put(key, {"fingerprint": fingerprint, "paths": entries})
    return fingerprint


def _still(path: object, stamp: object, listing: object = None) -> bool:
    """A kept ``sys.path`` entry unchanged: its stamp, and its listing where one was kept."""
    return _stamp(str(path)) == stamp and (listing is None or _listing(str(path)) == listing)


def _listing(path: str) -> str | None:
    """A digest of a folder's entry names (None: not a folder)."""
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return None
    return hashlib.sha1("\0".join(names).encode("utf-8", "surrogateescape")).hexdigest()
