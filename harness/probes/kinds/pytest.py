"""``pytest``: node ids or a marker expression, run in the column's tree → passed/failed/errors.

Keys: ``nodes`` (list of node ids, ``{param}`` substituted), ``marker`` (a ``-m`` expression),
``args`` (extra pytest arguments), ``env`` (mapping). Counts come from pytest's JUnit XML.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from harness.columns.trees import listing_of
from harness.probes.kinds import CellResult, KindContext
from harness.probes.kinds._common import row_values, substitute, writes_between, writes_detail
from harness.probes.subproc import probe_env, run_once

KIND = "pytest"
FIELDS = ("nodes", "marker", "args", "env")


def validate(probe, fields) -> None:
    if "nodes" not in fields and "marker" not in fields:
        raise fields.owner.error("pytest probe needs nodes or marker")
    if "nodes" in fields:
        fields.req("nodes").str_list()
    if "marker" in fields:
        fields.req("marker").str()
    if "args" in fields:
        fields.req("args").str_list()
    if "env" in fields:
        fields.req("env").map()


def _counts(xml_path) -> dict[str, int] | None:
    try:
        root = ET.parse(xml_path).getroot()
    except (OSError, ET.ParseError):
        return None
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    tot = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for s in suites:
        for k in tot:
            tot[k] += int(s.get(k, 0))
    return {
        "passed": tot["tests"] - tot["failures"] - tot["errors"] - tot["skipped"],
        "failed": tot["failures"],
        "errors": tot["errors"],
        "skipped": tot["skipped"],
    }


def run(ctx: KindContext) -> list[CellResult]:
    spec = ctx.probe.spec
    cells = []
    for i, row in enumerate(ctx.rows):
        vals = row_values(row, ctx.python, str(ctx.tree.path))
        xml = ctx.scratch / f"junit-{i}.xml"
        argv = [
            ctx.python,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=",
            f"--junitxml={xml}",
            *[substitute(a, vals) for a in _list(spec.get("args"))],
        ]
        if spec.get("marker"):
            argv += ["-m", substitute(spec["marker"], vals)]
        argv += [substitute(n, vals) for n in _list(spec.get("nodes"))]
        env = probe_env(
            {**ctx.env, **{k: substitute(str(v), vals) for k, v in (spec.get("env") or {}).items()}}
        )
        before = listing_of(ctx.tree.path)
        status, code, out, detail = run_once(
            argv, ctx.tree.path, ctx.scratch, ctx.probe.timeout, env
        )
        if status != "ok":
            cells.append(CellResult(None, "timeout" if status == "timeout" else "error", detail))
            continue
        counts = _counts(xml)
        if code == 5:
            cell = CellResult("no tests collected", "ok", "", {"exit code": "5"})
        elif counts is None or code not in (0, 1, 2):
            tail = out.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
            cell = CellResult(
                None, "error", f"pytest exit code {code}: {tail[0]}"[:300], {"exit code": str(code)}
            )
        else:
            value = ", ".join(f"{n} {k}" for k, n in counts.items() if n or k == "passed")
            cell = CellResult(value, "ok", "", {"exit code": str(code)})
        writes = writes_between(ctx.tree.path, before)
        if writes:
            cell.status, cell.detail = "error", writes_detail(writes)
        cells.append(cell)
    return cells


def _list(v) -> list[str]:
    if v is None:
        return []
    return [v] if isinstance(v, str) else [str(x) for x in v]
