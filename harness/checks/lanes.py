"""CI lanes: the pytest marker expression of every lane in GitHub Actions workflows at a ref.

A lane is an input whose name mentions markers (``markers``, ``pytest_markers``, ``pytest_marks`` …)
under ``jobs.<id>.with`` (plain, quoted or block strings; reusable-workflow calls included), a
``strategy.matrix`` value of such a name (expanded when ``with`` refers to ``${{ matrix.X }}``), the
default of such a ``workflow_call``/``workflow_dispatch`` input, a ``pytest … -m EXPR`` command in a
step's ``run:`` script, or a lane given by hand (scenario).
Workflows are read from git objects at the ref: no checkout.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Iterable, Mapping, Sequence

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from harness import yamlpath
from harness.errors import UsageError
from harness.git.evidence import ls_tree
from harness.git.repo import GitRepo
from harness.report.model import Code, Control, Finding, Section, Table

WORKFLOW_DIR = ".github/workflows"
_MARKER_NAME = re.compile(r"marker|pytest_mark", re.I)
_MATRIX_REF = re.compile(r"^\$\{\{\s*matrix\.([A-Za-z0-9_-]+)\s*\}\}$")
_MENTION = re.compile(r"^\s*-?\s*[\"']?([A-Za-z0-9_.-]*(?:marker|pytest_mark)[A-Za-z0-9_.-]*)[\"']?\s*:", re.I)


@dataclass
class Lane:
    """One CI lane's marker expression and where it is written."""

    job: str
    input: str
    expression: str
    path: str | None
    line: int | None
    source: str = "with"  # with, matrix, workflow_call default, workflow_dispatch default, scenario
    uses: str | None = None  # the reusable workflow the job calls, if any
    key_line: int | None = None

    @property
    def name(self) -> str:
        return f"{self.job} · {self.input}"

    def row(self) -> dict[str, Any]:
        return {"job": self.job, "input": self.input, "expression": self.expression, "path": self.path,
                "line": self.line, "source": self.source, "uses": self.uses}


@dataclass
class LaneScan:
    """Lanes plus what the scan read, could not read, and mentions it did not turn into lanes."""

    ref: str
    sha: str
    lanes: list[Lane] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    unaccounted: list[tuple[str, int, str]] = field(default_factory=list)  # (path, line, key)
    mentions: int = 0
    raw_lines: dict[tuple[str, int], str] = field(default_factory=dict)


def _scalar(node: Node | None) -> str | None:
    if isinstance(node, ScalarNode):
        return "" if node.tag == "tag:yaml.org,2002:null" else str(node.value).strip()
    return None


def _matrix_values(strategy: Node | None, key: str) -> list[tuple[str, int]]:
    """Values (and lines) of ``strategy.matrix.<key>``, including ``include`` entries."""
    matrix = yamlpath.get(strategy, "matrix")
    out: list[tuple[str, int]] = []
    vals = yamlpath.get(matrix, key)
    if isinstance(vals, SequenceNode):
        out += [(v, yamlpath.line_of(n)) for n in vals.value if (v := _scalar(n)) is not None]
    elif (v := _scalar(vals)) is not None:
        out.append((v, yamlpath.line_of(vals)))  # type: ignore[arg-type]
    inc = yamlpath.get(matrix, "include")
    if isinstance(inc, SequenceNode):
        for entry in inc.value:
            n = yamlpath.get(entry, key)
            if (v := _scalar(n)) is not None:
                out.append((v, yamlpath.line_of(n)))  # type: ignore[arg-type]
    return out


