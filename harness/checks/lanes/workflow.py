"""The lanes of one GitHub Actions workflow's text (``lanes_in_text``), and the ``Lane`` and
``LaneScan`` types the check and its section share.

A lane is an input whose name mentions markers (``markers``, ``pytest_markers``, ``pytest_marks`` …)
under ``jobs.<id>.with`` (plain, quoted or block strings; reusable-workflow calls included) or a step's
``with:``, a ``strategy.matrix`` value of such a name, the default of such a
``workflow_call``/``workflow_dispatch`` input, a ``pytest … -m EXPR`` command in a step's ``run:``
script or in a local composite action's steps (``uses: ./path``, its ``action.yml`` read at the same
ref), or a lane given by hand (scenario).
``${{ matrix.* }}``, ``${{ env.* }}`` (workflow, job and step ``env:``), a shell ``$VAR`` set under
``env:`` and a composite action's ``${{ inputs.* }}`` are expanded once per matrix combination
(``gha_matrix``: GitHub's include/exclude rules, capped; ``gha_expr``: a bounded evaluator), one lane
per distinct expression, named after the matrix keys it read. What only CI knows stays unexpanded.
Workflows are read from git objects at the ref: no checkout.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from harness.checks.lanes.gha_expr import UNKNOWN, LStr, Scope, has_expression, render
from harness.checks.lanes.gha_matrix import MAX_COMBOS, Matrix, expand_matrix
from harness.checks.lanes.gha_shell import SHELL_PARAM, might_hold_lanes, pytest_calls
from harness.inputs import yamlpath

MARKER_NAME = re.compile(r"marker|pytest_mark", re.I)
_SHELL_VAR = re.compile(r"^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$")
MAX_ACTION_DEPTH = 3  # local composite actions calling local composite actions
MAX_CALL_DEPTH = 2  # local reusable workflows read through their callers, nested
MAX_CALLS = 16  # caller matrix combinations a reusable workflow is read for
MAX_CALLED_JOBS = 512  # jobs read through callers in one workflow file (a hostile fan-out stops)
MISSING_ACTION = "local action not in the tree: "  # notes of this kind are listed together
UNREAD_SCRIPT = "run: script not read: "  # a pytest call the shell reading could not follow
# A line naming a marker key ("markers:", "- pytest_mark: …"), read in three steps that cannot
# backtrack: one pattern for the whole line took quadratic time over a long run of spaces or of
# "marker" in the reviewed repository's workflow.
_MENTION_LEAD = re.compile(r"\s*-?\s*[\"']?")
_MENTION_NAME = re.compile(r"[A-Za-z0-9_.-]*", re.I)
_MENTION_TAIL = re.compile(r"[\"']?\s*:")


def marker_key(line: str) -> str | None:
    """The key a workflow line names when it names a marker (``markers`` in ``- markers: x``)."""
    lead = _MENTION_LEAD.match(line)
    name = _MENTION_NAME.match(line, lead.end() if lead else 0)
    if name is None or not MARKER_NAME.search(name.group()):
        return None
    return name.group() if _MENTION_TAIL.match(line, name.end()) else None


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
    template: str | None = (
        None  # the text as written, when ${{ }} / $VAR was expanded into ``expression``
    )
    via: tuple[str, ...] = ()  # wrappers a run: lane's pytest call was read through
    read_at: tuple[tuple[str, int], ...] = ()  # env: lines its expression was read through

    @property
    def name(self) -> str:
        return f"{self.job} · {self.input}"

    def row(self) -> dict[str, Any]:
        return {
            "job": self.job,
            "input": self.input,
            "expression": self.expression,
            "path": self.path,
            "line": self.line,
            "source": self.source,
            "uses": self.uses,
            "template": self.template,
            "via": list(self.via),
        }


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
    notes: list[str] = field(default_factory=list)  # bounded expansions, missing local actions


def _scalar(node: Node | None) -> str | None:
    if isinstance(node, ScalarNode):
        return "" if node.tag == "tag:yaml.org,2002:null" else str(node.value).strip()
    return None


Reader = Callable[[str], str | None]  # a path at the ref → its text (None: absent)


@dataclass
class _Tmpl:
    """A marker expression as written (maybe with ``${{ }}`` or ``$VAR``) and how to build its scope."""

    input: str
    text: LStr
    key_line: int | None
    source: str
    scope: Callable[[Any, list[str]], Scope]  # (matrix combination, matrix keys read) → Scope
    shell: bool = False  # read from a run: script: $NAME is the step's environment variable
    via: tuple[str, ...] = ()  # wrappers the pytest call was read through (docker run, bash -c …)
    written: str | None = None  # the -m word as written, when the script's variables composed it


def _shell_env(v: LStr, scope: Scope) -> Any:
    """``$NAME``/``${NAME}``/``${NAME:-default}`` in a run: script's expression, from the step's
    environment (workflow, job and step ``env:``, rendered); UNKNOWN when a name is not there."""
    out, pos = [], 0
    matches = list(SHELL_PARAM.finditer(v))
    if not matches:
        return v
    values: list[Any] = []
    for m in matches:
        name, op, default = m.group(1) or m.group(4), m.group(2), m.group(3)
        src = scope.env.get(name)
        if src is not None:
            scope.touched.append(src)
        val: Any = render(src, scope) if src is not None else None
        if val is UNKNOWN:
            return UNKNOWN
        if val is None or (op == ":-" and not str(val)):
            if op not in (":-", "-"):
                return UNKNOWN  # set where this scan cannot see (an earlier step, the runner)
            val = LStr(default or "", v.path, v.line, derived=True)
        values.append(val)
        out += [v[pos : m.start()], str(val)]
        pos = m.end()
    out.append(v[pos:])
    if len(matches) == 1 and matches[0].group(0) == str(v).strip() and isinstance(values[0], LStr):
        return values[0]
    return LStr("".join(out), v.path, v.line, derived=True)


def _env_map(node: Node | None, path: str) -> dict[str, LStr]:
    """``env:`` of a workflow, job or step: name → value as written (with its line)."""
    env = yamlpath.get(node, "env")
    out: dict[str, LStr] = {}
    for name, _kn, v in yamlpath.items(env) if isinstance(env, MappingNode) else []:
        if (text := _scalar(v)) is not None:
            out[name] = LStr(text, path, yamlpath.line_of(v))
    return out


def _fixed_scope(
    env: dict[str, LStr], inputs: Mapping[str, LStr] | None = None
) -> Callable[[Any, list[str]], Scope]:
    """Scope of a job's templates: its matrix combination, ``env:`` and, in a reusable workflow
    read through a caller, the ``inputs`` that caller gives."""
    given = None if inputs is None else {k: (v, None) for k, v in inputs.items()}
    return lambda combo, read: Scope(combo, env, given, read)


def _show(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, str):
        return str(v)
    if isinstance(v, dict):
        text = "{" + ", ".join(f"{k}: {_show(x)}" for k, x in v.items()) + "}"
        return text if len(text) <= 60 else text[:57] + "…}"
    return "?" if v is UNKNOWN else str(v)


def _expand(t: _Tmpl, mx: Matrix, job_id: str, uses: str | None, used: set[str]) -> list[Lane]:
    """One lane per distinct expression the template takes over the job's matrix combinations."""
    text = t.text
    var = _SHELL_VAR.match(text)
    plain = Lane(
        job_id,
        t.input,
        str(text),
        text.path,
        text.line,
        t.source,
        uses,
        t.key_line,
        template=t.written,
        via=t.via,
    )
    shell = t.shell and SHELL_PARAM.search(text) is not None
    if not has_expression(text) and not var and not shell:
        return [plain]
    out: dict[tuple[str, str], Lane] = {}
    unresolved = not mx.combos
    seen_env: dict[
        tuple[str, int], None
    ] = {}  # env: lines read, also where the value stayed unknown
    for combo in mx.combos:
        read: list[str] = []
        scope = t.scope(combo, read)
        if t.shell:  # ${{ }} first (GitHub renders the script), then the shell's $NAME
            v = render(text, scope)
            v = UNKNOWN if v is UNKNOWN else _shell_env(v, scope)
        elif var:  # a shell variable: the step's environment holds the workflow's env: values
            src = scope.env.get(var.group(1))
            if src is None:
                return [plain]
            v = render(src, scope)
        else:
            v = render(text, scope)
        seen_env.update(dict.fromkeys((x.path, x.line) for x in scope.touched if x.path and x.line))
        if v is UNKNOWN:
            unresolved = True
            continue
        keys = list(dict.fromkeys(read))
        used.update(keys)
        suffix = (
            ", ".join(f"{k}={_show(combo.get(k))}" for k in keys) if isinstance(combo, dict) else ""
        )
        name = f"{job_id}[{suffix}]" if suffix else job_id
        source = ("matrix" if t.source == "with" else t.source) if keys else t.source
        line = text.line if v.derived else (v.line or text.line)
        out.setdefault(
            (name, str(v).strip()),
            Lane(
                name,
                t.input,
                str(v).strip(),
                text.path if v.derived else (v.path or text.path),
                line,
                source,
                uses,
                t.key_line,
                template=t.written or str(text),
                via=t.via,
                read_at=tuple(
                    dict.fromkeys((x.path, x.line) for x in scope.touched if x.path and x.line)
                ),
            ),
        )
    if unresolved:
        plain.read_at = tuple(seen_env)
        out.setdefault((job_id, str(text)), plain)
    return list(out.values())


