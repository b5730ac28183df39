"""``sglang_n``: n>1 behaviour of the real sglang Engine at the version a column pins.

Keys: ``engine`` or ``engine_pin`` (as in ``sglang_params``), ``runtime`` (``cpu``, default, or ``gpu``
on a machine with one).
Rows: ``{question: [distinct_ids, abort_caller, abort_choices, cancel_midstream, state_left]}``.
One engine start per column answers every row (the tiny dummy-weight Llama of
``harness.engines.nprobe``); proofs: the engine version, env fingerprint and the sgl_kernel
stand-in the cpu runtime uses.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.engines.nprobe import QUESTIONS, answers, run_n_probe
from harness.engines.sglang import probe_script
from harness.probes.kinds import CellResult, KeyColumn, KindContext
from harness.probes.kinds import sglang_params as sp

KIND = "sglang_n"
VERSION = "2"
reuse = sp.reuse
FIELDS = ("engine", "engine_pin", "runtime")


def validate(probe: Any, fields: Any) -> None:
    if ("engine" in fields) == ("engine_pin" in fields):
        raise fields.owner.error("give exactly one of engine or engine_pin")
    if "runtime" in fields:
        fields.req("runtime").str(("cpu", "gpu"))
    for row in probe.rows:
        if row.get("question") not in QUESTIONS:
            raise fields.owner.error(f"each row needs question: one of {', '.join(QUESTIONS)}")


def inputs(probe: Any) -> list[Path]:
    from harness.engines import nprobe  # its request and answers() shape the cells

    return [probe_script("sglang_n_probe.py"), Path(nprobe.__file__)]


def key_parts(probe: Any, column: KeyColumn) -> dict[str, Any]:
    return {**sp.engine_key(probe.spec, column), "runtime": probe.spec.get("runtime", "cpu")}


def run(ctx: KindContext) -> list[CellResult]:
    version, source = sp.engine_version(ctx.probe.spec, ctx.column.name, Path(ctx.tree.path))
    if version is None:
        return [CellResult(None, "error", source) for _ in ctx.rows]
    runtime = ctx.probe.spec.get("runtime", "cpu")
    try:
        raw = run_n_probe(version, runtime=runtime, timeout=max(ctx.probe.timeout, 600))
    except Exception as exc:  # env build or engine start failed: every cell says why
        return [
            CellResult(None, "error", f"sglang=={version} ({runtime}): {exc}".splitlines()[0])
            for _ in ctx.rows
        ]
    got = answers(raw)
    proof = {
        "engine": f"sglang=={raw['version']} ({source}, {runtime})",
        "engine fingerprint": str(raw.get("fingerprint", ""))[:12],
    }
    if runtime == "cpu":
        proof["engine stand-in"] = "sgl_kernel (harness/engines/sgl_kernel_standin.py)"
    used = sp.used(version, runtime, str(raw.get("fingerprint", "")))
    return [CellResult(got[row["question"]], "ok", "", proof, used) for row in ctx.rows]
