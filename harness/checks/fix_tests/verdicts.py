"""Rows and verdicts: one row per node id (a file that collects in no column is one row of its
own), its outcome per column, and what it proves.

* ``proves-fix``: fails (or errors) without the fix, passes at HEAD;
* ``passes-both``: passes without the fix and at HEAD (info: it does not detect the fix);
* ``fails-head`` (P1): a test the pick carries fails at HEAD;
* ``source-test-fails-head`` (P1): a source's test the pick did not carry fails at HEAD (where
  the source's version of a file the pick carries does not load at HEAD at all, its tests are
  judged by the pick's version, and the file is one finding);
* ``flaky``: its outcome differed across columns and, run once more in the columns its verdict
  is read from (without the fix, at HEAD), differed from itself (info, never proof);
* ``env-error``: the file loads in no column (not evidence, never a pass);
* ``not-run``: HEAD gave no outcome (a crash or timeout of the whole run);
* ``skipped``: skipped at HEAD (a changed test's is said, info: it proves nothing here);
* ``passes-head``: passes at HEAD, skipped or absent without the fix.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

from harness.checks.fix_tests.cells import ColumnRun
from harness.checks.fix_tests.files import TestFile

FAILING = ("failed", "error")


@dataclass
class Row:
    nodeid: str
    file: str
    runner: str
    origin: str
    changed: bool
    outcomes: dict[str, str | None]
    verdict: str = ""
    detail: str = ""  # the first error line, where the row is a file that did not load
    skip_reason: str = ""  # why it was skipped at HEAD, where the runner says
    # column → the first error line, where the file did not load there (each of its tests errors)
    unloaded: dict[str, str] = field(default_factory=dict)
    lacks: dict[str, str] = field(default_factory=dict)  # column → the fixture its setup lacked
    source_unloaded: bool = False  # see ``mark_unloaded``
    flaky_in: list[str] = field(default_factory=list)


def file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def _suffix(nodeid: str) -> str:
    rest = nodeid.split("::", 1)[1] if "::" in nodeid else ""
    return rest.split("[", 1)[0]


def build_rows(
    files: Sequence[TestFile],
    runs: Sequence[ColumnRun],
    spans: dict[str, dict[str, tuple[int, int]]],
) -> list[Row]:
    """Rows for every node id any column ran, changed ones first (then by file and node id)."""
    by_file = {f.path: f for f in files}
    nodes: dict[str, Row] = {}
    for run in runs:
        for runner, cell in run.cells.items():
            for nid in cell.outcomes:
                f = by_file.get(file_of(nid))
                if f is None or f.runner != runner:
                    continue
                nodes.setdefault(nid, _row(nid, f, spans))
    for f in files:  # a file that collected nowhere is one row
        if not any(file_of(n) == f.path for n in nodes):
            nodes[f.path] = _row(f.path, f, spans)
            nodes[f.path].changed = bool(f.changed)
    for row in nodes.values():
        for run in runs:
            row.outcomes[run.column] = _outcome(row, run)
            got = run.cells.get(row.runner)
            if got is None:
                continue
            if row.nodeid in got.lacks:
                row.lacks[run.column] = got.lacks[row.nodeid]
            if row.file in got.errors:
                row.detail = row.detail or got.errors[row.file]
                if row.nodeid not in got.outcomes:
                    row.unloaded[run.column] = got.errors[row.file]
            if run.column == "head" and row.outcomes["head"] == "skipped":
                row.skip_reason = got.skips.get(row.nodeid, "")
    return sorted(nodes.values(), key=lambda r: (not r.changed, r.file, r.nodeid))


def _row(nid: str, f: TestFile, spans: dict[str, dict[str, tuple[int, int]]]) -> Row:
    span = spans.get(f.path, {}).get(_suffix(nid))
    changed = bool(span and any(span[0] <= ln <= span[1] for ln in f.changed))
    return Row(nid, f.path, f.runner, f.origin, changed, {})


def _outcome(row: Row, run: ColumnRun) -> str | None:
    cell = run.cells.get(row.runner)
    if cell is None:
        return None
    if row.nodeid in cell.outcomes:
        return cell.outcomes[row.nodeid]
    if row.file in cell.errors:  # the file did not load here: each of its tests errors
        return "error"
    return None


def rerun_candidates(rows: Sequence[Row]) -> list[Row]:
    """Rows whose outcome differs across the columns that ran them: run once more."""
    return [
        r
        for r in rows
        if r.nodeid != r.file and len({o for o in r.outcomes.values() if o is not None}) > 1
    ]


def mark_flaky(rows: Sequence[Row], again: Sequence[ColumnRun]) -> None:
    """A row whose second outcome in some column differs from its first is flaky there."""
    for row in rows:
        for run in again:
            second = _outcome(row, run) if run.cells else None
            first = row.outcomes.get(run.column)
            if first is not None and second is not None and second != first:
                row.flaky_in.append(run.column)


def judge(row: Row) -> str:
    """The row's verdict from its outcomes (see the module's list)."""
    o = row.outcomes
    ran = [v for v in o.values() if v is not None]
    if row.flaky_in:
        return "flaky"
    if row.nodeid == row.file and ran and all(v == "error" for v in ran):
        return "env-error"
    head, without = o.get("head"), o.get("without_fix")
    with_source = o.get("head_source_tests")
    # the source's version of a test that does not load at the source either, in this
    # environment (a plugin its conftest needs is not installed): no evidence either way
    unusable = o.get("source") == "error" and (
        with_source == "error" or (with_source is None and row.origin == "source")
    )
    # The source's version of a file the pick carries in its own version, where it does not load
    # at HEAD at all (a helper module HEAD lacks, another major version's API): one finding for
    # the file (section.py), and its tests judged by the pick's version, which ran.
    if source_file_unloaded(row):
        with_source = None
    if row.origin != "pick" and with_source in FAILING and head not in FAILING and not unusable:
        return "source-test-fails-head"  # the source's version of the test, at HEAD
    if head is None:
        return "env-error" if unusable else "not-run"
    if head in FAILING:
        if row.origin == "source":
            return "env-error" if unusable else "source-test-fails-head"
        return "fails-head"
    if head == "skipped":
        return "skipped"
    if without in FAILING:
        return "proves-fix"
    if without == "passed":
        return "passes-both"
    return "passes-head"


def source_file_unloaded(row: Row) -> bool:
    """Whether the source's version of the row's file, put at HEAD beside the pick's own, did not
    load there for a module the sources did not make (``mark_unloaded``)."""
    return row.source_unloaded


# What a file that does not load says it lacks: a module, or a name of a module.
_MISSING = re.compile(r"No module named '([\w.]+)'|cannot import name '\w+' from '([\w.]+)'")


def mark_unloaded(
    rows: Sequence[Row],
    source_changed: Collection[str],
    source_defines: Collection[str] | None = (),
) -> None:
    """Rows of a file the pick carries in its own version whose source version does not load
    beside HEAD because it imports a module the sources did not change (urllib3 1.26.x: main's
    test_https.py imports ``dummyserver.socketserver``, which 1.26 lacks and #3435 did not add),
    or does not run there because its setup asks for a fixture the sources did not add
    (``source_defines``: the names their added lines define; poetry 1.8: main's test_info.py asks
    for ``set_project_context``, a fixture of main's conftest). A module the sources changed, or
    a fixture they add, is what the pick may lack: not marked, so each test stays
    ``source-test-fails-head``; so do a timeout, a crash, any other error. ``source_defines``
    None: the sources change what is installed (a plugin's fixtures): no fixture is read so."""
    made = set()
    for path in source_changed:
        if path.endswith(".py"):
            mod = path[: -len(".py")].replace("/", ".")
            made.add(mod[: -len(".__init__")] if mod.endswith(".__init__") else mod)
    for r in rows:
        if r.origin != "both":
            continue
        said = r.unloaded.get("head_source_tests")
        m = _MISSING.search(said) if said is not None else None
        if m is not None:
            name = m.group(1) or m.group(2)
            r.source_unloaded = not any(mod == name or mod.endswith("." + name) for mod in made)
            continue
        lacked = r.lacks.get("head_source_tests")
        if source_defines is None or said is not None or lacked is None:
            continue
        if lacked not in source_defines:
            r.source_unloaded = True
            r.unloaded["head_source_tests"] = f"fixture '{lacked}' not found"


_DEFINED = re.compile(
    r"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\("
    r"|\bfixture\((?:[^()]|\([^()]*\))*?\bname\s*=\s*['\"](\w+)['\"]",
    re.MULTILINE,
)


def defined_names(added: Iterable[Sequence[bytes]]) -> set[str]:
    """The functions (and fixtures named with ``name=``, over several lines too) that each file's
    added lines define."""
    out: set[str] = set()
    for lines in added:
        text = b"\n".join(lines).decode("utf-8", "replace")
        out.update(a or b for a, b in _DEFINED.findall(text))
    return out