def _run_tmpls(
    path: str,
    step: Node,
    label: str,
    source: str,
    scope: Callable[[Any, list[str]], Scope],
    file_lines: Sequence[str],
    unread: list[str] | None = None,
    read_file: Reader | None = None,
) -> list[_Tmpl]:
    """``pytest -m EXPR`` calls in a step's ``run:`` script, read with a shell parser through its
    wrappers (``gha_shell``); each placed on the source line its expression is written on."""
    run = yamlpath.get(step, "run")
    if not isinstance(run, ScalarNode) or not might_hold_lanes(str(run.value)):
        return []
    script = str(run.value)
    read = pytest_calls(script, read_file)
    src, first = _source_lines(run, file_lines)
    out: list[_Tmpl] = []
    for call in read.calls:
        if call.where:  # written in pixi.toml / tox.ini at the same ref
            where = LStr(call.expression, call.where[0], call.where[1])
        else:
            line = _locate(src, first, script, call.pos, call.expression)
            where = LStr(call.expression, path, line)
        out.append(
            _Tmpl(
                f"run: {label}",
                where,
                None,
                source,
                scope,
                shell=True,
                via=call.via,
                written=None if call.verbatim else call.written,
            )
        )
    for pos, why in read.unread:
        if unread is not None:
            at = _locate(src, first, script, pos, "")
            unread.append(f"{UNREAD_SCRIPT}{path}:{at} ({label}): {why}")
    return out


