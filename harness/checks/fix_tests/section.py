"""The tests section: per test file a table (node ids × without fix · head · source parent ·
source, and the verdict), its controls (the module proof, the unchanged tests passing in every
column, the without-fix column itself), findings for verdicts that need action, what was not
verified, and the JSON contract ``data.tests``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from harness.checks.fix_tests.columns import ORDER
from harness.checks.fix_tests.result import TestsRun
from harness.checks.fix_tests.verdicts import FAILING, Row, source_file_unloaded
from harness.checks.paths import is_test_path
from harness.infra.cache import provenance_text
from harness.report.model import (
    Anchors,
    Cell,
    Code,
    Control,
    Finding,
    Judged,
    Location,
    Section,
    Sha,
    Table,
)

HEADERS = {
    "without_fix": "without fix",
    "head": "head",
    "head_source_tests": "head + source's tests",
    "source_parent": "source parent",
    "source": "source",
}
LEGEND = (
    "without fix = BASE + the picks' test files (the revert control); source parent = the "
    "source's parent + its test files; ✱ = the test's code changed; — = the column has no such "
    "test; verdicts: proves-fix (fails without the fix, passes at head) · passes-both (does not "
    "detect the fix) · fails-head · source-test-fails-head · flaky (differed when run again) · "
    "env-error (the file gave no outcome in any column: not evidence) · skipped (at head: "
    "proves nothing here)"
)
MAX_ROWS = 60  # rows per file table; the JSON keeps every row


def tests_section(run: TestsRun) -> Section:
    counts = Counter(r.verdict for r in run.rows)
    about: dict[str, list[str]] = {}  # a test's node id → the ids of the findings about it
    findings = _findings(run, about)
    return Section(
        id="tests",
        title="Tests of the fix: without it, with it, at the source",
        summary=summary_line(run, counts),
        tables=_tables(run, findings),
        findings=findings,
        controls=_controls(run),
        not_verified=_not_verified(run),
        data={
            "tests": [_row_data(r) for r in run.rows],
            "columns": {c.column: c.key for c in run.runs},
            "files": [
                {"path": f.path, "runner": f.runner, "origin": f.origin}
                for f in run.selection.files
            ],
            "support_files": [f.path for f in run.selection.support],
            "pins": [
                {
                    "commit": g.commit,
                    "applies": g.applies,
                    "scope": g.scope,
                    "pinned_by": g.pinned_by,
                    "turns_green": g.greened,
                    "problem": g.problem,
                }
                for g in run.gaps
            ],
            "hunks": [
                {
                    "file": h.file,
                    "start": h.start,
                    "end": h.end,
                    "added": h.added,
                    "removed": h.removed,
                    "failing": h.failing,
                    **({"problem": h.problem} if h.problem else {}),
                }
                for h in run.hunks
            ],
            **({"lanes": run.lanes.nodes} if run.lanes is not None and run.lanes.names else {}),
            "removed_strings": [
                {"string": x.text, "references": x.references, "source_keeps": x.source_keeps}
                for x in run.strings
            ],
            "environment": run.env,
            "counts": dict(sorted(counts.items())),
        },
        judged=[
            Judged(name=r.nodeid, outcome=r.verdict, findings=tuple(about.get(r.nodeid, ())))
            for r in run.rows
        ],
    )


def summary_line(run: TestsRun, counts: Counter[str]) -> str:
    """``tests: 1 proves the fix · 33 unchanged pass · 0 fail at head`` (or why nothing ran)."""
    if run.env_error:
        return f"tests: not run, the environment could not be built ({run.env_error[:120]})"
    if not run.selection.files:
        return "tests: no test file changed by the picks or their sources (nothing verified)"
    fail = counts["fails-head"] + counts["source-test-fails-head"]
    unchanged = sum(1 for r in run.rows if not r.changed and r.verdict == "passes-both")
    parts = [
        f"{counts['proves-fix']} prove{'s' if counts['proves-fix'] == 1 else ''} the fix",
        f"{unchanged} unchanged pass",
        f"{fail} fail at head",
    ]
    for v in ("flaky", "env-error", "not-run"):
        if counts[v]:
            parts.append(f"{counts[v]} {v}")
    skipped = sum(1 for r in run.rows if r.changed and r.verdict == "skipped")
    if skipped:
        parts.append(f"{skipped} changed skipped at head")
    line = "tests: " + " · ".join(parts)
    applied = [g for g in run.gaps if g.applies and not g.problem]
    if run.gaps:
        line += f" · pins: {sum(1 for g in applied if g.pinned_by)} of {len(run.gaps)} missing commit(s) pinned"
    if run.hunks and not _hunks_measured(run):
        line += " · hunks: not measured (no test passes at head)"
    elif run.hunks:
        line += f" · hunks: {sum(1 for h in run.hunks if h.failing)} of {len(run.hunks)} needed"
    line += f" · removed strings: {len(run.strings)} still referenced"
    proving = [r.nodeid for r in run.rows if r.verdict == "proves-fix"]
    if run.lanes is not None and run.lanes.names and proving:
        names = sorted({x for n in proving for x in run.lanes.nodes.get(n, [])})
        # Where some CI runs were not read as lanes (a plain pytest, tox, make), "no lane" would
        # say more than was read: none of the lanes read.
        none = (
            "no lane" if run.lanes.complete else "none of the lanes read (not every CI run is one)"
        )
        line += f" · lanes: proving test(s) in {', '.join(names[:4]) or none}"
    return line


def _cell(outcome: str | None, flaky: bool) -> str:
    return "—" if outcome is None else outcome + (" (flaky)" if flaky else "")


def _tables(run: TestsRun, findings: Sequence[Finding]) -> list[Table]:
    cols = [c.column for c in run.runs]
    tables = []
    weight = 3 if any(f.severity == "P1" for f in findings) else 0
    for f in run.selection.files:
        rows = [r for r in run.rows if r.file == f.path]
        if not rows:
            continue
        shown = rows[:MAX_ROWS]
        body: list[list[Cell]] = [
            [
                Code(("✱ " if r.changed else "") + r.nodeid),
                *(_cell(r.outcomes.get(c), c in r.flaky_in) for c in cols),
                r.verdict,
            ]
            for r in shown
        ]
        unchanged = [r for r in rows if not r.changed and r.nodeid != r.file]
        passing = [r for r in unchanged if all(r.outcomes.get(c) in (None, "passed") for c in cols)]
        control = (
            f"{len(passing)} of {len(unchanged)} unchanged test(s) pass in every column"
            if unchanged
            else "no unchanged test in this file: the environment is shown by other files"
        )
        tables.append(
            Table(
                f"{f.path} ({f.origin}, {f.runner})"
                + (f" — first {MAX_ROWS} of {len(rows)} rows" if len(rows) > MAX_ROWS else ""),
                ["node id", *(HEADERS[c] for c in cols), "verdict"],
                body,
                legend=LEGEND,
                control=control,
                collapsed=len(body) > 12,
                weight=weight,
            )
        )
    tables += _review_tables(run, weight)
    return tables


def _review_tables(run: TestsRun, weight: int) -> list[Table]:
    """Missing commits applied to HEAD, the fix's hunks reverted one at a time, removed strings."""
    tables = []
    if run.gaps:
        tables.append(
            Table(
                f"Commits the pick lacks, each applied to HEAD — scope: {run.pin_scope}",
                [
                    "commit",
                    "subject",
                    "applies",
                    "pinned by (outcome changes)",
                    "turns green",
                    "problem",
                ],
                [
                    [
                        Sha(g.commit),
                        g.subject,
                        "yes" if g.applies else "no",
                        ", ".join(g.pinned_by[:10]) or "no test",
                        ", ".join(g.greened) or "—",
                        g.problem,
                    ]
                    for g in run.gaps
                ],
                control="the same scope at HEAD alone (the baseline every change is read against)",
                weight=weight,
            )
        )
    if run.hunks:
        passing = sorted(
            {n for n in (r.nodeid for r in run.rows if r.outcomes.get("head") == "passed")}
        )
        wf = [
            r.nodeid
            for r in run.rows
            if r.outcomes.get("without_fix") in FAILING and r.outcomes.get("head") == "passed"
        ]
        tables.append(
            Table(
                "Hunks of the fix reverted one at a time on HEAD: the tests that need each",
                ["hunk", "±", "tests failing with it reverted", "problem"],
                [
                    [
                        Code(h.label),
                        f"+{h.added} −{h.removed}",
                        ", ".join(h.failing[:10]) or "none",
                        h.problem,
                    ]
                    for h in run.hunks
                ],
                legend=f"{len(passing)} test(s) pass at HEAD; a hunk no test needs is not pinned",
                control=(
                    f"liveness: the whole-fix revert (without fix) fails {len(wf)} test(s) that "
                    "pass at HEAD"
                    if wf
                    else "liveness FAILED: the whole-fix revert fails no test — the pick's tests "
                    "do not detect the fix"
                ),
            )
        )
    if run.strings:
        tables.append(
            Table(
                "Strings the pick removed that HEAD still holds",
                ["string", "removed from", "base", "head", "source", "references at HEAD"],
                [
                    [
                        Code(x.text),
                        Code(x.removed_from),
                        x.counts.get("base", 0),
                        x.counts.get("head", 0),
                        x.counts.get("source") if "source" in x.counts else None,
                        ", ".join(x.references[:8])
                        + (
                            f" (+{len(x.references) - 8 + x.left_out})"
                            if len(x.references) > 8 or x.left_out
                            else ""
                        ),
                    ]
                    for x in run.strings
                ],
                control="counts are matching lines (git grep -F) in each tree",
                weight=weight,
            )
        )
    return tables


