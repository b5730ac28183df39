"""Where engine environments live: one venv per (engine, version, runtime), built atomically.

Root: $HARNESS_ENGINE_DIR, else $XDG_CACHE_HOME/harness/engines, else ~/.cache/harness/engines.
An environment counts only once its manifest (``harness-env.json``) exists: builds happen in a
temporary sibling folder that is renamed into place, under a per-environment file lock, so an
interrupted or concurrent build never leaves a half environment behind.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MANIFEST = "harness-env.json"


def engine_root() -> Path:
    """Where engine environments live; refused (exit 2) when it exists but is a link, another user's,
    or group/world-writable: its environments hold code the harness runs."""
    from harness.infra.workarea import ensure_private, user_cache_home

    env = os.environ.get("HARNESS_ENGINE_DIR")
    if env:
        root = Path(env).expanduser().absolute()
    else:
        root = user_cache_home() / "harness" / "engines"
    for folder in ([] if env else [root.parent]) + [root]:
        if os.path.lexists(folder):  # checked, never created here
            ensure_private(folder, "engine directory")
    return root


@dataclass(frozen=True)
class EnvKey:
    engine: str
    version: str
    runtime: str

    @property
    def name(self) -> str:
        return f"{self.engine}-{self.version}-{self.runtime}"

    def __str__(self) -> str:
        return f"{self.engine}=={self.version} ({self.runtime})"


@dataclass
class EngineEnv:
    """A built environment: its folder, interpreter and manifest (what was installed, fingerprint)."""

    key: EnvKey
    path: Path
    manifest: dict[str, Any] = field(default_factory=dict)

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    @property
    def fingerprint(self) -> str:
        return str(self.manifest.get("fingerprint", ""))


class EngineStore:
    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root else engine_root()

    def path_for(self, key: EnvKey) -> Path:
        return self.root / key.name

    def get(self, key: EnvKey) -> EngineEnv | None:
        path = self.path_for(key)
        manifest = _read_manifest(path)
        return EngineEnv(key, path, manifest) if manifest is not None else None

    def list(self) -> list[EngineEnv]:
        if not self.root.is_dir():
            return []
        envs = []
        for child in sorted(self.root.iterdir()):
            manifest = _read_manifest(child)
            if manifest is None:
                continue
            key = EnvKey(manifest["engine"], manifest["version"], manifest["runtime"])
            envs.append(EngineEnv(key, child, manifest))
        return envs

    @contextmanager
    def _lock(self, key: EnvKey) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / f".{key.name}.lock", "w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def build(
        self, key: EnvKey, builder: Callable[[Path], dict[str, Any]], *, rebuild: bool = False
    ) -> tuple[EngineEnv, bool]:
        """Return the environment for ``key``, building it with ``builder(tmpdir) -> manifest``
        when missing. The second value says whether this call built it."""
        with self._lock(key):
            existing = self.get(key)
            if existing and not rebuild:
                return existing, False
            final = self.path_for(key)
            for left in self.root.glob(
                f".{key.name}.building-*"
            ):  # under the key's lock: a killed build's
                shutil.rmtree(left, ignore_errors=True)
            tmp = self.root / f".{key.name}.building-{os.getpid()}"
            try:
                manifest = {
                    "engine": key.engine,
                    "version": key.version,
                    "runtime": key.runtime,
                    **builder(tmp),
                }
                (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
                if final.exists():
                    shutil.rmtree(final)
                os.replace(tmp, final)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            return EngineEnv(key, final, manifest), True


def _read_manifest(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((path / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return (
        data if isinstance(data, dict) and {"engine", "version", "runtime"} <= data.keys() else None
    )
