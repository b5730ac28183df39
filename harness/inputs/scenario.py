"""Scenario files: YAML (``yaml.safe_load``-compatible) → validated model, errors with file:line: key.

The toolkit (``Value``) wraps a composed YAML node: typed getters raise ``ScenarioError`` (a
UsageError → exit 2) as ``file:line: key: message``. Other engineers validate the top-level keys
they own (``Scenario.extra``) with the same toolkit.
"""

from __future__ import annotations

import builtins
import itertools
import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import yaml

from harness.columns.edits import Edit, edit_from_mapping, resolve_commits
from harness.columns.trees import Column
from harness.errors import UsageError
from harness.inputs import yamlpath
from harness.report.model import Severity

SEVERITIES = ("P1", "P2", "info")
EXTRA_KEYS = (
    "traces",
    "pins",
    "lanes",
    "selection",
    "mutations",
    "sweep",
    "backports",
    "engine",
    "source",
    "source_branch",
    "base",
    "head",
    "title",
)
PROBE_KEYS = ("refs", "controls", "probes", "rows", "expectations")
PROBE_COMMON = ("id", "kind", "rows", "timeout", "description", "expect", "columns")
EXPECT_KEYS = (
    "probe",
    "column",
    "row",
    "rows",
    "equals",
    "same_as",
    "differs_from",
    "status",
    "severity",
    "title",
)
EXPECT_CHECKS = ("equals", "same_as", "differs_from", "status")


class ScenarioError(UsageError):
    """Invalid scenario content; the message reads ``file:line: key: message``."""


class Value:
    """A YAML node with its location: typed getters that fail with file:line: key: message."""

    def __init__(self, node: yaml.Node, file: str, key: str = "") -> None:
        self.node, self.file, self.key = node, file, key

    @property
    def line(self) -> int:
        return self.node.start_mark.line + 1

    @property
    def where(self) -> str:
        """``file:line: key: `` prefix for messages raised elsewhere (e.g. edits)."""
        return (
            f"{self.file}:{self.line}: {self.key}: " if self.key else f"{self.file}:{self.line}: "
        )

    def error(self, message: str) -> ScenarioError:
        return ScenarioError(f"{self.where}{message}")

    def plain(self) -> Any:
        """The value exactly as ``yaml.safe_load`` would give it."""
        loader = yaml.SafeLoader("")
        try:
            return loader.construct_object(self.node, deep=True)
        except (yaml.YAMLError, ValueError, TypeError, OverflowError) as exc:
            raise self.error(str(exc).splitlines()[0]) from None
        finally:
            loader.dispose()

    # -- shape ------------------------------------------------------------------------------
    def is_map(self) -> bool:
        return isinstance(self.node, yaml.MappingNode)

    def is_list(self) -> bool:
        return isinstance(self.node, yaml.SequenceNode)

    def is_null(self) -> bool:
        return isinstance(self.node, yaml.ScalarNode) and self.node.tag == "tag:yaml.org,2002:null"

    def _child(self, node: yaml.Node, key: str) -> Value:
        return Value(
            node,
            self.file,
            f"{self.key}.{key}"
            if self.key and not key.startswith("[")
            else f"{self.key}{key}"
            if key.startswith("[")
            else key,
        )

    def map(self, allowed: Iterable[str] | None = None, required: Iterable[str] = ()) -> Fields:
        """A mapping with string keys; unknown keys (when ``allowed``) and missing required ones fail."""
        if not self.is_map():
            raise self.error(f"expected a mapping, got {self._kind()}")
        items: dict[str, Value] = {}
        for knode, vnode in self.node.value:
            if not isinstance(knode, yaml.ScalarNode):
                raise Value(knode, self.file, self.key).error("keys must be strings")
            k = str(knode.value)
            if k in items:
                raise Value(knode, self.file, self._child(knode, k).key).error("duplicate key")
            if allowed is not None and k not in allowed:
                raise Value(knode, self.file, self._child(knode, k).key).error(
                    f"unknown key (allowed: {', '.join(sorted(allowed))})"
                )
            items[k] = self._child(vnode, k)
        for r in required:
            if r not in items:
                raise self.error(f"missing required key {r!r}")
        return Fields(self, items)

    def list(self, *, allow_scalar: bool = False) -> list[Value]:
        if self.is_list():
            return [self._child(n, f"[{i}]") for i, n in enumerate(self.node.value)]
        if allow_scalar and isinstance(self.node, yaml.ScalarNode) and not self.is_null():
            return [self]
        raise self.error(f"expected a list, got {self._kind()}")

    # -- scalars ------------------------------------------------------------------------------
    def str(self, choices: Iterable[str] | None = None, *, nonempty: bool = True) -> str:
        v = self.plain()
        if not isinstance(v, str):
            raise self.error(f"expected a string, got {self._kind(v)}")
        if nonempty and not v.strip():
            raise self.error("must not be empty")
        if choices is not None and v not in list(choices):
            raise self.error(f"must be one of {', '.join(choices)}, got {v!r}")
        return v

    def int(self, minimum: int | None = None) -> int:
        v = self.plain()
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.error(f"expected an integer, got {self._kind(v)}")
        if minimum is not None and v < minimum:
            raise self.error(f"must be >= {minimum}, got {v}")
        return v

    def number(self, minimum: float | None = None) -> float:
        v = self.plain()
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.error(f"expected a number, got {self._kind(v)}")
        if not math.isfinite(v):
            raise self.error(f"expected a finite number, got {v}")
        if minimum is not None and v < minimum:
            raise self.error(f"must be >= {minimum}, got {v}")
        return float(v)

    def bool(self) -> builtins.bool:
        v = self.plain()
        if not isinstance(v, bool):
            raise self.error(f"expected true or false, got {self._kind(v)}")
        return v

    def str_list(self, *, allow_scalar: builtins.bool = True) -> builtins.list[builtins.str]:
        return [x.str() for x in self.list(allow_scalar=allow_scalar)]

    def _kind(self, v: Any = ...) -> builtins.str:
        if v is ...:
            if self.is_map():
                return "a mapping"
            if self.is_list():
                return "a list"
            v = self.plain()
        return "null" if v is None else f"{type(v).__name__} {v!r}"[:60]