def _controls(run: TestsRun) -> list[Control]:
    out = [Control("environment", run.env or "none", not run.env_error)]
    if not run.selection.files:
        return out
    shadowed = [
        f"{c.column}: {p}: {v.get('file')}"
        for c in run.runs
        for cell in c.cells.values()
        for p, v in cell.proofs.items()
        if v.get("status") == "shadowed"
    ]
    imported = sorted(
        {
            p
            for c in run.runs
            for cell in c.cells.values()
            for p, v in cell.proofs.items()
            if v.get("status") == "in tree"
        }
    )
    if run.proof_paths:
        out.append(
            Control(
                "module path proof",
                "shadowed by an installed copy: " + "; ".join(shadowed[:5])
                if shadowed
                else (
                    f"{len(imported)} of {len(run.proof_paths)} fix module(s) imported from each "
                    "column's own tree"
                ),
                not shadowed,
            )
        )
    wf = next((c for c in run.runs if c.column == "without_fix"), None)
    failing = [r for r in run.rows if r.outcomes.get("without_fix") in FAILING]
    out.append(
        Control(
            "without-fix column (revert control)",
            f"{len(failing)} test(s) fail without the fix",
            wf is not None and bool(wf.cells),
        )
    )
    if _prov(run):  # the only line a warm run changes: how each column's answer was obtained
        out.append(Control("section cache", provenance_text(_prov(run)), True))
    unchanged = [r for r in run.rows if not r.changed and r.nodeid != r.file]
    ok = [
        r for r in unchanged if all(v in (None, "passed", "skipped") for v in r.outcomes.values())
    ]
    out.append(
        Control(
            "unchanged tests (the environment works)",
            f"{len(ok)} of {len(unchanged)} pass in every column",
            bool(unchanged) and len(ok) == len(unchanged),
        )
    )
    return out


