"""``command``: run an argv per row (``{param}``, ``{python}``, ``{tree}`` substituted) in the tree.

Keys: ``argv`` (list), ``regex`` (outcome = first group, or the whole match, searched in the output;
no match → the exit code), ``env`` (mapping, substituted too). Without ``regex`` the outcome is the
exit code, e.g. a ``cargo test`` probe.
"""

from __future__ import annotations

import re

from harness.columns.trees import listing_of
from harness.probes.kinds import CellResult, KindContext
from harness.probes.kinds._common import row_values, substitute, writes_between, writes_detail
from harness.probes.subproc import probe_env, run_once

KIND = "command"
FIELDS = ("argv", "regex", "env")


def validate(probe, fields) -> None:
    argv = fields.req("argv").str_list(allow_scalar=False)
    if not argv:
        raise fields.req("argv").error("must not be empty")
    if "regex" in fields:
        try:
            re.compile(fields.req("regex").str())
        except re.error as exc:
            raise fields.req("regex").error(f"invalid regex: {exc}") from None
    if "env" in fields:
        for v in fields.req("env").map().items.values():
            if v.is_map() or v.is_list():
                raise v.error("must be a scalar")


def run(ctx: KindContext) -> list[CellResult]:
    spec = ctx.probe.spec
    rx = re.compile(spec["regex"], re.M) if spec.get("regex") else None
    cells = []
    for row in ctx.rows:
        vals = row_values(row, ctx.python, str(ctx.tree.path))
        argv = [substitute(a, vals) for a in spec["argv"]]
        env = probe_env(
            {**ctx.env, **{k: substitute(str(v), vals) for k, v in (spec.get("env") or {}).items()}}
        )
        before = listing_of(ctx.tree.path)
        try:
            status, code, out, detail = run_once(
                argv, ctx.tree.path, ctx.scratch, ctx.probe.timeout, env
            )
        except OSError as exc:
            cells.append(CellResult(None, "error", f"cannot run {argv[0]}: {exc.strerror}"))
            continue
        if status != "ok":
            cells.append(CellResult(None, "timeout" if status == "timeout" else "error", detail))
            continue
        text = out.decode("utf-8", "replace")
        cell = CellResult(code, "ok", "", {"exit code": str(code)})
        if rx is not None:
            m = rx.search(text)
            cell.value = (m.group(1) if m.groups() else m.group(0)) if m else None
            if m is None:
                cell.detail = f"no match for {spec['regex']!r}"
        if code is not None and code < 0:
            cell.status, cell.detail = "crash", f"killed by signal {-code}"
        writes = writes_between(ctx.tree.path, before)
        if writes:
            cell.status, cell.detail = "error", writes_detail(writes)
        cells.append(cell)
    return cells
