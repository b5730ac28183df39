"""``harness engine bundle``: the wheels a ``gpu`` engine needs on a machine that reaches no index.

What goes in (``pip download --no-deps --only-binary=:all:`` for the target's Python and platform):
- the sglang wheel itself;
- every distribution the engine path imports (``engine_path.LOCKS``, measured), at sglang's own
  ``==`` pin when it has one, else at the traced version; left out when the target has it, except
  a pure-python one whose known version on the target breaks sglang's pin (then the pinned one ships
  and shadows the target's; a binary one is left out with the mismatch recorded);
- ``engine_path.FIT_OR_STANDIN`` (xgrammar, flashinfer, sgl_kernel): the real wheel when it fits
  what is left of ``--max-size``, else a STAND-IN wheel (``standin_wheel.py``) and the engine
  switches that keep the engine off it (``grammar_backend="none"``, the torch-native attention and
  sampling backends, no CUDA graphs, ``STANDIN_ENV``);
- ``engine_path.OPTIONAL`` never ships: imported only behind try/except or availability checks.
A package with no wheel (sdist only) is built here with ``pip wheel --no-deps`` and shipped only
when that gives a pure ``py3-none-any`` wheel.

``bundle.json`` lists every file (size, sha256, role), what was left out and why, and how to
install. The bundle is built in a temporary sibling and renamed into ``--out`` only when it fits.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.engines.engine_path import FIT_OR_STANDIN, OPTIONAL, lock_for
from harness.engines.standin_wheel import build_standin_wheel
from harness.engines.target import (
    Target,
    exact_pins,
    is_pure,
    norm,
    required_names,
    requirements,
    wheel_requires,
)
from harness.errors import HarnessError, UsageError
from harness.infra import process, workarea

MANIFEST = "bundle.json"
SCHEMA = "harness.engine-bundle/1"
MIB = 2**20
DEFAULT_MAX_MIB = 60.0
PIP_TIMEOUT_S = 900
# With a stand-in sgl_kernel the engine must keep off its kernels: real sglang switches.
STANDIN_ENV = {
    "SGLANG_SKIP_SGL_KERNEL_VERSION_CHECK": "1",
    "SGLANG_FORCE_FUSED_OP_BACKEND": "torch",
}
_MANIFEST_ALLOWANCE = 64 * 1024  # room kept for bundle.json when deciding whether a kernel fits
# Never shipped to shadow the target's copy (size, and binaries built against each other).
NEVER_SHIP = {"torch", "triton", "torchvision", "torchaudio", "numpy"}

Log = Callable[[str], None]


def _pip(
    args: list[str], log: Log, timeout: float = PIP_TIMEOUT_S
) -> process.CompletedProcess[str]:
    cmd = process.own_module("pip", "--disable-pip-version-check", *args)
    tags = [a for a in args if a.startswith("manylinux")]
    shown = re.sub(
        r"(--platform \S+ )+", f"--platform <{tags[0] if tags else ''} and older> ", " ".join(args)
    )
    log("$ pip " + shown)
    return process.run(cmd, stdout=process.PIPE, stderr=process.STDOUT, text=True, timeout=timeout)


def _target_flags(target: Target) -> list[str]:
    flags = [
        "--only-binary=:all:",
        "--python-version",
        target.python_version,
        "--implementation",
        "cp",
    ]
    for tag in target.platform_tags:
        flags += ["--platform", tag]
    return flags


def _wheels(folder: Path) -> set[str]:
    return {p.name for p in folder.glob("*.whl")}


def _name_version(wheel: str) -> tuple[str, str]:
    parts = wheel.split("-")
    return norm(parts[0]), parts[1]


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def download(target: Target, specs: list[str], dest: Path, log: Log) -> dict[str, str]:
    """Download ``specs`` (``name==version``) into ``dest``; {spec: wheel file}. One pip call for all,
    then one per spec only if that fails; a spec with no wheel goes through ``_from_sdist``."""
    got: dict[str, str] = {}
    if not specs:
        return got
    before = _wheels(dest)
    proc = _pip(
        ["download", "--no-deps", "-q", "-d", str(dest), *_target_flags(target), *specs], log
    )
    if proc.returncode == 0:
        by_name = {_name_version(w)[0]: w for w in _wheels(dest) - before}
        for spec in specs:
            name = norm(spec.split("==")[0])
            if name not in by_name:
                raise HarnessError(f"pip download gave no wheel for {spec}")
            got[spec] = by_name[name]
        return got
    for spec in specs:
        before = _wheels(dest)
        one = _pip(
            ["download", "--no-deps", "-q", "-d", str(dest), *_target_flags(target), spec], log
        )
        new = _wheels(dest) - before
        got[spec] = (
            new.pop() if one.returncode == 0 and new else _from_sdist(spec, dest, log, one.stdout)
        )
    return got


def _from_sdist(spec: str, dest: Path, log: Log, why: str) -> str:
    """No wheel for the target: build one from the sdist; only a pure-python result is accepted."""
    with workarea.temp_dir("harness-sdist-") as tmp:
        proc = _pip(["download", "--no-deps", "--no-binary=:all:", "-q", "-d", tmp, spec], log)
        sdists = list(Path(tmp).iterdir())
        if proc.returncode != 0 or not sdists:
            tail = (why.strip().splitlines() or ["?"])[-1]
            raise HarnessError(f"{spec}: no wheel for the target and no sdist ({tail})")
        built = Path(tmp) / "built"
        proc = _pip(["wheel", "--no-deps", "-q", "-w", str(built), str(sdists[0])], log)
        wheels = list(built.glob("*.whl")) if built.is_dir() else []
        if proc.returncode != 0 or not wheels:
            raise HarnessError(f"{spec}: no wheel for the target and its sdist did not build")
        if not is_pure(wheels[0].name):
            raise HarnessError(
                f"{spec}: no wheel for the target; its sdist builds a binary wheel "
                f"({wheels[0].name}), which would not run there"
            )
        shutil.move(str(wheels[0]), dest / wheels[0].name)
        return wheels[0].name


def _index_wheels(name: str, version: str, timeout: float = 30) -> list[dict[str, Any]] | None:
    """The index's wheel files of name==version (JSON simple API, PEP 691/700), or None when the
    index does not answer. Lets the bundle decide on a large wheel before downloading it."""
    import urllib.request  # only here: ~20 ms of imports that every other verb would pay

    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
    req = urllib.request.Request(
        f"{index}/{norm(name)}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            files = json.load(resp).get("files", [])
    except (OSError, ValueError):
        return None
    stem = f"{norm(name).replace('-', '_')}-{version}-".lower()
    return [
        f
        for f in files
        if f.get("filename", "").endswith(".whl") and f["filename"].lower().startswith(stem)
    ]


def index_wheel(name: str, version: str, target: Target) -> dict[str, Any] | None:
    """The index's entry for the wheel of name==version the target would take (size, url), or None."""
    for f in _index_wheels(name, version) or []:
        py, abi, plat = f["filename"][:-4].split("-")[-3:]
        if any(t in plat.split(".") for t in [*target.platform_tags, "any"]) and abi in (
            "none",
            "abi3",
            target.abi,
        ):
            return f
    return None