def _prov(run: TestsRun) -> list[tuple[str, str]]:
    return [(c.key, "cache" if c.cached else "run") for c in run.runs if c.key]


def _finding(kind: str, sev: str, title: str, detail: str, key: str, **anchors: str) -> Finding:
    return Finding(kind, sev, title, detail, key=key, anchors=Anchors(**anchors))  # type: ignore[arg-type, typeddict-item]


def _findings(run: TestsRun, about: dict[str, list[str]]) -> list[Finding]:
    """The findings; each about one test is placed at its file and listed in ``about``."""
    out: list[Finding] = []
    if run.env_error:
        out.append(
            _finding(
                "tests-env-error",
                "P2",
                "evidence not obtained: the test environment could not be built",
                run.env_error,
                "env",
            )
        )
        return out
    env_files: set[str] = set()  # one "evidence not obtained" per file
    pinned = {nid: g.commit for g in run.gaps for nid in g.greened}
    subjects = {g.commit: g.subject for g in run.gaps}
    for r in run.rows:
        before = len(out)
        if r.verdict in ("fails-head", "source-test-fails-head"):
            whose = (
                "the source's test" if r.verdict == "source-test-fails-head" else "the pick's test"
            )
            commit = pinned.get(r.nodeid)
            detail = f"outcomes: {_outcomes_text(r)}"
            if commit:
                detail += f"; it passes once {commit[:10]} ({subjects[commit]}) is applied to HEAD"
            # The source's version of a file the pick carries as the sources changed it, a test
            # the change does not touch: the file differs from HEAD's by other commits of the
            # source branch (a backport to an old line: tests of the source's newer features).
            # Evidence, not a proven gap: P2, unless a commit the pick lacks turns it green.
            other = (
                r.verdict == "source-test-fails-head"
                and r.origin == "both"
                and not r.changed
                and r.file in run.same_files  # the pick carries the sources' change of the file
            )
            if other and not commit:
                detail += (
                    "; the pick's change does not touch this test: the source's file holds other "
                    "commits of the source branch (a test of one of them, or of one the fix needs)"
                )
            out.append(
                _finding(
                    "test-gap-pinned" if commit else r.verdict,
                    "P2" if other and not commit else "P1",
                    f"{whose} {r.nodeid} fails at HEAD"
                    + (f" until {commit[:10]} is picked" if commit else ""),
                    detail,
                    f"{r.nodeid}:{commit or ''}",
                    **({"commit": commit} if commit else {}),
                )
            )
        elif r.verdict == "env-error" and r.file not in env_files:
            env_files.add(r.file)
            out.append(
                _finding(
                    "tests-env-error",
                    "P2",
                    f"evidence not obtained: {r.file} gave no outcome in any column"
                    if r.nodeid == r.file
                    else f"evidence not obtained: the source's tests of {r.file} do not run in "
                    "this environment, at the source either",
                    r.detail,
                    r.file,
                )
            )
        elif r.verdict == "not-run" and not source_file_unloaded(r):
            # (a test only the source's version has, where that version does not run at HEAD,
            # is counted by the file's one source-tests-not-loading finding)
            out.append(
                _finding(
                    "tests-not-run",
                    "P2",
                    f"evidence not obtained: {r.nodeid} gave no outcome at HEAD",
                    "; ".join(_problems(run)) or "no outcome",
                    r.nodeid,
                )
            )
        elif r.verdict == "skipped" and r.changed:
            whose = "the source's test" if r.origin == "source" else "the pick's test"
            out.append(
                _finding(
                    "changed-test-skipped",
                    "info",
                    f"{whose} {r.nodeid} is skipped at HEAD: it proves nothing here",
                    f"outcomes: {_outcomes_text(r)}"
                    + (f"; at HEAD: {r.skip_reason}" if r.skip_reason else ""),
                    r.nodeid,
                )
            )
        elif r.verdict == "flaky":
            out.append(
                _finding(
                    "test-flaky",
                    "info",
                    f"{r.nodeid} is flaky ({', '.join(r.flaky_in)}): not counted as proof",
                    _outcomes_text(r),
                    r.nodeid,
                )
            )
        for f in out[before:]:
            f.anchors["where"] = (Location(path=r.file, line=None),)
            about.setdefault(r.nodeid, []).append(f.id)
    out += _unloaded_sources(run)
    out += _review_findings(run)
    ran = [r for r in run.rows if r.outcomes.get("head") is not None and r.nodeid != r.file]
    if ran and not any(r.verdict == "proves-fix" for r in run.rows):
        out.append(
            _finding(
                "no-test-proves-fix",
                "info",
                "no test of the pick or its source fails without the fix",
                _why_none(ran),
                "none",
            )
        )
    return out