def _job_lanes(path: str, job_id: str, job: Node) -> list[Lane]:
    lanes: list[Lane] = []
    uses = _scalar(yamlpath.get(job, "uses")) or None
    strategy = yamlpath.get(job, "strategy")
    used_matrix: set[str] = set()
    for name, key_node, val in yamlpath.items(job) if isinstance(job, MappingNode) else []:
        if name != "with" or not isinstance(val, MappingNode):
            continue
        for inp, kn, v in yamlpath.items(val):
            if not _MARKER_NAME.search(inp):
                continue
            expr = _scalar(v)
            if expr is None:
                expr = yamlpath.value_text(v) or ""
            m = _MATRIX_REF.match(expr)
            values = _matrix_values(strategy, m.group(1)) if m else []
            if m and values:
                used_matrix.add(m.group(1))
                lanes += [Lane(f"{job_id}[{m.group(1)}={mv}]", inp, mv, path, line, "matrix", uses,
                               yamlpath.line_of(kn)) for mv, line in values]
            else:
                lanes.append(Lane(job_id, inp, expr, path, yamlpath.line_of(v), "with", uses, yamlpath.line_of(kn)))
    lanes += _run_lanes(path, job_id, job, uses)
    matrix = yamlpath.get(strategy, "matrix")
    for key in yamlpath.keys(matrix):
        if _MARKER_NAME.search(key) and key not in used_matrix:
            lanes += [Lane(f"{job_id}[{key}={mv}]", key, mv, path, line, "matrix", uses)
                      for mv, line in _matrix_values(strategy, key)]
    return lanes


def _pytest_marker(command: str) -> str | None:
    """The ``-m`` expression of a pytest command line (``pytest``, ``python -m pytest``), if any."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:  # unbalanced quotes (e.g. a ${{ }} expression split oddly): not parsed
        return None
    at = next((i for i, w in enumerate(words) if w == "pytest" or w.endswith("/pytest")
               or (w == "-m" and i + 1 < len(words) and words[i + 1] == "pytest")), None)
    if at is None:
        return None
    rest = words[at + (2 if words[at] == "-m" else 1):]
    for i, w in enumerate(rest):
        if w == "-m" and i + 1 < len(rest):
            return rest[i + 1]
        if w.startswith("-m") and len(w) > 2 and not w.startswith("--"):
            return w[2:].lstrip("=")
    return None


def _run_lanes(path: str, job_id: str, job: Node, uses: str | None) -> list[Lane]:
    """Lanes written as ``pytest -m EXPR`` in the job's ``run:`` scripts (continuation lines joined)."""
    lanes: list[Lane] = []
    steps = yamlpath.get(job, "steps")
    for i, step in enumerate(steps.value if isinstance(steps, SequenceNode) else []):
        run = yamlpath.get(step, "run")
        script = _scalar(run)
        if not script or "pytest" not in script:
            continue
        first = yamlpath.line_of(run) + (1 if getattr(run, "style", None) in ("|", ">") else 0)
        raw = str(run.value).split("\n")  # type: ignore[union-attr]
        j = 0
        while j < len(raw):
            start, command = j, raw[j]
            while command.rstrip().endswith("\\") and j + 1 < len(raw):
                j += 1
                command = command.rstrip()[:-1] + " " + raw[j]
            expr = _pytest_marker(command)
            if expr is not None:
                name = _scalar(yamlpath.get(step, "name")) or f"step {i + 1}"
                at = next((k for k in range(start, j + 1) if expr in raw[k]), start)  # the expression's own line
                lanes.append(Lane(job_id, f"run: {name}", expr, path, first + at, "run", uses))
            j += 1
    return lanes


def _input_defaults(path: str, root: Node) -> list[Lane]:
    on = yamlpath.get(root, "on")
    lanes = []
    for trigger in ("workflow_call", "workflow_dispatch"):
        inputs = yamlpath.get(yamlpath.get(on, trigger), "inputs")
        for inp, kn, spec in yamlpath.items(inputs) if isinstance(inputs, MappingNode) else []:
            default = yamlpath.get(spec, "default")
            if _MARKER_NAME.search(inp) and default is not None and (expr := _scalar(default)) is not None:
                lanes.append(Lane(f"({trigger} default)", inp, expr, path, yamlpath.line_of(default),
                                  f"{trigger} default", None, yamlpath.line_of(kn)))
    return lanes


def lanes_in_text(path: str, text: str) -> tuple[list[Lane], str | None]:
    """Lanes in one workflow's text, or the reason it could not be read as a workflow."""
    try:
        root = yamlpath.compose(text)
    except yamlpath.YamlError as exc:
        return [], f"not valid YAML: {exc}"
    if not isinstance(root, MappingNode):
        return [], f"top level is {yamlpath.kind(root)}, not a mapping"
    lanes = _input_defaults(path, root)
    jobs = yamlpath.get(root, "jobs")
    if jobs is not None and not isinstance(jobs, MappingNode):
        return lanes, f"jobs is {yamlpath.kind(jobs)}, not a mapping"
    for job_id, _kn, job in yamlpath.items(jobs) if jobs is not None else []:
        lanes += _job_lanes(path, job_id, job)
    return lanes, None