def _source_lines(node: ScalarNode, file_lines: Sequence[str]) -> tuple[list[str], int]:
    """The source lines a scalar is written on (a block's header line left out) and the first one's
    number: a folded block's or a quoted scalar's value joins its lines, so lines are found there."""
    block = node.style in ("|", ">")
    first = node.start_mark.line + 1 + (1 if block else 0)
    last = node.end_mark.line + 1  # a block ends at the start of the line after it
    lines = list(file_lines[first - 1 : max(last, first)])
    return (lines or str(node.value).split("\n")), first


def flat(text: str) -> str:
    return " ".join(text.replace('\\"', '"').replace("\\'", "'").split())


def _locate(src: list[str], first: int, value: str, pos: int, expr: str) -> int:
    """The source line of the text at ``pos`` in a scalar's value: the line of ``src`` from which the
    expression reads on (blocks folded with ``>`` and quoted scalars join lines, so the value's own
    line count is only where the search starts)."""
    approx = min(value[:pos].count("\n"), max(len(src) - 1, 0))
    want = flat(expr)
    head = want.split(" ", 1)[0] if want else ""
    if want:
        for k in [*range(approx, len(src)), *range(0, approx)]:
            if head in src[k] and want in flat(" ".join(src[k : k + 8])):
                return first + k
    return first + approx


