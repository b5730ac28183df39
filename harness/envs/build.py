"""Build (or reuse) the virtual environment of an ``EnvSpec`` under ``<cache>/envs/<key>``.

Made with the one installer choice (``installer.choose``: uv, else the standard library's venv
with pip in it and the harness's pip installing). An environment is used only once its marker
(written last) says what it holds; a half-built one (a killed build) is removed and built again.
Concurrent runs wait on one lock per key. A requirement that does not build here (a package that
needs a system library, e.g. gssapi without krb5) is left out, with what pulled it in, and the
rest installed, as a reviewer does by hand (at most ``MAX_LEFT_OUT``; the note says which). A build
that fails otherwise raises ``EnvError`` with the installer's own line: the tests section turns it
into ``env-error`` cells, never a pass.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import sys
from pathlib import Path

from harness.envs import installer as installers
from harness.envs import venv
from harness.envs.fingerprint import interpreter_version
from harness.envs.interpreter import Env
from harness.envs.spec import EnvSpec, requirement_name
from harness.envs.step import EnvError
from harness.infra import progress, workarea

BUILD_TIMEOUT_S = 900
MARKER = "harness-env.json"
MAX_LEFT_OUT = 3  # requirements left out of one environment because something they need won't build

__all__ = ["BUILD_TIMEOUT_S", "MARKER", "Env", "EnvError", "ensure_env", "envs_root"]


def envs_root() -> Path:
    """``<cache>/envs`` (the cache checked private first)."""
    from harness.infra.cache import cache_dir

    root = cache_dir() / "envs"
    root.mkdir(mode=0o700, exist_ok=True)
    return root


def ensure_env(spec: EnvSpec, base_python: str = sys.executable) -> Env:
    """The environment of ``spec`` made from ``base_python``, built on first use."""
    key = spec.key(interpreter_version(base_python))
    root = envs_root()
    target = root / key
    with open(root / f"{key}.lock", "a+") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        python = venv.python_in(target)
        meta = _marker(target)
        if _ready(target, meta, spec):
            os.utime(target / MARKER)  # recently used: gc keeps it
            left = meta.get("left_out")
            return Env(
                str(python),
                "reused",
                key,
                str(meta.get("installer", "")),
                str(meta.get("note", "")),
                tuple(str(x) for x in left) if isinstance(left, list) else (),
            )
        shutil.rmtree(target, ignore_errors=True)  # half-built by a killed run, or stale
        installer, note, left_out = _build(spec, base_python, target)
        return Env(str(python), "built", key, installer, note, tuple(left_out))


def _marker(target: Path) -> dict[str, object]:
    try:
        meta = json.loads((target / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _ready(target: Path, meta: dict[str, object], spec: EnvSpec) -> bool:
    return (
        meta.get("requirements") == spec.requirements
        and meta.get("as_of", "") == spec.as_of
        and venv.python_in(target).exists()
    )


def _build(spec: EnvSpec, base_python: str, dest: Path) -> tuple[str, str, list[str]]:
    """Create the venv at ``dest`` (where it will live; the marker, written last, makes it usable)
    and install the spec: what was uploaded by ``spec.as_of`` where one is given, else (or where
    that cannot be installed: an index that gives no upload times, an old release's pins with no
    build for this Python) the newest, said in the returned note; a requirement whose package (or
    one it needs) does not build here is left out, with why. Returns (installer, note, left out)."""
    using = installers.choose()
    tmp = workarea.mkdtemp("harness-env-")
    wanted = list(spec.requirements)
    left: list[str] = []
    try:
        while True:
            try:
                note = _install(spec, wanted, base_python, dest, using, tmp)
                break
            except EnvError as exc:
                drop = unbuildable(exc.output, wanted)
                if drop is None or len(left) >= MAX_LEFT_OUT:
                    raise
                requirement, why = drop
                wanted.remove(requirement)
                left.append(f"{requirement} ({why})")
                # (which package failed is said here only: where several fail, uv names the one
                # it built first, which varies; the report names the requirement)
                progress.note(f"environment: left out {requirement}: {exc}"[:400])
                shutil.rmtree(dest, ignore_errors=True)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    (dest / MARKER).write_text(
        json.dumps(
            {
                "requirements": spec.requirements,
                "left_out": sorted(left),
                "sources": spec.sources,
                "installer": using.name,
                "as_of": spec.as_of,
                "note": note,
            },
            sort_keys=True,
        ),
        encoding="utf-8",
    )
    return using.name, note, sorted(left)


def _install(
    spec: EnvSpec,
    wanted: list[str],
    base_python: str,
    dest: Path,
    using: installers.Installer,
    tmp: Path,
) -> str:
    """Install ``wanted`` into a new venv at ``dest``, dated by ``spec.as_of`` (the newest where
    nothing by then installs); the note says what was not as asked."""
    reqs = tmp / "requirements.txt"
    reqs.write_text("\n".join(wanted) + "\n", encoding="utf-8")
    pins: list[str] = []
    if spec.constraints:
        (tmp / "constraints.txt").write_text("\n".join(spec.constraints) + "\n", encoding="utf-8")
        pins = ["-c", str(tmp / "constraints.txt")]
    limit = installers.as_of_args(using, spec.as_of) if spec.as_of else []
    note = "" if limit is not None else f"packages not limited to {spec.as_of}: {_NO_LIMIT}"
    try:
        _fill(dest, base_python, using, ["-r", str(reqs), *pins, *(limit or [])])
    except EnvError as exc:
        # only what the date decides (nothing by then satisfies the pins, or what there was
        # does not build here); a network error or a timeout stays this run's error
        if not limit or not _DATED_MISS.search(exc.output or str(exc)):
            raise
        note = f"packages as of {spec.as_of} could not be installed ({exc}): the newest were"
        shutil.rmtree(dest, ignore_errors=True)
        _fill(dest, base_python, using, ["-r", str(reqs), *pins])
    return note


# uv: "Failed to build `gssapi==1.9.0`"; pip: "Failed building wheel for gssapi", "ERROR: Failed to
# build 'gssapi' when …", "Failed to build installable wheels for some pyproject.toml based projects
# (gssapi)". (tests/envs/data holds the installers' own words.)
_FAILED_BUILD = re.compile(
    r"Failed to build:? `([A-Za-z0-9][A-Za-z0-9._-]*)"
    r"|Failed building wheel for ([A-Za-z0-9][A-Za-z0-9._-]*)"
    r"|Failed to build installable wheels for some \S+ based projects \(([^)]*)\)"
    r"|^ERROR: Failed to build (?!installable wheels)'?([A-Za-z0-9][A-Za-z0-9._-]*)",
    re.MULTILINE,
)
_INCLUDED = re.compile(
    r"`([A-Za-z0-9][A-Za-z0-9._-]*)[^`]*` \(v[^)]*\) was included because (.*)$", re.MULTILINE
)
_NAMED = re.compile(r"`([A-Za-z0-9][A-Za-z0-9._-]*)")


def unbuildable(output: str, wanted: list[str]) -> tuple[str, str] | None:
    """The requirement of ``wanted`` to leave out where the install failed building a package:
    the package itself where it is one, else the one uv names as what pulled it in; with why (the
    failed package is not named: of several, which one uv names varies between runs).
    None where the output names no failed build, or nothing of ``wanted`` to leave out."""
    m = _FAILED_BUILD.search(output)
    if m is None:
        return None
    failed = next(g for g in m.groups() if g).split(",")[0].strip()
    by_name = {requirement_name(r): r for r in wanted}
    if requirement_name(failed) in by_name:
        return by_name[requirement_name(failed)], "does not build here"
    for inc in _INCLUDED.finditer(output):
        if requirement_name(inc.group(1)) != requirement_name(failed):
            continue
        for name in _NAMED.findall(inc.group(2)):
            if requirement_name(name) in by_name:
                return by_name[requirement_name(name)], "a package it needs does not build here"
    return None


_NO_LIMIT = "this pip has no --uploaded-prior-to (install uv, or a newer pip, for it)"
_DATED_MISS = re.compile(
    r"No solution found when resolving|Could not find a version that satisfies"
    r"|No matching distribution found|ResolutionImpossible|Failed to build|Failed building wheel"
)


def _fill(dest: Path, base_python: str, using: installers.Installer, args: list[str]) -> None:
    # pip's venv keeps pip (and what ensurepip brings) in the environment, as it always had
    py = venv.create(dest, base_python, using=using, with_pip=True, timeout=BUILD_TIMEOUT_S)
    installers.install(py, args, using=using, timeout=BUILD_TIMEOUT_S)
