"""Probe kinds, discovered: adding a kind is adding ``harness/probes/kinds/<kind>.py``.

A kind module defines:

- ``KIND: str`` — the name used as ``kind:`` in a scenario.
- ``FIELDS: tuple[str, ...]`` — kind-specific keys allowed in the probe mapping (the common keys
  ``id kind rows timeout description expect`` are handled by the scenario loader).
- ``validate(probe: ProbeDef, fields: Fields) -> None`` — check the kind-specific keys; raise
  ``fields.req(key).error("message")`` (→ ``file:line: key: message``, exit 2).
- ``inputs(probe: ProbeDef) -> list[Path]`` — files outside the column tree whose content belongs in
  the definition hash (probe files, stubs). Optional.
- ``run(ctx: KindContext) -> list[CellResult]`` — one result per ``ctx.rows``, same order. Runs the
  rows in ``ctx.tree.path`` with ``ctx.python``; never raises for a failing probe (a failing probe
  is a cell with status error/timeout/crash).
- ``key_parts(probe: ProbeDef, column: KeyColumn) -> JSON`` — optional: what a cell of this column
  depends on beyond the column's tree and edits, the interpreter and the definition, resolved for
  this column (the engine version a column maps to, the pin file's blob). Part of the cache key.
- ``reuse(probe: ProbeDef, cell: CellResult) -> bool`` — optional: whether a cached cell may still
  be served, judged from ``cell.used`` (e.g. the engine environment it ran in still has the same
  fingerprint). Without it every cached cell is served.
- ``VERSION: str`` — optional: bump when the kind's results change meaning (also in the cache key).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol, cast

STATUSES = ("ok", "error", "timeout", "crash")


@dataclass
class CellResult:
    """One cell: the outcome value (JSON-able), its status, a short detail, and proofs.

    ``proof`` maps a proof name to a value shown in the report, e.g. ``{"module decoder":
    "decoder.py"}`` (paths relative to the column tree) or ``{"extracted sha": "…"}``.
    """

    value: Any = None
    status: str = "ok"
    detail: str = ""
    proof: dict[str, str] = field(default_factory=dict)
    used: dict[str, str] = field(default_factory=dict)  # what the cell ran against (engine env …)
    # An outcome of the worker it ran on (its interpreter differs, a probe kind broke there), not
    # of the probe: shown, never cached (the key names the driver's interpreter and inputs).
    of_worker: bool = False

    def to_json(self) -> dict[str, Any]:
        d = {"value": self.value, "status": self.status, "detail": self.detail, "proof": self.proof}
        if self.used:
            d["used"] = self.used
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> CellResult:
        return cls(
            d.get("value"),
            d.get("status", "ok"),
            d.get("detail", ""),
            dict(d.get("proof") or {}),
            dict(d.get("used") or {}),
        )


@dataclass(frozen=True)
class KeyColumn:
    """What a kind may read about a column, before any tree is written, to build its key parts."""

    name: str
    commit_sha: str
    tree_sha: str
    edits: tuple[str, ...]
    repo: Any  # harness.git.GitRepo
    python: str


@dataclass
class KindContext:
    """What a kind receives for one (probe, column): the rows still to run and where to run them."""

    probe: Any  # harness.inputs.scenario.ProbeDef
    rows: list[dict[str, Any]]
    column: Any  # harness.columns.trees.Column
    tree: Any  # harness.columns.trees.Materialized (tree.path is the column's tree)
    python: str  # interpreter for this column
    repo: Any  # harness.git.GitRepo
    scratch: Path  # a harness-owned temp dir outside the tree, removed afterwards
    env: dict[str, str] = field(default_factory=dict)  # extra environment for child processes


class ProbeKind(Protocol):
    """The members every kind module has (the optional ones — ``inputs``, ``key_parts``,
    ``reuse``, ``VERSION`` — are described above and looked up with ``hasattr``)."""

    KIND: str
    FIELDS: tuple[str, ...]

    def validate(self, probe: Any, fields: Any) -> None: ...

    def run(self, ctx: KindContext) -> list[CellResult]: ...


_REQUIRED = ("KIND", "FIELDS", "validate", "run")


def _load(name: str) -> ProbeKind | None:
    mod: ModuleType = importlib.import_module(f"{__name__}.{name}")
    if all(hasattr(mod, member) for member in _REQUIRED) and mod.KIND == name:
        return cast(ProbeKind, mod)
    return None


_CACHE: dict[str, ProbeKind] = {}


def kind_names() -> list[str]:
    """The kinds, named by their modules (a kind's ``KIND`` is its module's name: a test holds every
    module to it), listed without importing them: a run imports only the kinds its probes use."""
    return sorted(
        info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_")
    )


def get_kind(name: str) -> ProbeKind:
    if name not in _CACHE:
        kind = _load(name) if name in kind_names() else None
        if kind is None:
            raise KeyError(name)
        _CACHE[name] = kind
    return _CACHE[name]


def kinds() -> dict[str, ProbeKind]:
    """The registry: every module under ``harness/probes/kinds/`` with the ``ProbeKind`` members."""
    return {name: get_kind(name) for name in kind_names()}
