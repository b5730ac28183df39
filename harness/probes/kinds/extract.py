"""``extract``: AST-extract named functions/methods from a file in the column's tree, run with stubs.

Keys: ``file`` (path in the tree), ``functions`` (``name`` or ``Class.method``), ``prelude`` (Python
source with the declared stubs, run first), ``prelude_file`` (the same, from a file relative to the
scenario), ``call`` (the callable to run per row, from the prelude or the extracted code; default
the first function). The cell proof records the sha of the extracted source.
"""

from __future__ import annotations

from pathlib import Path

from harness.probes.kinds import CellResult, KindContext
from harness.probes.subproc import probe_env, run_rows

KIND = "extract"
FIELDS = ("file", "functions", "prelude", "prelude_file", "call")


def validate(probe, fields) -> None:
    fields.req("file").str()
    probe.spec["functions"] = fields.req("functions").str_list()
    if "prelude" in fields and "prelude_file" in fields:
        raise fields.req("prelude_file").error("use either prelude or prelude_file")
    if "prelude" in fields:
        fields.req("prelude").str(nonempty=False)
    if "prelude_file" in fields:
        p = probe.base_dir / fields.req("prelude_file").str()
        if not p.is_file():
            raise fields.req("prelude_file").error("no such file (relative to the scenario)")
    if "call" in fields:
        fields.req("call").str()


def inputs(probe) -> list[Path]:
    f = probe.spec.get("prelude_file")
    return [probe.base_dir / f] if f else []


def run(ctx: KindContext) -> list[CellResult]:
    spec = ctx.probe.spec
    prelude = spec.get("prelude") or ""
    if spec.get("prelude_file"):
        prelude = (ctx.probe.base_dir / spec["prelude_file"]).read_text(encoding="utf-8")
    job = {
        "mode": "extract",
        "file": spec["file"],
        "functions": spec["functions"],
        "prelude": prelude,
        "call": spec.get("call") or spec["functions"][0],
        "under_test": [],
    }
    return run_rows(
        ctx.python, job, ctx.rows, ctx.tree.path, ctx.scratch, ctx.probe.timeout, probe_env(ctx.env)
    )
