"""The fidelity Section from what the check found: the picks table, one file table per pick, the
end-state, PR-branch and follow-up tables, folded details, controls, what was not verified and the
JSON ``data`` (``JSON_LINES`` caps each line list); ``build_section`` builds it, its findings
from findings.py.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from harness.checks.fidelity.anchors import judged
from harness.checks.fidelity.compare import (
    EMPTY_SHA1,
    PICK_STATUSES,
    Side,
    checksum,
    compare_files,
    pick_status,
)
from harness.checks.fidelity.findings import pick_findings
from harness.checks.fidelity.followups import FollowUp, worth_a_look
from harness.checks.fidelity.missing import MissingResult, iso
from harness.checks.fidelity.patches import PatchStore
from harness.checks.fidelity.pick import PickResult
from harness.git import Commit
from harness.git.picks import ENTRY_SHA, LogEntry
from harness.report.model import (
    SEVERITY_RANK,
    Cell,
    Code,
    Control,
    Details,
    Finding,
    Section,
    Sha,
    Table,
    bounded,
)
from harness.report.safe import line_shown

SECTION_ID = "fidelity"
_DETAIL_LINES = 20
# Lines of one file's only_in_pick / only_in_source lists the JSON keeps; past it the list stops
# and ``<list>_left_out`` counts the rest (a 20k-file vendoring pick made a 45 MB report.json).
JSON_LINES = 200
PICK_LEGEND = (
    "status: identical (± lines equal per file; context may differ) · whitespace-only "
    "(equal once whitespace is removed) · superset (pick carries all of the source and more) · "
    "subset (pick carries part of the source) · adapted (both sides have lines the other lacks) · "
    "no-source · forward-merged (no other source: made on this branch, the commit itself reached "
    "the source branch through a merge). via: map (--map) · trailer (cherry picked from, "
    "[PR #N/X backport], Backport of X; only a commit on the source) · change-id (the source "
    "commit with the pick's Gerrit Change-Id) · pr-number (#N in the subject, confirmed by content) · "
    "patch-id (same ± lines per file, whitespace ignored) · similarity "
    "(share of signed lines; confidence 0..1) · title (a PR title one merge carries) · authored "
    "(the one source commit with the pick's author date and subject, confirmed by content) · subject "
    "(the one source commit with the pick's subject, PR numbers aside, at least as similar as "
    "similarity asks) · twin (a bot's commit with the pick's subject, made within a day of it, "
    "all of whose lines the pick carries) · merge "
    "(the source is a merge commit: the PR's first-parent diff, found by trailer, PR number or title, "
    "or content; its commits are listed)"
)
FILE_LEGEND = (
    "+/−: added/removed lines; +sha1/−sha1: first 8 hex of sha1 over those lines, each ending "
    "in \\n, prefix and context stripped. status: identical · context-only (± equal, surrounding "
    "lines differ: not a mismatch) · whitespace-only · adapted · extra-in-pick · missing-from-pick "
    "· renamed (paired across paths) · binary (blob ids compared)"
)


def _figures(side: Side | None) -> dict[str, object] | None:
    return side.figures() if side else None


def _signed(lines: Sequence[bytes]) -> str:
    shown = [line_shown(ln) for ln in lines[:_DETAIL_LINES]]
    if len(lines) > _DETAIL_LINES:
        shown.append(f"… {len(lines) - _DETAIL_LINES} more")
    return "\n".join(shown) or "(none)"


def build_section(
    results: list[PickResult],
    merges: list[Commit],
    missing: MissingResult | None,
    history: list[LogEntry],
    store: PatchStore,
    source_branch: str | None,
    followups: Sequence[FollowUp] = (),
    source_name: str = "the source branch",
    release_paths: Sequence[re.Pattern[str]] = (),
) -> Section:
    counts = Counter(r.status for r in results)
    summary = f"{len(results)} pick(s): " + (
        ", ".join(f"{counts[s]} {s}" for s in PICK_STATUSES if counts[s]) or "none"
    )
    if merges:
        summary += f"; {len(merges)} merge commit(s) in the range not compared"
    tables = [_picks_table(results)]
    tables += [
        _file_table(i, r) for i, r in enumerate(results, 1) if r.files or r.resolution.sources
    ]
    tables.append(_end_state_table(results))
    details = _details(results)
    data: dict[str, object] = {
        "picks": [_pick_data(r) for r in results],
        "merges": [{"sha": m.sha, "subject": m.subject} for m in merges],
        "missing_commits": [],
        "cut_point": None,
        "source_branch_pick": None,
    }
    not_verified = _not_verified(store, merges, missing)
    if missing is not None:
        data["missing_commits"] = [c.as_dict() for c in missing.missing]
        data["branch_commits"] = [c.as_dict() for c in missing.commits]
        data["cut_point"], data["source_branch_pick"] = missing.cut_point, missing.pick
        tables.append(_branch_table(missing, source_branch))
    data["follow_ups"] = [f.as_dict() for f in followups]
    tables.append(_followups_table(followups, source_name, history))
    controls = _controls(results, store)
    findings = pick_findings(
        results, merges, set(map(ENTRY_SHA, history)), missing, followups, release_paths
    )
    _weigh(tables, results, findings)
    section = Section(
        SECTION_ID,
        "Cherry-pick fidelity",
        summary,
        tables,
        findings,
        controls,
        not_verified,
        details,
        data,
        judged=judged(results, findings),
    )
    # Paths and subjects that are not UTF-8 reach us with surrogate escapes: each byte is shown
    # as ``\xNN`` by ``check.fidelity_check`` (``escaped``), else as the section is rendered or kept.
    return section


def _pick_row(i: int, r: PickResult) -> list[Cell]:
    pa = sum(len(f.pick.added) for f in r.files if f.pick)
    pr = sum(len(f.pick.removed) for f in r.files if f.pick)
    sa = sum(len(f.source.added) for f in r.files if f.source)
    sr = sum(len(f.source.removed) for f in r.files if f.source)
    src: Cell = (
        Sha(r.resolution.sources[0])
        if len(r.resolution.sources) == 1
        else Code(" + ".join(s[:12] for s in r.resolution.sources))
        if r.resolution.sources
        else "—"
    )
    conf = f"{r.resolution.confidence:.2f}" if r.resolution.confidence is not None else "—"
    return [
        i,
        Sha(r.commit.sha),
        r.commit.subject,
        src,
        r.resolution.via or "—",
        conf,
        r.status,
        len(r.files),
        f"+{pa} −{pr}",
        f"+{sa} −{sr}" if r.resolution.sources else "—",
    ]


def _weigh(tables: list[Table], results: Sequence[PickResult], findings: list[Finding]) -> None:
    """Each pick's table and the follow-up table weigh as much as the findings they back, so a
    comment cut to fit keeps them before the tables of release commits and info-only picks."""
    rank: dict[str, int] = {}
    for f in findings:
        anchor = "follow-ups" if f.kind == "follow-up-not-picked" else f.key.partition(":")[0]
        rank[anchor] = max(rank.get(anchor, 0), SEVERITY_RANK[f.severity])
    titles = {_pick_title(i, r): r.commit.sha for i, r in enumerate(results, 1)}
    for t in tables:
        if t.title in titles:
            t.weight = rank.get(titles[t.title], 0)
        elif t.title.startswith("Follow-ups on "):
            t.weight = rank.get("follow-ups", 0)


def _pick_title(i: int, r: PickResult) -> str:
    src = ", ".join(s[:12] for s in r.resolution.sources) or "no source"
    return f"{i}. {r.commit.sha[:12]} ← {src}: {r.commit.subject} ({r.status})"


def _file_table(i: int, r: PickResult) -> Table:
    rows: list[list[Cell]] = []
    for f in r.files:
        p = f.pick.figures() if f.pick else None
        s = f.source.figures() if f.source else None

        def cells(x: dict[str, Any] | None) -> list[Cell]:
            return (
                [x["added"], x["removed"], Code(str(x["added_sha1"])), Code(str(x["removed_sha1"]))]
                if x
                else ["—", "—", "—", "—"]
            )

        rows.append([Code(f.path), f.status, *cells(p), *cells(s), f.note])
    return Table(
        _pick_title(i, r),
        [
            "file",
            "status",
            "pick +",
            "pick −",
            "pick +sha1",
            "pick −sha1",
            "source +",
            "source −",
            "source +sha1",
            "source −sha1",
            "note",
        ],
        rows,
        legend=FILE_LEGEND,
        control=f"checksum of empty input = {EMPTY_SHA1} (sha1 of nothing); a side with no ± "
        f"lines shows it",
        collapsed=r.status == "identical",
    )


def _capped(name: str, lines: Sequence[bytes]) -> dict[str, object]:
    """``name``: the first JSON_LINES lines as a report shows them; ``<name>_left_out``: how many
    more there are, only when some are left out."""
    out: dict[str, object] = {name: [line_shown(x) for x in lines[:JSON_LINES]]}
    if len(lines) > JSON_LINES:
        out[f"{name}_left_out"] = len(lines) - JSON_LINES
    return out


def _pick_data(r: PickResult) -> dict[str, object]:
    res = r.resolution
    # A later copy of this branch's own commit on the source (its release notes forwarded) is no
    # source: named as ``forward_port`` with the status against it, never as ``source``/``status``.
    copy = bool(r.copy_of and res.sources)
    sources = [] if copy else res.sources
    return {
        "pick": r.commit.sha,
        "source": sources[0] if sources else None,
        "sources": sources,
        "source_via": None if copy else res.via,
        "confidence": None if copy else res.confidence,
        "status": "no-source" if copy else r.status,
        "forward_port": {"sha": res.sources[0], "of": r.copy_of, "status": r.status}
        if copy
        else None,
        "subject": r.commit.subject,
        "note": res.note,
        "files": [
            {
                "path": f.path,
                "status": f.status,
                "same": f.same,
                "note": f.note,
                "pick": _figures(f.pick),
                "source": _figures(f.source),
                "source_path": f.source.path if f.source else None,
                **_capped("only_in_pick", f.only_pick),
                **_capped("only_in_source", f.only_source),
            }
            for f in r.files
        ],
        "end_state": [e.as_dict() for e in r.end_state],
        "pr_commits": [{"sha": c, "subject": subj} for c, subj in r.pr_commits],
        "found_by": res.found_by,
        "unit": list(r.unit),
        "completed_by": r.completed_by,
        "copy_of": r.copy_of,
    }


def _picks_table(results: Sequence[PickResult]) -> Table:
    return Table(
        "Picks",
        [
            "#",
            "pick",
            "subject",
            "source",
            "via",
            "confidence",
            "status",
            "files",
            "pick ±",
            "source ±",
        ],
        [_pick_row(i, r) for i, r in enumerate(results, 1)],
        legend=PICK_LEGEND,
        control=f"checksum of empty input = {EMPTY_SHA1}; self-comparison "
        "of the first pick is listed under Controls",
    )


def _end_state_table(results: Sequence[PickResult]) -> Table:
    end_rows: list[list[Cell]] = [
        [i, Sha(r.commit.sha), Code(e.path), e.status, e.pre_existing, e.other_picks, e.introduced]
        for i, r in enumerate(results, 1)
        for e in r.end_state
    ]
    return Table(
        "End state: each touched file at HEAD vs right after the source",
        ["#", "pick", "file", "end state", "pre-existing", "other picks", "introduced"],
        end_rows,
        legend="differing lines of an ordered diff (a moved line counts): pre-existing (the fork "
        "point already differed from the source's parent) · "
        "other picks (changed by another pick of the range) · introduced (the rest); a binary "
        "file, or one over the size limit (git diffs it as binary), compares blob ids: "
        "binary-differs, or other-picks when another pick left HEAD's blob",
        control="'same' rows: the blob at HEAD has the same object id as after the source",
        collapsed=len(end_rows) > 20,
    )


def _details(results: Sequence[PickResult]) -> list[Details]:
    """Folded evidence: the lines only one side has, a merge's PR commits, end-state lines."""
    details = []
    for i, r in enumerate(results, 1):
        for f in r.files:
            if f.only_pick or f.only_source:
                details.append(
                    Details(
                        f"pick {i} {r.commit.sha[:12]} {f.path} ({f.status}): lines only in one "
                        "side",
                        f"only in pick:\n{_signed(f.only_pick)}\n\nonly in source:\n"
                        f"{_signed(f.only_source)}",
                    )
                )
    for i, r in enumerate(results, 1):
        if r.pr_commits:
            details.append(
                Details(
                    f"pick {i} {r.commit.sha[:12]}: the PR behind merge {r.resolution.sources[0][:12]} "
                    f"({len(r.pr_commits)} commit(s))",
                    "\n".join(f"{c[:12]} {subj}" for c, subj in r.pr_commits),
                )
            )
        for e in r.end_state:
            if e.status != "same":
                more = e.pre_existing + e.other_picks + e.introduced - len(e.lines)
                details.append(
                    Details(
                        f"pick {i} {r.commit.sha[:12]} {e.path}: end state {e.status} (HEAD vs "
                        "after the source, in file order)",
                        "\n".join(f"{c}: {ln}" for c, ln in e.lines)
                        + (f"\n… {more} more" if more > 0 else "")
                        or "(no line differs: end of line or final newline only)",
                    )
                )
    return details


