"""``python``: call a function with each row's parameters, the column's tree first on sys.path.

Keys: ``function`` (``pkg.mod:func`` imported from the tree, or ``func`` with ``file``),
``file`` (a probe file, relative to the scenario; may set ``UNDER_TEST = [...]``),
``under_test`` (modules whose file must lie inside the column's tree: the module path proof).
"""

from __future__ import annotations

from pathlib import Path

from harness.probes.kinds import CellResult, KindContext
from harness.probes.subproc import probe_env, run_rows

KIND = "python"
FIELDS = ("function", "file", "under_test")


def _file(probe) -> Path | None:
    f = probe.spec.get("file")
    return (probe.base_dir / f).resolve() if f else None


def validate(probe, fields) -> None:
    fn = fields.req("function").str()
    if "file" in fields:
        p = _file(probe)
        if p is None or not p.is_file():
            raise fields.req("file").error(
                f"no such file {probe.spec['file']!r} (relative to the scenario)"
            )
        if ":" in fn:
            raise fields.req("function").error("with file, give just the function name")
    elif ":" not in fn:
        raise fields.req("function").error("expected module:function (or give file)")
    if "under_test" in fields:
        probe.spec["under_test"] = fields.req("under_test").str_list()


def inputs(probe) -> list[Path]:
    p = _file(probe)
    return [p] if p else []


def run(ctx: KindContext) -> list[CellResult]:
    spec = ctx.probe.spec
    job = {"mode": "python", "under_test": spec.get("under_test") or []}
    if spec.get("file"):
        job.update(file=str(_file(ctx.probe)), function=spec["function"])
    else:
        module, function = spec["function"].split(":", 1)
        job.update(module=module, function=function)
    return run_rows(
        ctx.python, job, ctx.rows, ctx.tree.path, ctx.scratch, ctx.probe.timeout, probe_env(ctx.env)
    )
