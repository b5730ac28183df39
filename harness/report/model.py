"""The report model: what checks produce and renderers consume.

Checks build these objects; renderers only lay them out. Every value a renderer prints is
already computed here (including marks such as "same").
"""

# No ``from __future__ import annotations`` here: the TypedDicts below would be given their
# fields' types as strings, which ``typing`` compiles one by one (~1 ms of every run's start).
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

Severity = Literal["P1", "P2", "info"]
SEVERITY_RANK: dict[str, int] = {"P1": 2, "P2": 1, "info": 0}


@dataclass(frozen=True)
class Code:
    """A cell shown as code (paths, expressions, lines of source)."""

    text: str


@dataclass(frozen=True)
class Sha:
    """A commit or blob id; renderers show a fixed-length prefix as code, never mangled."""

    sha: str

    @property
    def short(self) -> str:
        return self.sha[:12]


Cell = str | int | float | None | Code | Sha


@dataclass
class Table:
    """Rows × columns of cells, with its legend and the control that makes it evidence."""

    title: str
    columns: list[str]
    rows: Sequence[Sequence[Cell]]
    legend: str = ""
    control: str = ""
    collapsed: bool = False  # long evidence: renderers fold it (<details> in Markdown)
    # What it backs: the severity rank (SEVERITY_RANK) of the most severe finding it is the
    # evidence for; a renderer that must drop tables keeps these first (comment.py).
    weight: int = 0


class MissingCommit(TypedDict):
    """A PR-branch commit the pick lacks."""

    sha: str
    subject: str
    paths: tuple[str, ...]  # the files it changes


class PickFacts(TypedDict):
    """A pick, as its action names it."""

    sha: str
    source: str  # its first source, "" when it has none
    differ: tuple[str, ...]  # files that differ from the source
    lacking: tuple[str, ...]  # files with source lines the pick lacks


class ControlFacts(TypedDict):
    """A probe's control column."""

    name: str  # "<probe>/<column>"
    commits: tuple[str, ...]  # the commits its edits apply
    paths: tuple[str, ...]  # the files its edits change


class Location(TypedDict):
    """A place in the reviewed tree a finding points at (SARIF's location, a JUnit case's file)."""

    path: str  # repository-relative, "/"-separated
    line: int | None  # 1-based; None: the file as a whole


class Judged(TypedDict):
    """An item a section judges (a pick): one JUnit test case, failing with its findings."""

    name: str
    outcome: str  # the section's word for it ("identical", "subset", …)
    findings: tuple[str, ...]  # the ids of the findings about it


class Anchors(TypedDict, total=False):
    """What a finding is about, set by the check that raised it: the verdict's causes group and
    word findings by these (harness/verdict/causes.py), never by a section's ``data``."""

    commit: str  # a commit the finding names (a gap no test pins)
    missing: MissingCommit  # the PR-branch commit a missing-commit finding is about
    lacks: str  # the pick that lacks the PR branch's later commits ("" when none matched)
    pick: PickFacts  # the pick the finding is about
    controls: tuple[ControlFacts, ...]  # the controls a probe finding is about
    expects: tuple[str, str, str]  # (column, "same as" | "differs from", other column)
    other_edits: tuple[str, ...]  # the edits of that other column, as the scenario describes them
    where: tuple[Location, ...]  # the files (and lines) it is at, most telling first


# Field metadata of what renderers leave out: the report's bytes do not depend on it.
UNRENDERED = {"rendered": False}


@dataclass
class Finding:
    """Something a reviewer must act on (P1/P2) or know (info)."""

    kind: str
    severity: Severity
    title: str
    detail: str = ""
    key: str = ""  # what makes this finding the same one across runs
    id: str = ""
    status: str = ""  # ledger: new / still present / resolved / retracted (set by compare)
    waived: str = ""  # reason, when a policy waiver applies
    # Not rendered; kept with the section by the caches (plain values, so their codecs keep it).
    anchors: Anchors = field(default_factory=lambda: Anchors(), metadata=UNRENDERED)

    def __post_init__(self) -> None:
        if not self.id:
            digest = hashlib.sha1(
                f"{self.kind}\0{self.key or self.title}".encode("utf-8", "surrogateescape")
            ).hexdigest()[:10]
            self.id = f"{self.kind}-{digest}"


@dataclass
class Control:
    """A control that shows a table or cell was really computed (and what it showed)."""

    name: str
    result: str
    ok: bool | None = None  # None: informational


@dataclass
class Details:
    """Long evidence: folded by renderers."""

    summary: str
    body: str


@dataclass
class Cause:
    """Findings that stem from one root cause (a missing commit, a file, a control) and what to do.

    Computed by ``harness/verdict/causes.py`` before rendering; ``findings`` are the member findings' ids
    (the ledger keeps tracking each finding by its own id)."""

    id: str
    severity: Severity
    title: str
    action: str
    findings: list[str] = field(default_factory=list)


@dataclass
class Section:
    """One check's outcome."""

    id: str
    title: str
    summary: str = ""
    tables: list[Table] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    controls: list[Control] = field(default_factory=list)
    not_verified: list[str] = field(default_factory=list)
    details: list[Details] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)  # machine-readable payload for JSON
    # The items it judges (JUnit's test cases); not in report.json, whose tables show them.
    judged: list[Judged] = field(default_factory=list, metadata=UNRENDERED)


@dataclass
class Report:
    """The whole report. ``generated`` is the only part allowed to differ between runs."""

    title: str
    command: str
    sections: list[Section] = field(default_factory=list)
    inputs: dict[str, str] = field(default_factory=dict)
    generated: str = ""
    not_verified: list[str] = field(default_factory=list)
    unjudged: str = ""  # why the picks were not judged at all (the verdict's first line says it)
    verdict: str = ""
    causes: list[Cause] = field(
        default_factory=list
    )  # open findings grouped by root cause (verdict/causes.py)
    fail_on: str = ""  # the gate's threshold (set with the verdict by verdict/gate.py)
    blocking: list[str] = field(default_factory=list)  # ids of the findings that block the gate

    @property
    def findings(self) -> list[Finding]:
        return [f for s in self.sections for f in s.findings]

    def all_not_verified(self) -> list[str]:
        seen: list[str] = []
        for item in [*self.not_verified, *(n for s in self.sections for n in s.not_verified)]:
            if item not in seen:
                seen.append(item)
        return seen


BOUND = 5  # items a title, detail or action lists before "… N more"


def bounded(items: Sequence[str], limit: int = BOUND, sep: str = ", ") -> str:
    """At most ``limit`` items, then how many more: titles and actions stay one line whatever the
    range (a cause once listed 57 paths, twice)."""
    shown = list(dict.fromkeys(items))
    if len(shown) <= limit:
        return sep.join(shown)
    return sep.join(shown[:limit]) + f"{sep}… {len(shown) - limit} more"


def open_findings(report: Report) -> list[Finding]:
    """P1/P2 findings that are not resolved or waived, most severe first (stable order)."""
    live = [
        f
        for f in report.findings
        if f.severity != "info" and not f.waived and f.status not in ("resolved", "retracted")
    ]
    return sorted(live, key=lambda f: -SEVERITY_RANK[f.severity])