def _not_verified(
    store: PatchStore, merges: Sequence[Commit], missing: MissingResult | None
) -> list[str]:
    not_verified = [
        "whether the picks build or pass tests: content only here (compare's tests section, or "
        "`harness tests`, runs them)",
        "file mode changes (only ± lines and blob ids are compared)",
        f"the lines of a file over {store.repo.big_file >> 20} MiB (git diffs it as binary: blob "
        "ids are compared)",
        "similarity search reads only source commits that touch the unresolved picks' paths and "
        "were committed within a year of the pick",
        "end state: which commit introduced a line (lines are classed by content, in file order)",
        "follow-ups found only by content (a change to the source's lines within 30 days) are a "
        "heuristic, listed as info (worth a look): a refactor that rewrites those lines is listed too",
    ]
    if merges:
        not_verified.append("merge commits inside the range (listed, not compared)")
    if missing is None:
        not_verified.append(
            "commits added to the source PR after the pick was cut (no --source-branch)"
        )
    return not_verified


def _branch_table(missing: MissingResult, source_branch: str | None) -> Table:
    return Table(
        f"PR branch {source_branch}: commits vs pick "
        f"{missing.pick[:12] if missing.pick else '(none matched)'}",
        ["commit", "author date", "subject", "files ±", "carried", "state"],
        [
            [
                Sha(c.sha),
                iso(c.author_time),
                c.subject,
                ", ".join(f"{f['path']} +{f['added']} −{f['removed']}" for f in c.files),
                f"{c.contained:.2f}",
                c.state + (" (cut point)" if c.sha == missing.cut_point else ""),
            ]
            for c in missing.commits
        ],
        legend="carried: share of the commit's signed lines found in the pick; cut point: "
        "the last commit the pick carries (≥ 0.80); later commits are missing",
        control="the cut-point row itself is carried (≥ 0.80): it shows the match works",
    )


