"""The machine a bundle is for: its Python, its platform tags and what it already has installed.

``--target-has FILE``: one ``name==version`` (or a bare ``name``: any version, assumed to do) a
line; ``#`` starts a comment. The default, ``targets/h200-cuda13.txt``, is the lent accelerator's
image as described in the device notes (Python 3.12, torch 2.11.0+cu130, triton 3.6.0, ...).
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import UsageError

DEFAULT_TARGET_HAS = Path(__file__).with_name("targets") / "h200-cuda13.txt"
DEFAULT_PLATFORM = "manylinux_2_39_x86_64"  # Ubuntu 24.04's glibc (the image's Python 3.12.3)

_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+!_-]*")
_PLATFORM = re.compile(r"manylinux_(?P<major>2)_(?P<minor>\d+)_(?P<arch>x86_64|aarch64)")
_PYVER = re.compile(r"3\.(\d+)")
_REQ = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?P<spec>[^;]*)(?:;(?P<marker>.*))?$"
)


def norm(name: str) -> str:
    """PEP 503 normalized distribution name."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass
class Target:
    python_version: str  # "3.12"
    platform: str  # the newest tag the target runs, e.g. manylinux_2_39_x86_64
    has: dict[str, str | None] = field(
        default_factory=dict
    )  # normalized name -> version (None: any)
    has_source: str = ""

    @property
    def platform_tags(self) -> list[str]:
        """Every manylinux tag the target runs, newest first (pip matches tags exactly)."""
        m = _PLATFORM.fullmatch(self.platform)
        assert m, self.platform
        minor, arch = int(m["minor"]), m["arch"]
        tags = [f"manylinux_2_{n}_{arch}" for n in range(minor, 16, -1)]
        return tags + [f"manylinux2014_{arch}", f"manylinux1_{arch}"] if minor >= 17 else tags

    @property
    def abi(self) -> str:
        return "cp" + self.python_version.replace(".", "")


def parse_target_has(text: str, source: str) -> dict[str, str | None]:
    """``name==version`` / ``name`` lines -> {normalized name: version or None}; UsageError on a bad line."""
    has: dict[str, str | None] = {}
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, version = line.partition("==")
        name, version = name.strip(), version.strip()
        if not _NAME.fullmatch(name) or (sep and not _VERSION.fullmatch(version)):
            raise UsageError(
                f"--target-has {source}:{no}: expected name==version or name, got {raw.strip()!r}"
            )
        has[norm(name)] = version or None
    return has


def make_target(python_version: str, platform: str, has_file: Path | None) -> Target:
    """Validate the target options (UsageError on bad input) and read the has-list."""
    if not _PYVER.fullmatch(python_version):
        raise UsageError(f"--python-version {python_version!r}: expected 3.N, e.g. 3.12")
    if not _PLATFORM.fullmatch(platform):
        raise UsageError(
            f"--platform {platform!r}: expected manylinux_2_N_x86_64 or manylinux_2_N_aarch64"
        )
    path = has_file or DEFAULT_TARGET_HAS
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--target-has {path}: cannot read ({exc.__class__.__name__})") from None
    return Target(python_version, platform, parse_target_has(text, str(path)), str(path))


def wheel_requires(wheel: Path) -> list[str]:
    """Requires-Dist lines of a wheel's METADATA."""
    with zipfile.ZipFile(wheel) as zf:
        meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        text = zf.read(meta).decode("utf-8", "replace")
    return [
        line.split(":", 1)[1].strip()
        for line in text.splitlines()
        if line.startswith("Requires-Dist:")
    ]


def exact_pins(requires: list[str]) -> dict[str, str]:
    """``name==version`` pins among Requires-Dist lines that apply without extras."""
    pins: dict[str, str] = {}
    for req in requires:
        m = _REQ.match(req)
        if not m or (m["marker"] and "extra" in m["marker"]):
            continue
        spec = m["spec"].strip().strip("()")
        if spec.startswith("==") and "," not in spec:
            pins[norm(m["name"])] = spec[2:].strip()
    return pins


def _marker_env(target: Target) -> dict[str, str]:
    return {
        "python_version": target.python_version,
        "python_full_version": target.python_version + ".0",
        "sys_platform": "linux",
        "platform_system": "Linux",
        "os_name": "posix",
        "platform_machine": "x86_64" if target.platform.endswith("x86_64") else "aarch64",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "extra": "",
    }


def requirements(requires: list[str], target: Target) -> list[tuple[str, Any]]:
    """(normalized name, SpecifierSet) of the Requires-Dist lines that apply on the target
    without extras."""
    try:
        from packaging.requirements import InvalidRequirement, Requirement
    except ImportError:  # pip always carries a copy
        from pip._vendor.packaging.requirements import (  # type: ignore[assignment]
            InvalidRequirement,
            Requirement,
        )
    env = _marker_env(target)
    out = []
    for line in requires:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if req.marker is not None and not req.marker.evaluate(env):
            continue
        out.append((norm(req.name), req.specifier))
    return out


def required_names(requires: list[str], target: Target) -> list[str]:
    """Normalized names of the Requires-Dist lines that apply on the target without extras."""
    return [name for name, _ in requirements(requires, target)]


def is_pure(wheel_name: str) -> bool:
    """A ``py3-none-any`` (or ``py2.py3-none-any``) wheel: it runs on any Python 3 and platform."""
    return wheel_name.endswith("-none-any.whl")
