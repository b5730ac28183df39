"""The section's findings: each pick's verdict (release-only, a later copy, completed by other
picks, or its status with what differs) and notes, the range's (picks merged forward, a shared
source, merges inside the range), the PR-branch commits a pick lacks and the follow-ups not
picked; ``pick_findings`` returns them anchored (anchors.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from harness.checks.fidelity.anchors import anchored
from harness.checks.fidelity.followups import WORTH_A_LOOK, FollowUp, worth_a_look
from harness.checks.fidelity.missing import MissingResult
from harness.checks.fidelity.pick import PickResult
from harness.checks.fidelity.release import RELEASE_SUBJECT, moves_versions, release_reason
from harness.checks.fidelity.severity import pick_severity
from harness.git import Commit
from harness.report.model import Finding, Severity, bounded


def _pick_severity(r: PickResult) -> Severity | None:
    return pick_severity(r.status, r.files, r.absent, r.already)[0]


def _numbers(picks: Sequence[int], most: int = 12) -> str:
    """Pick numbers, the first ``most`` of them and how many more."""
    shown = ", ".join(map(str, picks[:most]))
    return shown + (f" and {len(picks) - most} more" if len(picks) > most else "")


def pick_findings(
    results: Sequence[PickResult],
    merges: Sequence[Commit],
    history_shas: set[str],
    missing: MissingResult | None,
    followups: Sequence[FollowUp] = (),
    release_paths: Sequence[re.Pattern[str]] = (),
) -> list[Finding]:
    out = []
    for i, r in enumerate(results, 1):
        verdict = _pick_verdict(i, r, results, release_paths)
        if verdict is not None:
            out.append(verdict)
        out += _pick_notes(i, r, history_shas)
    out += _range_findings(results, merges)
    if missing:
        out += _missing_findings(missing)
    out += _followup_findings(followups)
    return anchored(out, results, missing)


def _pick_verdict(
    i: int,
    r: PickResult,
    results: Sequence[PickResult],
    release_paths: Sequence[re.Pattern[str]],
) -> Finding | None:
    """The finding that judges pick ``i``: release-only, a later copy, completed by other picks,
    or its status with what differs; None for a pick that needs none."""
    sha, subj = r.commit.sha, r.commit.subject
    sev = _pick_severity(r)
    why_release = (
        release_reason(
            subj,
            [f.path for f in r.files],
            bool(RELEASE_SUBJECT.search(subj)),
            release_paths,
            moves_versions([(f.path, f.pick.added, f.pick.removed) for f in r.files if f.pick]),
        )
        if sev and r.status != "identical"
        else None
    )
    if why_release:
        return Finding(
            "pick-release-commit",
            "info",
            f"pick {i} {sha[:12]}: release-only commit ({r.status}), no source expected: {subj}",
            why_release,
            key=f"{sha}:own-release",
        )
    elif sev and r.copy_of:
        own = "this pick" if r.copy_of == sha else f"pick {r.copy_of[:12]}"
        return Finding(
            "pick-release-commit",
            "info",
            f"pick {i} {sha[:12]}: its only candidate source "
            f"{r.resolution.sources[0][:12]} is a later copy of this branch's own commit "
            f"({own}): {subj}",
            f"status against the copy: {r.status}",
            key=f"{sha}:copy",
        )
    elif sev and r.completed_by:
        nums = [str(n) for n, o in enumerate(results, 1) if o.commit.sha in r.completed_by]
        return Finding(
            "pick-completed",
            "info",
            f"pick {i} {sha[:12]} is {r.status} on its own, complete "
            f"with pick(s) {', '.join(nums)}: {subj}",
            "together they carry the source's net change in every file",
            key=f"{sha}:completed",
        )
    elif sev:
        lacking = [f.path for f in r.files if f.only_source or f.status == "missing-from-pick"]
        detail = {
            "no-source": "no source found on the source branch"
            + (f" ({r.resolution.note})" if r.resolution.note else ""),
            "subset": f"source lines missing from the pick in {', '.join(lacking)}",
            "superset": "the pick carries changes its source does not",
            "adapted": f"files that differ: {', '.join(f.path for f in r.files if not f.same)}",
            "whitespace-only": "re-indented relative to its source",
        }[r.status]
        set_aside = pick_severity(r.status, r.files, r.absent, r.already)[1]
        if set_aside:
            detail += f" ({set_aside})"
        return Finding(
            f"pick-{r.status}",
            sev,
            f"pick {i} {sha[:12]} is {r.status}: {subj}",
            detail,
            key=f"{sha}:{r.status}",
        )
    return None


def _pick_notes(i: int, r: PickResult, history_shas: set[str]) -> list[Finding]:
    """A source off the source branch; an identical pick whose end state still differs."""
    sha = r.commit.sha
    out = []
    for s in r.resolution.sources:
        # A PR-branch commit picked to complete a squash's pick belongs to that PR: not off-branch.
        if s not in history_shas and r.unit == tuple(r.resolution.sources):
            out.append(
                Finding(
                    "source-off-branch",
                    "info",
                    f"pick {i} {sha[:12]}: source {s[:12]} is not "
                    "on the source branch since the fork point",
                    key=f"{sha}:{s}",
                )
            )
    if r.status == "identical":  # otherwise the pick's own difference already explains it
        intro = [e.path for e in r.end_state if e.status in ("introduced", "binary-differs")]
        if intro:
            out.append(
                Finding(
                    "end-state-introduced",
                    "P2",
                    f"pick {i} {sha[:12]}: end state differs from "
                    "the source beyond pre-existing differences",
                    ", ".join(intro),
                    key=f"{sha}:end",
                )
            )
    return out


def _range_findings(results: Sequence[PickResult], merges: Sequence[Commit]) -> list[Finding]:
    """Picks merged forward, picks sharing one source, merges inside the range."""
    out = []
    forward = [i for i, r in enumerate(results, 1) if r.status == "forward-merged"]
    if forward:
        out.append(
            Finding(
                "pick-forward-merged",
                "info",
                f"{len(forward)} pick(s) made on this branch reached the source branch through a "
                "merge of it, with no other source: " + _numbers(forward),
                "the commit itself is on the source branch (a release branch merged forward)",
                key="forward-merged",
            )
        )
    by_source: dict[tuple[str, ...], list[int]] = {}
    for i, r in enumerate(results, 1):
        if r.resolution.sources:
            by_source.setdefault(tuple(r.resolution.sources), []).append(i)
    for sources, picks in by_source.items():
        if (
            len(picks) > 1
        ):  # e.g. two version bumps with equal ± lines: the pairing is content-true but suspect
            out.append(
                Finding(
                    "shared-source",
                    "info",
                    f"picks {', '.join(map(str, picks))} resolve to the same "
                    f"source {', '.join(x[:12] for x in sources)}",
                    "check that each pick really backports that commit",
                    key=":".join(sources),
                )
            )
    for m in merges:
        out.append(
            Finding(
                "merge-in-range",
                "info",
                f"merge commit {m.sha[:12]} inside the range is not compared: {m.subject}",
                key=m.sha,
            )
        )
    return out


def _missing_findings(missing: MissingResult) -> list[Finding]:
    out = []
    for c in missing.missing:
        msev: Severity = "P2" if c.test_only else "P1"
        out.append(
            Finding(
                "missing-commit",
                msev,
                f"PR-branch commit {c.sha[:12]} is not in the pick: {c.subject}",
                ", ".join(f"{f['path']} +{f['added']} −{f['removed']}" for f in c.files),
                key=f"{missing.pick}:{c.sha}",
            )
        )
    return out


def _followup_findings(followups: Sequence[FollowUp]) -> list[Finding]:
    out = []
    for fu in followups:
        if fu.named:
            out.append(
                Finding(
                    "follow-up-not-picked",
                    fu.severity,
                    f"follow-up {fu.sha[:12]} of source {fu.unit[0][:12]} is not picked: {fu.subject}",
                    f"{fu.why}; {bounded(fu.paths)}",
                    key=f"{fu.unit[0]}:{fu.sha}",
                )
            )
    ranked = worth_a_look(followups)
    if ranked:
        # Named nothing: one info list, best first, capped (all of them in the follow-up table).
        out.append(
            Finding(
                "follow-up-worth-a-look",
                "info",
                f"{len(ranked)} later source commit(s) change lines a picked source added but name "
                f"no source: worth a look, not gated",
                "; ".join(
                    f"{fu.sha[:12]} ({fu.why.partition(' (')[2].rstrip(')') or fu.why}) "
                    f"after {fu.unit[0][:12]}: {fu.subject}"
                    for fu in ranked[:WORTH_A_LOOK]
                )
                + (
                    f"; … {len(ranked) - WORTH_A_LOOK} more in the table"
                    if len(ranked) > WORTH_A_LOOK
                    else ""
                ),
                key="worth-a-look:" + ",".join(sorted(f.sha for f in ranked)),
            )
        )
    return out