def workflow_paths(repo: GitRepo, sha: str) -> list[str]:
    """``.github/workflows/*.yml|yaml`` at a commit (top level of the folder, as GitHub reads it)."""
    return sorted(e.path for e in ls_tree(repo, sha, WORKFLOW_DIR)
                  if e.type == "blob" and str(PurePosixPath(e.path).parent) == WORKFLOW_DIR
                  and e.path.endswith((".yml", ".yaml")))


def _extra(extra_lanes: Iterable[Mapping[str, Any]] | None) -> list[Lane]:
    lanes = []
    for i, item in enumerate(extra_lanes or []):
        name, expr = item.get("name"), item.get("expression")
        if not isinstance(name, str) or not name or not isinstance(expr, str):
            raise UsageError(f"lane {i + 1} given by hand needs a name and an expression (strings)")
        lanes.append(Lane(name, str(item.get("input") or "(by hand)"), expr.strip(), item.get("path"),
                          item.get("line"), "scenario"))
    return lanes


def scan_lanes(repo: GitRepo, ref: str = "HEAD", workflows: Sequence[str] | None = None,
               extra_lanes: Iterable[Mapping[str, Any]] | None = None) -> LaneScan:
    """Read every workflow at ``ref`` (or the ones named) and collect lanes."""
    sha = repo.resolve(ref)
    scan = LaneScan(ref, sha)
    paths = list(workflows) if workflows else workflow_paths(repo, sha)
    for path, blob in zip(paths, repo.read_blobs([f"{sha}:{p}" for p in paths])):
        if blob is None:
            if workflows:
                raise UsageError(f"--workflow {path}: no such file at {ref}")
            continue
        text, replaced = yamlpath.decode(blob)
        scan.files.append(path)
        if replaced:
            scan.problems.append((path, "non-UTF-8 bytes (shown as U+FFFD)"))
        lanes, why = lanes_in_text(path, text)
        if why:
            scan.problems.append((path, why))
        scan.lanes += lanes
        lines = text.splitlines()
        for lane in lanes:
            if lane.line and lane.line <= len(lines):
                scan.raw_lines[(path, lane.line)] = lines[lane.line - 1]
        known = {ln.key_line for ln in lanes} | {ln.line for ln in lanes}
        for no, line in enumerate(lines, 1):
            m = _MENTION.match(line)
            if m:
                scan.mentions += 1
                if no not in known:
                    scan.unaccounted.append((path, no, m.group(1)))
    scan.lanes += _extra(extra_lanes)
    return scan


def find_lanes(repo: GitRepo, ref: str = "HEAD", workflows: Sequence[str] | None = None,
               extra_lanes: Iterable[Mapping[str, Any]] | None = None) -> list[Lane]:
    """Every lane at ``ref`` (workflow lanes in file order, then lanes given by hand)."""
    return scan_lanes(repo, ref, workflows, extra_lanes).lanes


def expression_error(expr: str) -> str | None:
    """Why ``expr`` is not a valid ``pytest -m`` expression (None when valid or not checkable)."""
    if "${{" in expr or not expr:
        return None
    try:
        from _pytest.mark.expression import Expression
    except ImportError:  # pragma: no cover - pytest absent
        return None
    try:
        Expression.compile(expr)
    except Exception as exc:  # ParseError before pytest 9, SyntaxError since
        return str(exc).split(" (<pytest match expression>")[0]
    return None


def _expr_in_raw(lane: Lane, raw: str | None) -> bool | None:
    """Whether the raw line shows the expression (None where YAML puts the text on later lines)."""
    if raw is None or not lane.expression:
        return None
    first = lane.expression.splitlines()[0].strip()
    if first in raw:
        return True
    if re.search(r"[|>][+-]?[0-9]?\s*(#.*)?$", raw):
        return None  # block scalar: the text starts on the next line
    shown = re.sub(r"^\s*-?\s*([^:]*:\s*)?", "", raw).strip().strip("\"'")
    return bool(shown) and first.startswith(shown)  # a plain scalar folded over several lines


