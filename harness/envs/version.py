"""The version a git-metadata build step would supply, for a tree exported without ``.git``.

setuptools_scm (``[tool.setuptools_scm] version_file``/``write_to``) and hatch-vcs
(``[tool.hatch.build.hooks.vcs] version-file``) write a version module at build time; a column's
tree has none, so a test importing the package would fail on a missing file, not on the code under
test. Their docs' answer for builds without git metadata is a pretended version
(``SETUPTOOLS_SCM_PRETEND_VERSION``); the harness sets it and writes the version file the build
would have written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from harness.envs.spec import MAX_FILE, _load_toml

_SAFE_REL = re.compile(r"^(?!/)(?!.*(?:^|/)\.\.(?:/|$))[A-Za-z0-9_./-]+\.py$")


@dataclass(frozen=True)
class VersionFile:
    path: str  # tree-relative
    version: str

    def text(self) -> str:
        parts = tuple(int(p) if p.isdigit() else p for p in re.split(r"[.+]", self.version))
        return (
            "# written by harness: the build's version step does not run in an exported tree\n"
            f"__version__ = version = {self.version!r}\n"
            f"__version_tuple__ = version_tuple = {parts!r}\n"
        )


def pep440(described: str) -> str:
    """``git describe --tags --long`` output (``v1.2.3-4-gabc``) as setuptools_scm's default
    scheme writes it: the tag itself on a tagged commit, else the next version's ``.devN+gSHA``
    (a tag that is already a dev release keeps its base: ``9.2.0.dev0-11-gabc`` →
    ``9.2.0.dev11+gabc``)."""
    m = re.match(
        r"^v?(\d+(?:\.\d+)*)((?:\.?(?:a|b|rc|dev|post)\d*)*)-(\d+)-g([0-9a-f]+)$", described.strip()
    )
    if not m:
        return "0.0.0"
    release, suffix, n, sha = m.groups()
    if n == "0":
        return release + suffix
    if ".dev" in suffix or suffix.startswith("dev"):
        return f"{release}.dev{n}+g{sha}"
    parts = release.split(".")
    parts[-1] = str(int(parts[-1]) + 1) if not suffix else parts[-1]
    return f"{'.'.join(parts)}.dev{n}+g{sha}"


def version_file(pyproject: bytes | None, version: str) -> VersionFile | None:
    """The version module the project's build writes, or None when it writes none."""
    if pyproject is None or len(pyproject) > MAX_FILE:
        return None
    doc = _load_toml(pyproject) or {}
    raw_tool = doc.get("tool")
    tool: dict[str, Any] = raw_tool if isinstance(raw_tool, dict) else {}
    scm = tool.get("setuptools_scm")
    path = None
    if isinstance(scm, dict):
        path = scm.get("version_file") or scm.get("write_to")
    hatch = tool.get("hatch")
    if path is None and isinstance(hatch, dict):
        vcs = (((hatch.get("build") or {}).get("hooks") or {}).get("vcs")) or {}
        path = vcs.get("version-file") if isinstance(vcs, dict) else None
    if not isinstance(path, str) or not _SAFE_REL.match(path):
        return None
    return VersionFile(path, version)


def uses_scm(pyproject: bytes | None) -> bool:
    """Whether the project takes its version from git metadata."""
    if pyproject is None:
        return False
    return (
        b"setuptools_scm" in pyproject or b"hatch-vcs" in pyproject or b"versioningit" in pyproject
    )