class Fields:
    """A validated mapping of ``Value``s."""

    def __init__(self, owner: Value, items: dict[str, Value]) -> None:
        self.owner, self.items = owner, items

    def __contains__(self, key: str) -> bool:
        return key in self.items

    def __iter__(self):
        return iter(self.items)

    def get(self, key: str) -> Value | None:
        return self.items.get(key)

    def req(self, key: str) -> Value:
        if key not in self.items:
            raise self.owner.error(f"missing required key {key!r}")
        return self.items[key]

    def plain(self) -> dict[str, Any]:
        return {k: v.plain() for k, v in self.items.items()}


def _line_in(message: str) -> int:
    found = re.search(r"\(line (\d+)\)$", message)
    return int(found.group(1)) if found else 1


def load_value(path: str | Path) -> Value:
    """Compose a YAML file into a located root Value (a mapping)."""
    p = Path(path)
    try:
        if p.stat().st_size > yamlpath.MAX_BYTES:
            raise ScenarioError(f"{p}:1: not read: over {yamlpath.MAX_BYTES} bytes")
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{p}: no such scenario file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{p}: cannot read scenario: {exc}") from None
    try:
        bad = yamlpath.unreadable_character(text)
        if bad is not None:
            raise bad
        yamlpath.check_nesting(text)
        node = yaml.compose(text, Loader=yamlpath.LOADER)
    except yamlpath.YamlError as exc:
        raise ScenarioError(f"{p}:{_line_in(str(exc))}: {exc}") from None
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else 1
        raise ScenarioError(f"{p}:{line}: invalid YAML: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{p}:1: invalid YAML: {exc}") from None
    except RecursionError:
        raise ScenarioError(
            f"{p}:1: not read: nesting deeper than {yamlpath.MAX_DEPTH} levels"
        ) from None
    if node is None:
        raise ScenarioError(f"{p}:1: empty scenario")
    problem = yamlpath.limit_problem(node) or yamlpath.trusted_problem(node)
    if problem is not None:
        raise ScenarioError(f"{p}:{problem[1]}: {problem[0]}")
    root = Value(node, str(p))
    root.map()  # must be a mapping
    return root


# -- the probe model --------------------------------------------------------------------------

Row = dict[str, Any]


@dataclass
class Expectation:
    """What must hold in the table; a violation becomes a finding."""

    column: str
    probe: str | None = None
    rows: list[Row] | None = None  # None: every row
    equals: Any = None
    same_as: str | None = None
    differs_from: str | None = None
    status: str | None = None
    severity: Severity = "P1"
    title: str = ""
    where: str = ""
    has_equals: bool = False