def has_pure_wheel(name: str, version: str) -> bool:
    """Whether the index has a ``-none-any`` wheel of name==version (asked before downloading one)."""
    return any(is_pure(f["filename"]) for f in _index_wheels(name, version) or [])


def _ship_what_shipped_wheels_need(
    target: Target,
    folder: Path,
    files: list[dict[str, Any]],
    left_out: list[dict[str, str]],
    lock: dict[str, str],
    log: Log,
) -> None:
    """A shipped wheel may refuse the target's copy of a dependency (transformers 5.12.1 wants
    tokenizers<=0.23.0; the image has 0.23.2): ship the traced version instead when it satisfies
    the requirement, else record the mismatch. Repeats for what it ships in turn."""
    seen: set[str] = set()
    for _ in range(5):
        shipped = {_name_version(f["file"])[0] for f in files}
        need: dict[str, str] = {}
        for f in files:
            if f["role"] == "sglang" or f["file"] in seen:
                continue
            seen.add(f["file"])
            for name, spec in requirements(wheel_requires(folder / f["file"]), target):
                have = target.has.get(name)
                if (
                    not have
                    or name in shipped
                    or name in need
                    or spec.contains(have, prereleases=True)
                ):
                    continue
                by, by_version = _name_version(f["file"])
                why = f"target has {name}=={have}; {by} {by_version} requires {name}{spec}"
                traced = lock.get(name)
                if (
                    name in NEVER_SHIP
                    or name.startswith("nvidia-")
                    or not traced
                    or not spec.contains(traced, True)
                ):
                    left_out.append(
                        {
                            "name": name,
                            "version": traced or "",
                            "reason": why + ": the target's is used (mismatch)",
                        }
                    )
                    shipped.add(name)
                    continue
                need[f"{name}=={traced}"] = why + f": shipped the traced {traced}"
        if not need:
            return
        for spec_, wheel in download(target, sorted(need), folder, log).items():
            files.append({"file": wheel, "role": "dependency", "why": need[spec_]})