def _with_tmpls(
    path: str, node: Node | None, source: str, scope: Callable[[Any, list[str]], Scope]
) -> list[_Tmpl]:
    """Marker-named inputs under a ``with:`` mapping."""
    out: list[_Tmpl] = []
    for inp, kn, v in yamlpath.items(node) if isinstance(node, MappingNode) else []:
        if not MARKER_NAME.search(inp):
            continue
        expr = _scalar(v)
        if expr is None:
            expr = yamlpath.value_text(v) or ""
        out.append(
            _Tmpl(inp, LStr(expr, path, yamlpath.line_of(v)), yamlpath.line_of(kn), source, scope)
        )
    return out


def _action_tmpls(
    uses: str,
    step: Node,
    caller_path: str,
    caller: Callable[[Any, list[str]], Scope],
    read: Reader | None,
    notes: list[str],
    depth: int = 1,
) -> list[_Tmpl]:
    """Lanes inside a local composite action (``uses: ./path``): its ``run:`` steps, with ``inputs.X``
    taken from the step's ``with:`` (rendered where the step is) or the action's input defaults."""
    rel = posixpath.normpath(uses[2:].rstrip("/"))
    if read is None or rel.startswith("..") or rel == "." or depth > MAX_ACTION_DEPTH:
        return []
    apath, text = next(
        (
            (f"{rel}/{n}", t)
            for n in ("action.yml", "action.yaml")
            if (t := read(f"{rel}/{n}")) is not None
        ),
        (None, None),
    )
    if apath is None or text is None:
        notes.append(f"{MISSING_ACTION}{uses} (used in {caller_path})")
        return _with_tmpls(caller_path, yamlpath.get(step, "with"), "step with", caller)
    try:
        root = yamlpath.compose(text)
    except yamlpath.YamlError as exc:
        notes.append(f"{apath}: not valid YAML: {exc}")
        return []
    given: dict[str, LStr] = {}
    with_node = yamlpath.get(step, "with")
    for name, _kn, v in yamlpath.items(with_node) if isinstance(with_node, MappingNode) else []:
        if (val := _scalar(v)) is not None:
            given[name] = LStr(val, caller_path, yamlpath.line_of(v))
    defaults: dict[str, LStr] = {}
    inputs = yamlpath.get(root, "inputs")
    for name, _kn, spec in yamlpath.items(inputs) if isinstance(inputs, MappingNode) else []:
        d = yamlpath.get(spec, "default")
        if (val := _scalar(d)) is not None:
            defaults[name] = LStr(val, apath, yamlpath.line_of(d))  # type: ignore[arg-type]
    steps = yamlpath.get(yamlpath.get(root, "runs"), "steps")
    out: list[_Tmpl] = []
    for i, astep in enumerate(steps.value if isinstance(steps, SequenceNode) else []):
        step_env = _env_map(astep, apath)

        def scope(combo: Any, read_keys: list[str], step_env: dict[str, LStr] = step_env) -> Scope:
            outer = caller(combo, read_keys)
            ins: dict[str, tuple[LStr, Scope | None]] = {k: (v, None) for k, v in defaults.items()}
            ins.update({k: (v, outer) for k, v in given.items()})
            return Scope(
                combo, {**outer.env, **step_env}, ins, read_keys, outer.steps_left, outer.touched
            )

        label = f"{rel}: " + (_scalar(yamlpath.get(astep, "name")) or f"step {i + 1}")
        out += _run_tmpls(apath, astep, label, "action", scope, text.splitlines(), notes, read)
        inner = _scalar(yamlpath.get(astep, "uses")) or ""
        if inner.startswith("./"):
            out += _action_tmpls(inner, astep, apath, scope, read, notes, depth + 1)
    if (
        not out
    ):  # the action hands its marker input to something we do not read: the input is the lane
        out = _with_tmpls(caller_path, with_node, "step with", caller)
    return out