@dataclass
class ProbeDef:
    """One probe: common keys parsed, kind-specific keys in ``spec`` (plain) and ``fields`` (located)."""

    id: str
    kind: str
    rows: list[Row]
    timeout: float = 60.0
    description: str = ""
    spec: dict[str, Any] = field(default_factory=dict)
    fields: Fields | None = field(default=None, repr=False)
    base_dir: Path = field(default_factory=Path)
    where: str = ""
    columns: list[str] | None = None  # the columns this probe runs in (default: all)


@dataclass
class Scenario:
    path: Path
    title: str
    columns: list[Column]
    probes: list[ProbeDef]
    expectations: list[Expectation]
    extra: dict[str, Value] = field(default_factory=dict)
    column_where: dict[str, Value] = field(default_factory=dict)

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)

    def check_refs(self, repo: Any) -> None:
        """Resolve every column's ref and apply-commit, failing at the scenario line that named it."""
        for col in self.columns:
            where = self.column_where.get(col.name)
            try:
                repo.resolve(col.ref or "")
            except UsageError as exc:
                raise where.error(str(exc)) if where else exc from None
            resolve_commits(repo, col.edits)


def row_label(row: Row) -> str:
    return (
        ", ".join(f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in row.items())
        or "(one row)"
    )


def parse_rows(v: Value) -> list[Row]:
    """A grid ``{param: [values]}`` (cartesian product, keys in order) or a list of row mappings."""
    if v.is_list():
        rows = []
        for item in v.list():
            rows.append(item.map().plain())
        if not rows:
            raise v.error("needs at least one row")
        return rows
    grid = v.map()
    names, values = [], []
    for k, item in grid.items.items():
        names.append(k)
        vals = item.plain()
        vals = vals if isinstance(vals, list) else [vals]
        if not vals:
            raise item.error("needs at least one value")
        values.append(vals)
    return [dict(zip(names, combo, strict=False)) for combo in itertools.product(*values)]


def _edit(v: Value) -> Edit:
    v.map()
    try:
        return edit_from_mapping(v.plain(), v.where)
    except ScenarioError:
        raise
    except UsageError as exc:
        raise ScenarioError(str(exc)) from None


def _expectation(
    v: Value, probe: str | None, names: list[str], probe_ids: list[str] | None
) -> Expectation:
    f = v.map(EXPECT_KEYS, required=("column",))
    col = f.req("column").str(names)
    checks = [k for k in EXPECT_CHECKS if k in f]
    if len(checks) != 1:
        raise v.error(f"needs exactly one of {', '.join(EXPECT_CHECKS)}")
    e = Expectation(column=col, probe=probe, where=v.where.rstrip(": "))
    if "probe" in f:
        if probe is not None:
            raise f.req("probe").error("not allowed inside a probe's expect")
        e.probe = f.req("probe").str(probe_ids)
    if "row" in f and "rows" in f:
        raise v.error("use either row or rows")
    if "row" in f:
        e.rows = [f.req("row").map().plain()]
    elif "rows" in f:
        e.rows = [x.map().plain() for x in f.req("rows").list()]
    if "equals" in f:
        e.equals, e.has_equals = f.req("equals").plain(), True
    if "same_as" in f:
        e.same_as = f.req("same_as").str(names)
    if "differs_from" in f:
        e.differs_from = f.req("differs_from").str(names)
    if "status" in f:
        e.status = f.req("status").str(("ok", "error", "timeout", "crash"))
    if "severity" in f:
        e.severity = cast(Severity, f.req("severity").str(SEVERITIES))
    if "title" in f:
        e.title = f.req("title").str()
    return e


def load_scenario(path: str | Path, *, require_probes: bool = True) -> Scenario:
    """Load and validate a scenario file (kind-specific probe keys are validated by each kind)."""
    root = load_value(path)
    top = root.map((*PROBE_KEYS, *EXTRA_KEYS))
    base_dir = Path(path).resolve().parent
    columns, where = _columns(top)
    if not columns and require_probes:
        raise root.error("refs: at least one ref column is required")
    names = [c.name for c in columns]
    default_rows = parse_rows(top.req("rows")) if "rows" in top else [{}]
    probes_v = top.get("probes")
    if probes_v is None and require_probes:
        raise root.error("probes: at least one probe is required")
    probes, pending = _probes(probes_v, default_rows, names, base_dir)
    expectations = _expectations(top, probes, pending, names)
    title = top.req("title").str() if "title" in top else Path(path).stem
    extra = {k: v for k, v in top.items.items() if k in EXTRA_KEYS}
    return Scenario(Path(path), title, columns, probes, expectations, extra, where)