def _no_sglang_wheel(version: str, target: Target) -> str:
    """Why pip found no sglang wheel: no such release, or none for this Python and platform."""
    wheels = _index_wheels("sglang", version)
    if wheels is None:
        return (
            f"sglang=={version}: pip found no wheel for {target.abi} on {target.platform} or older"
        )
    if not wheels:
        return f"sglang=={version}: the index has no wheel of that version"
    parts = [f["filename"][:-4].split("-") for f in wheels]
    pys, plats = sorted({p[-3] for p in parts}), sorted({p[-1] for p in parts})
    return (
        f"sglang=={version}: no wheel for {target.abi} on {target.platform} or older "
        f"(the index has {', '.join(pys)} on {', '.join(plats)})"
    )


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.iterdir() if p.is_file())


def check_out_dir(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"--out {out}: exists and is not an empty folder")
    if not out.parent.is_dir():
        raise UsageError(f"--out {out}: parent folder {out.parent} does not exist")


def build_bundle(
    version: str, target: Target, out: Path, *, max_bytes: int, log: Log
) -> dict[str, Any]:
    """Download and write the bundle for sglang==version into ``out`` (see module docstring)."""
    check_out_dir(out)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
    tmp.chmod(0o755)
    try:
        manifest = _fill(version, target, tmp, max_bytes, log)
        total = manifest["total_bytes"]
        if total > max_bytes:
            raise UsageError(
                f"bundle for sglang=={version} is {total / MIB:.1f} MiB, over --max-size "
                f"{max_bytes / MIB:g} MiB: nothing written"
            )
        if out.exists():
            out.rmdir()
        os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return manifest


def _fill(version: str, target: Target, folder: Path, max_bytes: int, log: Log) -> dict[str, Any]:
    """Download the bundle's wheels into ``folder`` and write its manifest; returns the manifest."""
    files: list[dict[str, Any]] = []
    left_out: list[dict[str, str]] = []
    notes: list[str] = []
    sglang_wheel = _download_sglang(version, target, folder, log)
    files.append({"file": sglang_wheel, "role": "sglang"})
    pins = exact_pins(wheel_requires(folder / sglang_wheel))
    lock_version, lock = lock_for(version)
    if lock_version != version:
        notes.append(
            f"no import trace for {version}: used the {lock_version} lock with {version}'s own pins"
        )
    ship, if_pure = _dependencies(lock, pins, target, left_out)
    for wheel in download(target, ship, folder, log).values():
        files.append({"file": wheel, "role": "dependency"})
    for spec, wheel in download(target, sorted(if_pure), folder, log).items():
        files.append(
            {"file": wheel, "role": "dependency", "why": if_pure[spec] + ": shipped (pure python)"}
        )
    _ship_what_shipped_wheels_need(target, folder, files, left_out, lock, log)
    standins: dict[str, str] = {}
    engine_kwargs: dict[str, Any] = {}
    for name, (package, source, kwargs) in FIT_OR_STANDIN.items():
        want = pins.get(name) or lock.get(name, "")
        why = _fit(name, want, target, folder, max_bytes, files, notes, log)
        if why is None:
            continue
        standin = build_standin_wheel(package, folder, name, Path(__file__).with_name(source))
        files.append({"file": standin.name, "role": "standin", "why": why})
        standins[package] = why
        engine_kwargs.update(kwargs)
        left_out.append(
            {"name": name, "version": want, "reason": why + ": STAND-IN shipped instead"}
        )
    _describe_files(folder, files)
    requirements = [f"{f['name']}=={f['version']}" for f in files]
    manifest: dict[str, Any] = {
        "schema": SCHEMA,
        "engine": "sglang",
        "version": version,
        "runtime": "gpu",
        "target": {
            "python_version": target.python_version,
            "platform": target.platform,
            "platform_tags": target.platform_tags,
            "has_source": target.has_source,
            "has_count": len(target.has),
        },
        "lock": lock_version,
        "files": files,
        "left_out": sorted(left_out, key=lambda x: x["name"]),
        "standins": standins,
        "notes": notes,
        "engine_env": STANDIN_ENV if "sgl_kernel" in standins else {},
        "engine_kwargs": engine_kwargs,
        "requirements": requirements,
        "install": "pip install --no-index --find-links DIR --no-deps " + " ".join(requirements),
        "max_bytes": max_bytes,
    }
    _write_manifest(folder, manifest)
    return manifest


def _download_sglang(version: str, target: Target, folder: Path, log: Log) -> str:
    """The sglang wheel's file name, downloaded into ``folder`` for ``target``."""
    before = _wheels(folder)
    proc = _pip(
        [
            "download",
            "--no-deps",
            "-q",
            "-d",
            str(folder),
            *_target_flags(target),
            f"sglang=={version}",
        ],
        log,
    )
    new = _wheels(folder) - before
    if proc.returncode != 0 or not new:
        raise UsageError(_no_sglang_wheel(version, target))
    return new.pop()