def _called_lanes(
    path: str,
    job_id: str,
    job: Node,
    uses: str,
    mx: Matrix,
    job_env: dict[str, LStr],
    inputs: Mapping[str, LStr] | None,
    read: Reader,
    notes: list[str],
    calls: int,
    budget: list[int],
) -> list[Lane]:
    """Lanes of a local reusable workflow (``jobs.<id>.uses: ./.github/workflows/x.yml``) as this
    caller runs it: its ``inputs.*`` are the caller's ``with:`` values rendered per caller matrix
    combination (its input defaults otherwise), one reading per distinct set of inputs."""
    rel = posixpath.normpath(uses[2:].split("@", 1)[0])
    text = read(rel) if not rel.startswith("..") else None
    if text is None:
        return []
    try:
        root = yamlpath.compose(text)
    except yamlpath.YamlError:
        return []  # the file's own scan reports it
    jobs = yamlpath.get(root, "jobs")
    if not isinstance(root, MappingNode) or not isinstance(jobs, MappingNode):
        return []
    with_node = yamlpath.get(job, "with")
    given: dict[str, LStr] = {}
    for name, _kn, v in yamlpath.items(with_node) if isinstance(with_node, MappingNode) else []:
        if (val := _scalar(v)) is not None:
            given[name] = LStr(val, path, yamlpath.line_of(v))
    defaults: dict[str, LStr] = {}
    spec = yamlpath.get(yamlpath.get(yamlpath.get(root, "on"), "workflow_call"), "inputs")
    for name, _kn, item in yamlpath.items(spec) if isinstance(spec, MappingNode) else []:
        d = yamlpath.get(item, "default")
        if (val := _scalar(d)) is not None and d is not None:
            defaults[name] = LStr(val, rel, yamlpath.line_of(d))
    called_env = _env_map(root, rel)
    lines = text.splitlines()
    seen: set[tuple[tuple[str, str], ...]] = set()
    out: list[Lane] = []
    for combo in (mx.combos or [{}])[:MAX_CALLS]:
        keys: list[str] = []
        scope = _fixed_scope(job_env, inputs)(combo, keys)
        values = dict(defaults)
        for name, template in given.items():
            v = render(template, scope)
            if v is not UNKNOWN:
                values[name] = v if isinstance(v, LStr) else LStr(str(v), path, template.line)
            else:
                values.pop(name, None)  # known only when CI runs
        key = tuple(sorted((k, str(v)) for k, v in values.items()))
        if key in seen:
            continue
        seen.add(key)
        read_keys = list(dict.fromkeys(keys))
        suffix = ", ".join(f"{k}={_show(combo.get(k))}" for k in read_keys)
        caller = f"{job_id}[{suffix}]" if suffix and isinstance(combo, dict) else job_id
        for cjob_id, _kn, cjob in yamlpath.items(jobs):
            budget[0] -= 1
            if budget[0] < 0:
                notes.append(
                    f"{path}: reusable workflows read through their callers: the first "
                    f"{MAX_CALLED_JOBS} jobs"
                )
                return out
            out += _job_lanes(
                rel,
                f"{caller} → {cjob_id}",
                cjob,
                called_env,
                read,
                notes,
                lines,
                values,
                calls + 1,
                budget,
            )
    return out