def _followups_table(
    followups: Sequence[FollowUp], source_name: str, history: Sequence[LogEntry]
) -> Table:
    return Table(
        f"Follow-ups on {source_name} not picked",
        ["source", "follow-up", "subject", "why", "files", "severity"],
        [
            [
                Sha(f.unit[0]),
                Sha(f.sha),
                f.subject,
                f.why,
                bounded(f.paths),
                f.severity if f.named else "info (worth a look)",
            ]
            for f in [*(f for f in followups if f.named), *worth_a_look(followups)]
        ],
        legend="later commits on the source branch that name a source: Fixes: trailer, "
        "revert, follow-up to #N, the same PR number or the same Fixes #N issue (P1 when "
        "they touch non-test files the pick carries; info when only the issue names them); "
        "then, ranked, candidates that only "
        "change (within 30 days) lines the source added (info: worth a look); ones a pick "
        "carries (≥ 0.80 of their lines) are left out",
        control=f"{len(history)} source commit(s) after the fork point searched; a pick's own "
        "source never lists itself",
    )


def _controls(results: Sequence[PickResult], store: PatchStore) -> list[Control]:
    self_files = next((r for r in results if r.files), None)
    controls = [
        Control(
            "empty-input checksum", f"sha1 of no lines → {checksum([])}", checksum([]) == "da39a3ee"
        )
    ]
    if self_files:
        own = [f.pick for f in self_files.files if f.pick]
        # A pick compared with itself must come out identical: the comparator is not blind.
        st = pick_status(
            [
                f
                for f in compare_files(
                    store.full[self_files.commit.sha].files, store.full[self_files.commit.sha].files
                )
            ],
            True,
        )
        controls.append(
            Control(
                "self-comparison",
                f"pick {self_files.commit.sha[:12]} ({len(own)} file(s)) vs itself → {st}",
                st == "identical",
            )
        )
    # How many diff-tree processes a run started is not reported: with the history index it
    # depends on what earlier runs kept, and the same inputs must give the same report.
    return controls