def _unloaded_sources(run: TestsRun) -> list[Finding]:
    """One finding per file whose source version does not load at HEAD beside the pick's own
    (``verdicts.source_file_unloaded``): not one per test of it."""
    out: list[Finding] = []
    seen: set[str] = set()
    for r in run.rows:
        if r.file in seen or not source_file_unloaded(r):
            continue
        seen.add(r.file)
        why = r.unloaded["head_source_tests"]
        does = "does not run" if why.startswith("fixture '") else "does not load"
        theirs = sum(
            1
            for x in run.rows
            if x.file == r.file and source_file_unloaded(x) and x.verdict == "not-run"
        )
        if theirs:
            why += f"; {theirs} test(s) only the source's version has: not judged (the pick's lacks them)"
        f = _finding(
            "source-tests-not-loading",
            "info",
            f"the source's version of {r.file} {does} at HEAD: its tests were judged by the "
            "pick's version",
            f"at HEAD: {why}",
            r.file,
        )
        f.anchors["where"] = (Location(path=r.file, line=None),)
        out.append(f)
    return out


def _hunks_measured(run: TestsRun) -> bool:
    """Whether some test passes at HEAD: where none does (none ran, or every one fails there), a
    reverted hunk can break none, and "no test needs it" would be said of nothing."""
    return any(r.outcomes.get("head") == "passed" for r in run.rows)