def _dependencies(
    lock: dict[str, str], pins: dict[str, str], target: Target, left_out: list[dict[str, str]]
) -> tuple[list[str], dict[str, str]]:
    """What the lock's packages need shipped (``name==version``), and the pure-python ones shipped
    over a mismatched target version (spec → why); what is not shipped goes to ``left_out``."""
    ship: list[str] = []
    if_pure: dict[str, str] = {}
    for name, traced in sorted(lock.items()):
        if name in FIT_OR_STANDIN or name == "sglang":
            continue
        if name in OPTIONAL:
            left_out.append(
                {
                    "name": name,
                    "version": pins.get(name, traced),
                    "reason": "optional: " + OPTIONAL[name],
                }
            )
            continue
        want = pins.get(name, traced)
        if name in target.has:
            has = target.has[name]
            if name in pins and has and has != pins[name]:
                why = f"target has {name}=={has}, sglang pins =={pins[name]}"
                if has_pure_wheel(name, want):
                    if_pure[f"{name}=={want}"] = why
                else:
                    left_out.append(
                        {
                            "name": name,
                            "version": want,
                            "reason": why + ": not pure python, the target's is used (mismatch)",
                        }
                    )
                continue
            why = f"target has {name}" + (
                f"=={has}" if has else " (version not read: assumed to do)"
            )
            left_out.append({"name": name, "version": want, "reason": why})
        else:
            ship.append(f"{name}=={want}")
    return ship, if_pure


def _fit(
    name: str,
    want: str,
    target: Target,
    folder: Path,
    max_bytes: int,
    files: list[dict[str, Any]],
    notes: list[str],
    log: Log,
) -> str | None:
    """Ship the real ``name==want`` when it fits under the budget and what it needs is there (None),
    else why a stand-in goes instead."""
    left = max_bytes - _folder_bytes(folder) - _MANIFEST_ALLOWANCE
    entry = index_wheel(name, want, target) if want else None
    size = entry.get("size") if entry else None
    if size is None:
        return f"{name}=={want}: no wheel size from the index for this target"
    if size > left:
        return f"{name}=={want}: {size / MIB:.1f} MiB wheel, {max(left, 0) / MIB:.1f} MiB left under --max-size"
    # It fits: download it (bounded by the budget) and read what it needs.
    wheel_name = download(target, [f"{name}=={want}"], folder, log)[f"{name}=={want}"]
    shipped = {_name_version(f["file"])[0] for f in files}
    needs = set(required_names(wheel_requires(folder / wheel_name), target))
    unmet = sorted(needs - set(target.has) - shipped - {"sglang"})
    if not unmet:
        files.append({"file": wheel_name, "role": "fits"})
        if name == "sglang-kernel":
            notes.append(
                f"real {name}=={want}: built against sglang's torch pin; the target's torch must match"
            )
        return None
    (folder / wheel_name).unlink()
    return f"{name}=={want}: needs {', '.join(unmet)}, which neither the target nor the bundle has"


def _describe_files(folder: Path, files: list[dict[str, Any]]) -> None:
    """Each file's name, version, size and sha256; sorted by name."""
    for f in files:
        path = folder / f["file"]
        f["name"], f["version"] = _name_version(f["file"])
        f["size"], f["sha256"] = path.stat().st_size, _sha256(path)
    files.sort(key=lambda f: f["name"])


def _write_manifest(folder: Path, manifest: dict[str, Any]) -> None:
    """Write bundle.json with ``total_bytes`` set, which counts bundle.json itself (whose size
    depends on the total's digits)."""
    manifest["total_bytes"] = 0
    for _ in range(4):
        (folder / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        if manifest["total_bytes"] == _folder_bytes(folder):
            break
        manifest["total_bytes"] = _folder_bytes(folder)


def read_bundle(folder: Path, version: str | None = None) -> dict[str, Any]:
    """The manifest of a bundle folder, with every listed file present and matching its sha256
    (UsageError otherwise); ``version`` must match when given."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        raise UsageError(
            f"--from-bundle {folder}: no readable {MANIFEST} (build one with `harness engine bundle`)"
        ) from None
    if not isinstance(manifest, dict) or manifest.get("schema") != SCHEMA:
        raise UsageError(f"--from-bundle {folder}: {MANIFEST} is not a {SCHEMA} manifest")
    if version is not None and manifest.get("version") != version:
        raise UsageError(
            f"--from-bundle {folder}: bundle is for sglang=={manifest.get('version')}, not {version}"
        )
    for f in manifest.get("files", []):
        path = folder / f["file"]
        if not path.is_file() or path.stat().st_size != f["size"] or _sha256(path) != f["sha256"]:
            raise UsageError(
                f"--from-bundle {folder}: {f['file']} is missing or differs from {MANIFEST}"
            )
    return manifest
