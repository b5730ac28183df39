"""``sglang_params``: params a column's own code builds, fed to the real SamplingParams of the
sglang version that column pins.

Keys: ``build`` (a ``python`` or ``extract`` probe mapping whose value per row is the params
dict), ``engine`` (``sglang==X``, a pin value, or a mapping column -> spec) or ``engine_pin``
(``{file: PATH in the tree, regex: optional, group 1 = the pin}``), ``vocab`` (default 32000).
Cell: ``<params JSON> → ACCEPTED`` or ``→ ValueError: …``; proofs: the engine's version and the
sampling_params.py file the answer came from.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from harness.engines.params import DEFAULT_VOCAB, check_params
from harness.engines.sglang import ENGINE, probe_script
from harness.engines.store import EngineStore, EnvKey
from harness.engines.versions import parse_spec, version_from_pin
from harness.errors import UsageError
from harness.infra import treefiles
from harness.inputs.yamlpath import MAX_BYTES
from harness.probes.kinds import CellResult, KeyColumn, KindContext, get_kind

KIND = "sglang_params"
VERSION = "2"
FIELDS = ("build", "engine", "engine_pin", "vocab")
BUILD_KINDS = ("python", "extract")


def _build_def(probe: Any, spec: dict[str, Any], fields: Any = None) -> tuple[Any, Any]:
    from harness.inputs.scenario import Fields, ProbeDef

    sub_spec = {k: v for k, v in spec.items() if k != "kind"}
    sub_fields = (
        Fields(fields.owner, {k: v for k, v in fields.items.items() if k != "kind"})
        if fields
        else None
    )
    sub = ProbeDef(
        id=f"{probe.id}.build",
        kind=spec["kind"],
        rows=probe.rows,
        timeout=probe.timeout,
        spec=sub_spec,
        fields=sub_fields,
        base_dir=probe.base_dir,
        where=probe.where,
    )
    return sub, sub_fields


def validate(probe: Any, fields: Any) -> None:
    bf = fields.req("build").map(required=("kind",))
    kind = bf.req("kind").str(BUILD_KINDS)
    sub, sub_fields = _build_def(probe, bf.plain(), bf)
    kmod = get_kind(kind)
    allowed = set(kmod.FIELDS) | {"kind"}
    for k in bf:
        if k not in allowed:
            raise bf.req(k).error(
                f"unknown key for a {kind} build (allowed: {', '.join(sorted(allowed))})"
            )
    kmod.validate(sub, sub_fields)
    probe.spec["build"] = {"kind": kind, **sub.spec}
    if ("engine" in fields) == ("engine_pin" in fields):
        raise fields.owner.error("give exactly one of engine or engine_pin")
    if "engine" in fields:
        ev = fields.req("engine")
        specs = ev.map().plain() if ev.is_map() else {"*": ev.str()}
        for name, s in specs.items():
            try:
                parse_spec(s if "==" in str(s) else f"sglang=={s}")
            except Exception as exc:
                raise ev.error(f"{name}: {exc}") from None
    else:
        pf = fields.req("engine_pin").map(allowed=("file", "regex"), required=("file",))
        pf.req("file").str()
        if "regex" in pf:
            try:
                re.compile(pf.req("regex").str())
            except re.error as exc:
                raise pf.req("regex").error(f"bad regex: {exc}") from None
    if "vocab" in fields:
        fields.req("vocab").int(minimum=1)


def inputs(probe: Any) -> list[Path]:
    sub, _ = _build_def(probe, probe.spec["build"])
    kmod = get_kind(sub.kind)
    files = list(kmod.inputs(sub)) if hasattr(kmod, "inputs") else []
    from harness.engines import params  # how outcomes are read back shapes the cells

    return [*files, probe_script("sglang_params_check.py"), Path(params.__file__)]


def engine_key(spec: dict[str, Any], column: KeyColumn) -> dict[str, Any]:
    """The engine this column resolves to, as far as it is known before its tree is written: the
    version an ``engine`` mapping gives this column, or the blob of the ``engine_pin`` file at the
    column's commit (edits are in the column's own key part)."""
    if "engine" in spec:
        e = spec["engine"]
        raw = e.get(column.name, e.get("*")) if isinstance(e, dict) else e
        if raw is None:
            return {"engine": None}
        try:
            return {"engine": "==".join(parse_spec(raw if "==" in str(raw) else f"sglang=={raw}"))}
        except UsageError:
            return {"engine": str(raw)}
    pin = spec["engine_pin"]
    blob = column.repo.object_at(column.commit_sha, pin["file"])
    return {"engine_pin": pin["file"], "regex": pin.get("regex"), "blob": blob}


def key_parts(probe: Any, column: KeyColumn) -> dict[str, Any]:
    return {**engine_key(probe.spec, column), "runtime": "params"}


def used(version: str, runtime: str, fingerprint: str) -> dict[str, str]:
    """What an engine cell ran against, kept with the cell so a later hit can be checked."""
    return {"engine": ENGINE, "version": version, "runtime": runtime, "fingerprint": fingerprint}


def reuse(probe: Any, cell: CellResult) -> bool:
    """A cached engine cell is served only while the environment it ran in has the same fingerprint
    (cells that never reached an engine, e.g. a failed build, are measured again)."""
    u = cell.used
    if not u.get("fingerprint"):
        return False
    env = EngineStore().get(
        EnvKey(u.get("engine", ENGINE), u.get("version", ""), u.get("runtime", ""))
    )
    return env is not None and env.fingerprint == u["fingerprint"]


def engine_version(spec: dict[str, Any], column: str, tree: Path) -> tuple[str | None, str]:
    """The version this column pins, and where it came from (or why none was found)."""
    if "engine" in spec:
        e = spec["engine"]
        raw = e.get(column, e.get("*")) if isinstance(e, dict) else e
        if raw is None:
            return None, f"engine: no entry for column {column!r}"
        return parse_spec(raw if "==" in str(raw) else f"sglang=={raw}")[1], "engine key"
    pin = spec["engine_pin"]
    # The pin file is the reviewed repository's: read as a regular file inside the tree (never
    # through a link), and not at all past the YAML limit.
    try:
        data = treefiles.read(tree, str(pin["file"]), limit=MAX_BYTES)
    except treefiles.TreePathError as exc:
        if "no such file" in str(exc):
            return None, f"engine_pin: {pin['file']} not in this column's tree"
        return None, f"engine_pin: {exc}"
    except OSError as exc:
        return None, f"engine_pin: {pin['file']}: {exc.strerror or exc}"
    if len(data) > MAX_BYTES:
        return None, f"engine_pin: {pin['file']} not read: over {MAX_BYTES} bytes"
    text = data.decode("utf-8", "replace")
    if pin.get("regex"):
        m = re.search(pin["regex"], text)
        value = m.group(1) if m and m.groups() else m.group(0) if m else None
        found = version_from_pin(value) if value else None
    else:
        # The whitespace-separated words naming sglang (what ``\S*sglang\S*`` finds, without its
        # quadratic backtracking over a long word that does not).
        found = next(
            (v for v in (version_from_pin(t) for t in text.split() if "sglang" in t) if v), None
        )
    return (
        (found, f"{pin['file']}")
        if found
        else (None, f"engine_pin: no sglang version in {pin['file']}")
    )


def run(ctx: KindContext) -> list[CellResult]:
    spec = ctx.probe.spec
    sub, _ = _build_def(ctx.probe, spec["build"])
    sub_ctx = KindContext(
        sub, ctx.rows, ctx.column, ctx.tree, ctx.python, ctx.repo, ctx.scratch, ctx.env
    )
    built = get_kind(sub.kind).run(sub_ctx)
    version, source = engine_version(spec, ctx.column.name, Path(ctx.tree.path))
    if version is None:
        return [CellResult(None, "error", source, b.proof) for b in built]
    idx = [i for i, b in enumerate(built) if b.status == "ok" and isinstance(b.value, dict)]
    out = [
        b
        if b.status != "ok"
        else CellResult(
            None, "error", f"build returned {type(b.value).__name__}, not a params mapping", b.proof
        )
        for b in built
    ]
    if not idx:
        return out
    try:
        run_ = check_params(
            version, [built[i].value for i in idx], vocab=int(spec.get("vocab", DEFAULT_VOCAB))
        )
    except Exception as exc:  # engine env could not be built or run: the cells say so
        return [
            CellResult(None, "error", f"sglang=={version}: {exc}".splitlines()[0], built[i].proof)
            if i in idx
            else out[i]
            for i in range(len(built))
        ]
    proof = {
        "engine": f"sglang=={run_.version_proof} ({source})",
        "engine sampling_params.py": run_.module_file,
        "engine fingerprint": run_.fingerprint[:12],
    }
    for i, o in zip(idx, run_.outcomes, strict=False):
        value = f"{json.dumps(o.params, sort_keys=True)} → {o.outcome}"
        out[i] = CellResult(
            value,
            "ok",
            "" if run_.proof_ok else "engine proof mismatch",
            {**built[i].proof, **proof},
            used(version, "params", run_.fingerprint),
        )
    return out