def _why_none(ran: Sequence[Row]) -> str:
    """What the tests that ran did instead of proving the fix: the changed ones, where any ran."""
    changed = [r for r in ran if r.changed]
    which = "changed test(s)" if changed else "test(s) that ran"
    rows = changed or list(ran)
    counts = Counter(r.verdict for r in rows)
    said = {
        "passes-both": "passes-both (pass without the fix too: they do not detect it)",
        "skipped": "skipped (at HEAD: not run here)",
        "passes-head": "passes-head (no outcome, or a skip, without the fix)",
    }
    parts = [f"{n} {said.get(v, v)}" for v, n in sorted(counts.items())]
    return f"of {len(rows)} {which}: " + "; ".join(parts)


def _review_findings(run: TestsRun) -> list[Finding]:
    out: list[Finding] = []
    for g in run.gaps:
        if g.applies and not g.problem and not g.pinned_by:
            out.append(
                _finding(
                    "tests-gap-not-pinned",
                    "P2",
                    f"no test pins {g.commit[:10]} ({g.subject}), which the pick lacks",
                    f"HEAD + {g.commit[:10]} gives every test of {g.scope} the outcome it has at "
                    "HEAD alone",
                    f"{g.commit}:tests",
                    commit=g.commit,
                )
            )
    lanes = run.lanes
    if lanes is not None and lanes.complete:
        for r in run.rows:
            if r.verdict == "proves-fix" and r.nodeid in lanes.nodes and not lanes.nodes[r.nodeid]:
                out.append(
                    _finding(
                        "proving-test-in-no-lane",
                        "P2",
                        f"the fix's test {r.nodeid} runs in no CI lane",
                        "lanes read at HEAD: " + ", ".join(lanes.names[:12]),
                        r.nodeid,
                    )
                )
    measured = _hunks_measured(run)
    for h in run.hunks:
        if measured and not h.problem and not h.failing:
            out.append(
                _finding(
                    "hunk-not-needed",
                    "info",
                    f"no test of the pick needs the hunk {h.label}",
                    f"reverting it alone (+{h.added} −{h.removed}) leaves every test passing",
                    h.label,
                )
            )
    for x in run.strings:
        tests = [r for r in x.references if is_test_path(r.rsplit(":", 1)[0])]
        where = tests or x.references
        out.append(
            _finding(
                "removed-string-referenced",
                "P1" if x.source_keeps else "P2",
                f"the pick removed {x.text!r} from {x.removed_from}, and "
                + (
                    f"a test still looks for it at {where[0]}"
                    if tests
                    else f"{where[0]} still holds it"
                ),
                ("the source still has it; " if x.source_keeps else "")
                + "references at HEAD: "
                + ", ".join(x.references[:8]),
                f"{x.text}:{x.removed_from}",
            )
        )
    return out