def _columns(top: Fields) -> tuple[list[Column], dict[str, Value]]:
    """The ``refs`` and ``controls`` columns, each with where the scenario names its ref."""
    columns: list[Column] = []
    where: dict[str, Value] = {}
    refs_v = top.get("refs")
    if refs_v is not None:
        for name, v in refs_v.map().items.items():
            if v.is_map():
                f = v.map(("ref", "description"), required=("ref",))
                ref, desc = (
                    f.req("ref").str(),
                    (f.req("description").str() if "description" in f else ""),
                )
            else:
                ref, desc = v.str(), ""
            columns.append(Column(name, ref, [], "ref", desc))
            where[name] = v
    ref_of = {c.name: c.ref for c in columns}
    controls_v = top.get("controls")
    if controls_v is not None:
        for name, v in controls_v.map().items.items():
            if name in where:
                raise v.error(f"column name {name!r} is already used by a ref")
            f = v.map(("ref", "edits", "description"), required=("ref", "edits"))
            ref = f.req("ref").str()
            edits = [_edit(x) for x in f.req("edits").list()]
            if not edits:
                raise f.req("edits").error("a control needs at least one edit")
            desc = f.req("description").str() if "description" in f else ""
            columns.append(Column(name, ref_of.get(ref, ref), edits, "control", desc))
            where[name] = f.req("ref")
    return columns, where


def _probes(
    probes_v: Value | None, default_rows: list[dict[str, Any]], names: list[str], base_dir: Path
) -> tuple[list[ProbeDef], list[tuple[Value, str]]]:
    """The probes, each validated by its kind, and their ``expect`` entries (read after all)."""
    from harness.probes.kinds import get_kind, kind_names

    probes: list[ProbeDef] = []
    pending: list[tuple[Value, str]] = []
    for pv in probes_v.list() if probes_v is not None else []:
        pf = pv.map()
        kind = pf.req("kind").str(kind_names())
        kmod = get_kind(kind)
        pf = pv.map((*PROBE_COMMON, *kmod.FIELDS), required=("id", "kind"))
        pid = pf.req("id").str()
        if any(p.id == pid for p in probes):
            raise pf.req("id").error(f"duplicate probe id {pid!r}")
        rows = parse_rows(pf.req("rows")) if "rows" in pf else default_rows
        spec = {k: v.plain() for k, v in pf.items.items() if k in kmod.FIELDS}
        probe = ProbeDef(
            pid,
            kind,
            rows,
            pf.req("timeout").number(0.1) if "timeout" in pf else 60.0,
            pf.req("description").str() if "description" in pf else "",
            spec,
            pf,
            base_dir,
            pv.where.rstrip(": "),
        )
        if "columns" in pf:
            probe.columns = [x.str(names) for x in pf.req("columns").list()]
        kmod.validate(probe, pf)
        probes.append(probe)
        if "expect" in pf:
            pending += [(x, pid) for x in pf.req("expect").list()]
    return probes, pending


def _expectations(
    top: Fields, probes: list[ProbeDef], pending: list[tuple[Value, str]], names: list[str]
) -> list[Expectation]:
    """Each probe's ``expect`` entries, then the scenario's ``expectations``."""
    expectations: list[Expectation] = []
    ids = [p.id for p in probes]
    by_id = {p.id: p for p in probes}
    for x, pid in pending:
        e = _expectation(x, pid, names, ids)
        allowed = by_id[pid].columns
        used = [c for c in (e.column, e.same_as, e.differs_from) if c]
        if allowed is not None and any(c not in allowed for c in used):
            raise x.error(f"names a column outside probe {pid!r}'s columns ({', '.join(allowed)})")
        expectations.append(e)
    if "expectations" in top:
        for x in top.req("expectations").list():
            e = _expectation(x, None, names, ids)
            if e.probe is None and len(probes) > 1:
                raise x.error("name the probe (the scenario has several)")
            expectations.append(e)
    return expectations