def lanes_section(repo: GitRepo, ref: str = "HEAD", workflows: Sequence[str] | None = None,
                  extra_lanes: Iterable[Mapping[str, Any]] | None = None) -> Section:
    """Report section: lane, expression, file:line, with read-back and text-mention controls."""
    scan = scan_lanes(repo, ref, workflows, extra_lanes)
    rows = []
    findings: list[Finding] = []
    for lane in scan.lanes:
        where = f"{lane.path}:{lane.line}" if lane.path and lane.line else (lane.path or "(given by hand)")
        expr_cell = Code(lane.expression) if lane.expression else "(empty: all tests)"
        rows.append([Code(lane.job), Code(lane.input), expr_cell,
                     Code(where), lane.source + (f" → {lane.uses}" if lane.uses else "")])
        err = expression_error(lane.expression)
        if err:
            findings.append(Finding("lane-expression", "P2", f"lane {lane.name}: not a valid pytest -m expression",
                                    f"{lane.expression!r} at {where}: {err}", key=f"{lane.path}\0{lane.name}"))
    for path, why in scan.problems:
        sev = "info" if why.startswith("non-UTF-8") else "P2"
        detail = ("expressions from this file may contain U+FFFD where the bytes were not UTF-8" if sev == "info"
                  else "lanes in this file are missing from the table")
        findings.append(Finding("workflow-unreadable", sev, f"{path}: {why}", detail, key=f"{path}\0{why}"))
    checked = [(ln, _expr_in_raw(ln, scan.raw_lines.get((ln.path or "", ln.line or 0)))) for ln in scan.lanes
               if ln.source != "scenario"]
    verdicts = [ok for _, ok in checked if ok is not None]
    controls = [
        Control("expression read back from the raw line",
                f"{sum(verdicts)} of {len(verdicts)} single-line expressions appear verbatim on their line",
                None if not verdicts else all(verdicts)),
        Control("text scan for marker-named keys",
                f"{scan.mentions} line(s) in {len(scan.files)} workflow file(s) name a marker key; "
                f"{len(scan.unaccounted)} not read as a lane"
                + ("" if not scan.unaccounted
                   else ": " + ", ".join(f"{p}:{n} ({k})" for p, n, k in scan.unaccounted[:10])),
                True if not scan.unaccounted else None),
    ]
    if scan.unaccounted:
        findings.append(Finding("lane-unread", "info", f"{len(scan.unaccounted)} marker-named key(s) outside the "
                                "places lanes are read from", ", ".join(f"{p}:{n}" for p, n, _ in scan.unaccounted),
                                key="unaccounted\0" + "\0".join(f"{p}:{k}" for p, _, k in scan.unaccounted)))
    table = Table(
        title=f"CI lanes at {ref}",
        columns=["lane (job)", "input", "marker expression", "file:line", "source"],
        rows=rows,
        legend="matrix lanes are named job[key=value]; '(… default)' lanes are defaults of reusable or manual "
               "workflow inputs; 'run' lanes are pytest -m in a step's script; 'scenario' lanes were given by hand",
        control="each expression read back from the raw text at its line; a plain text scan for marker-named "
                "keys counts the lines the YAML walk did not turn into lanes",
    )
    return Section(
        id="lanes", title=f"CI lanes at {ref}",
        summary=f"{len(scan.lanes)} lane(s) in {len(scan.files)} workflow file(s) at {ref} ({scan.sha[:12]})",
        tables=[table], findings=findings, controls=controls,
        not_verified=["`run:` scripts: only `pytest … -m EXPR` on the step's own lines (shell variables, "
                      "scripts it calls and tox/nox sessions are not followed)",
                      "whether a lane's job actually runs (if:, paths filters, schedules) is not evaluated",
                      "expressions with ${{ … }} other than a matrix value are shown unexpanded"],
        data={"ref": ref, "sha": scan.sha, "files": scan.files, "rows": [ln.row() for ln in scan.lanes]},
    )