def _problems(run: TestsRun) -> list[str]:
    out = []
    for c in run.runs:
        if c.problem:
            out.append(f"{c.column}: {c.problem}")
        out += [f"{c.column} ({n}): {cell.problem}" for n, cell in c.cells.items() if cell.problem]
    return out


def _outcomes_text(r: Row) -> str:
    return ", ".join(f"{HEADERS[c]} {r.outcomes.get(c) or '—'}" for c in ORDER)


def _not_verified(run: TestsRun) -> list[str]:
    out = []
    if not run.selection.files:
        out.append(
            "the tests section ran no test: neither the picks nor their sources change a test "
            "file the project's runners discover (never read as '0 failures')"
        )
    if run.no_source:
        out.append("no pick has a source: the source and source-parent columns were not run")
    if len(run.sources.commits) > 1:
        out.append(
            f"{len(run.sources.commits)} source commits: the source column is the newest, the "
            "source parent the oldest's parent (what landed between them runs too)"
        )
    out += [f"test file deleted, not run: {p}" for p in run.selection.deleted]
    out += [
        f"the source's {src} not run: the pick carries its change as {mine} (fidelity pairs them), "
        "which ran at HEAD; the source's whole file beside HEAD would run tests of the source's "
        "other changes"
        for src, mine in run.selection.carried
    ]
    if run.selection.left_out:
        out.append(f"{len(run.selection.left_out)} test file(s) past the cap, not run")
    for count, what in (
        (run.pins_left_out, "commit(s) the pick lacks past the cap, not applied to HEAD"),
        (run.hunks_left_out, "hunk(s) of the fix past the cap, not reverted"),
        (run.strings_left_out, "removed string(s) past the cap, not looked for"),
    ):
        if count:
            out.append(f"{count} {what}")
    out += [
        f"changed, not a test file: {f.path} (it travels with the tests)"
        for f in run.selection.support
    ]
    out += run.env_notes
    if run.lanes is not None and not run.lanes.complete:
        out += ["lanes of each test not verified: " + w for w in run.lanes.why_not]
    out += [f"not evidence: {p}" for p in _problems(run)]
    notes = sorted({n for c in run.runs for cell in c.cells.values() for n in cell.notes})
    out += notes
    out.append(
        "only the test files the picks and their sources change ran; the rest of the suite did not"
    )
    return out


def _row_data(r: Row) -> dict[str, object]:
    return {
        "nodeid": r.nodeid,
        "file": r.file,
        "origin": r.origin,
        "changed": r.changed,
        "outcomes": {
            c: r.outcomes.get(c) for c in ORDER if c != "head_source_tests" or c in r.outcomes
        },  # the four columns of the contract, null where not run; the fifth where it ran
        "verdict": r.verdict,
        **({"flaky_in": r.flaky_in} if r.flaky_in else {}),
        **({"skip_reason": r.skip_reason} if r.skip_reason else {}),
    }