def _job_lanes(
    path: str,
    job_id: str,
    job: Node,
    root_env: dict[str, LStr],
    read: Reader | None,
    notes: list[str],
    file_lines: Sequence[str] = (),
    inputs: Mapping[str, LStr] | None = None,
    calls: int = 0,
    budget: list[int] | None = None,
) -> list[Lane]:
    uses = _scalar(yamlpath.get(job, "uses")) or None
    strategy = yamlpath.get(job, "strategy")
    mx = expand_matrix(strategy, path)
    if mx.too_big:
        notes.append(
            f"{path}: job {job_id}: its matrix is too large to read; lanes that read it stay unexpanded"
        )
    elif mx.capped:
        notes.append(
            f"{path}: job {job_id}: its matrix has {mx.total} combinations; lanes were read from "
            f"the first {MAX_COMBOS}"
        )
    job_env = {**root_env, **_env_map(job, path)}
    tmpls = _with_tmpls(path, yamlpath.get(job, "with"), "with", _fixed_scope(job_env, inputs))
    called: list[Lane] = []
    if uses and uses.startswith("./") and read is not None and calls < MAX_CALL_DEPTH:
        budget = budget if budget is not None else [MAX_CALLED_JOBS]
        called = _called_lanes(
            path, job_id, job, uses, mx, job_env, inputs, read, notes, calls, budget
        )
    steps = yamlpath.get(job, "steps")
    for i, step in enumerate(steps.value if isinstance(steps, SequenceNode) else []):
        step_scope = _fixed_scope({**job_env, **_env_map(step, path)}, inputs)
        tmpls += _run_tmpls(
            path,
            step,
            _scalar(yamlpath.get(step, "name")) or f"step {i + 1}",
            "run",
            step_scope,
            file_lines,
            notes,
            read,
        )
        step_uses = _scalar(yamlpath.get(step, "uses")) or ""
        if step_uses.startswith("./"):
            tmpls += _action_tmpls(step_uses, step, path, step_scope, read, notes)
        elif step_uses:
            tmpls += _with_tmpls(path, yamlpath.get(step, "with"), "step with", step_scope)
    lanes: list[Lane] = []
    used: set[str] = set()
    for t in tmpls:
        lanes += _expand(t, mx, job_id, uses, used)
    matrix = yamlpath.get(strategy, "matrix")
    for key in yamlpath.keys(matrix):
        if MARKER_NAME.search(key) and key not in used and key not in ("include", "exclude"):
            seen: set[str] = set()
            for combo in mx.combos:
                v = combo.get(key) if isinstance(combo, dict) else None
                if isinstance(v, LStr) and str(v) not in seen:
                    seen.add(str(v))
                    lanes.append(
                        Lane(f"{job_id}[{key}={v}]", key, str(v), v.path, v.line, "matrix", uses)
                    )
    return lanes + called


def _input_defaults(path: str, root: Node) -> list[Lane]:
    on = yamlpath.get(root, "on")
    lanes = []
    for trigger in ("workflow_call", "workflow_dispatch"):
        inputs = yamlpath.get(yamlpath.get(on, trigger), "inputs")
        for inp, kn, spec in yamlpath.items(inputs) if isinstance(inputs, MappingNode) else []:
            default = yamlpath.get(spec, "default")
            if (
                MARKER_NAME.search(inp)
                and default is not None
                and (expr := _scalar(default)) is not None
            ):
                lanes.append(
                    Lane(
                        f"({trigger} default)",
                        inp,
                        expr,
                        path,
                        yamlpath.line_of(default),
                        f"{trigger} default",
                        None,
                        yamlpath.line_of(kn),
                    )
                )
    return lanes


def lanes_in_text(
    path: str, text: str, read: Reader | None = None, notes: list[str] | None = None
) -> tuple[list[Lane], str | None]:
    """Lanes in one workflow's text, or the reason it could not be read as a workflow.

    ``read`` gives other files at the same ref (local composite actions); ``notes`` collects what was
    bounded or missing (a capped matrix, an action without action.yml).
    """
    notes = notes if notes is not None else []
    try:
        return _lanes_in_text(path, text, read, notes)
    except yamlpath.YamlError as exc:
        return [], str(exc) if str(exc).startswith(
            ("not read", "cannot read")
        ) else f"not valid YAML: {exc}"


def _lanes_in_text(
    path: str, text: str, read: Reader | None, notes: list[str]
) -> tuple[list[Lane], str | None]:
    root = yamlpath.compose(text)
    if not isinstance(root, MappingNode):
        return [], f"top level is {yamlpath.kind(root)}, not a mapping"
    lanes = _input_defaults(path, root)
    jobs = yamlpath.get(root, "jobs")
    if jobs is not None and not isinstance(jobs, MappingNode):
        return lanes, f"jobs is {yamlpath.kind(jobs)}, not a mapping"
    root_env = _env_map(root, path)
    file_lines = text.splitlines()
    budget = [MAX_CALLED_JOBS]  # shared by every job of this file
    for job_id, _kn, job in yamlpath.items(jobs) if jobs is not None else []:
        lanes += _job_lanes(path, job_id, job, root_env, read, notes, file_lines, budget=budget)
    return lanes, None
