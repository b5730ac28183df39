"""Root causes: open findings that stem from one commit or are of one kind, with one action each.

Computed once, before rendering (renderers only lay ``Report.causes`` out): the verdict layer's
causes and actions are decided here, from each finding's kind and the typed ``Finding.anchors`` the
check that raised it set (never from a section's ``data`` or rendered text). Each open finding gets
*anchors*: ``commit:<sha>`` (a commit the pick lacks, a gap, a control's apply-commit),
``lacks:<pick>`` (the pick that lacks the PR-branch commits), ``pick:<sha>`` (the pick a finding is
about), ``control:<probe>/<column>`` and ``missing-file:<path>`` (a file a missing commit changes,
which a control edits: the control re-does that commit); findings sharing an anchor join one cause.
A pick's files are no anchor: two picks (a superset and a subset) that touch one file are two
stories. Findings without anchors are grouped by kind.

A cause is titled by a finding of its own severity; its action names the commits (short SHAs) and
is safe: no "re-pick it" for a pick without a source or an intended adaptation, never "make HEAD
like a control" that the probe expected HEAD to differ from (that control puts the bug back).
Titles and actions list at most ``model.BOUND`` items. Finding ids are untouched: the ledger tracks each.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection
from dataclasses import dataclass

from harness.infra.lean import lazy_re
from harness.report.model import (
    SEVERITY_RANK,
    Cause,
    Finding,
    MissingCommit,
    PickFacts,
    Report,
    bounded,
    open_findings,
)

_SHA = lazy_re(r"\b[0-9a-f]{10,40}\b")
_TEXT = 200  # characters of a title or action before "…"

# kind → (title, action) for findings grouped by kind; {shas} lists the commits they name.
_BY_KIND: dict[str, tuple[str, str]] = {
    "shape-signoff": (
        "Signed-off-by does not match the author",
        "re-sign {shas} so Signed-off-by matches the author (git rebase --signoff BASE)",
    ),
    "lane-selects-nothing": (
        "a CI lane selects no test",
        "fix the lane's -m expression or mark the tests it should run",
    ),
    "unknown-marker": (
        "tests or lanes use undeclared markers",
        "declare the markers (pytest.ini / pyproject)",
    ),
    "gap-not-pinned": ("no test pins a gap", "add a test that fails without {shas}"),
    "test-gap-pinned": (
        "tests fail at HEAD until a commit the pick lacks is picked",
        "cherry-pick -x {shas} onto {head}, then re-run",
    ),
    "tests-gap-not-pinned": (
        "no test of the suite pins a commit the pick lacks",
        "cherry-pick -x {shas} onto {head}, and add a test that fails without it",
    ),
    "follow-up-not-picked": (
        "later fixes that name a picked source were not picked",
        "cherry-pick -x {shas} onto {head}, or say in the PR why this release does not need {them}",
    ),
    "liveness-failed": (
        "the liveness control was not killed",
        "choose a test selection that runs the mutated code, then re-run",
    ),
    "selection-empty": (
        "the test selection ran no test",
        "fix --tests / -m so the selection runs tests",
    ),
    "drift-conflict": (
        "the trial merge conflicts",
        "rebase {head} onto BASE and resolve the conflicts",
    ),
    "conflict-markers": (
        "a pick commits conflict markers",
        "remove the conflict markers that {shas} commit, then re-run",
    ),
    "harness-error": (
        "a section crashed inside the harness",
        "re-run with HARNESS_DEBUG=1 and report the traceback as a harness bug",
    ),
}


def _short(sha: str) -> str:
    return sha[:8]


def _clip(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= _TEXT else text[: _TEXT - 1].rstrip() + "…"


def _control_name(probe_col: str) -> str:
    probe, _, col = probe_col.rpartition("/")
    return f"{col} (probe {probe})" if probe else col


def _missing(report: Report) -> list[MissingCommit]:
    """The commits missing from the pick, in history order: every missing-commit finding's, open
    or not."""
    found = (f.anchors["missing"] for f in report.findings if "missing" in f.anchors)
    return list({c["sha"]: c for c in found}.values())


def anchors(f: Finding, missing_paths: Collection[str] = ()) -> list[str]:
    """What a finding is about: commits, the pick, controls (empty when it names none);
    ``missing_paths``: the files the missing commits change."""
    a = f.anchors
    out: list[str] = []
    if "missing" in a:
        out.append(f"commit:{a['missing']['sha']}")
        out.append(f"lacks:{a.get('lacks', '')}")
        out += [f"missing-file:{p}" for p in a["missing"]["paths"]]
    elif "pick" in a:
        out.append(f"pick:{a['pick']['sha']}")
        if "lacks" in a:
            out.append(f"lacks:{a['lacks']}")  # the PR-branch commits this pick lacks
    elif "commit" in a:
        out.append(f"commit:{a['commit']}")
    for control in a.get("controls", ()):
        out.append(f"control:{control['name']}")
        out += [f"commit:{c}" for c in control["commits"]]
        # A control that edits what a missing commit changes re-does that commit.
        out += [f"missing-file:{p}" for p in control["paths"] if p in missing_paths]
    return out


class _Groups:
    """Union-find over finding ids joined by shared anchors."""

    def __init__(self, ids: list[str]) -> None:
        self.parent = {i: i for i in ids}

    def find(self, i: str) -> str:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


def group(report: Report, head: str = "HEAD") -> list[Cause]:
    """Open findings grouped by root cause, most severe first, each with one action line."""
    live = open_findings(report)
    order = {f.id: i for i, f in enumerate(report.findings)}
    live.sort(key=lambda f: order.get(f.id, 0))
    missing = _missing(report)
    missing_paths = {p for c in missing for p in c["paths"]}
    found = {f.id: anchors(f, missing_paths) for f in live}
    groups = _Groups([f.id for f in live])
    owner: dict[str, str] = {}
    for f in live:
        for a in found[f.id] or [f"kind:{f.kind}"]:
            if a in owner:
                groups.union(owner[a], f.id)
            else:
                owner[a] = f.id
    members: dict[str, list[Finding]] = {}
    for f in live:
        members.setdefault(groups.find(f.id), []).append(f)
    ctx = _Context(head, missing, _picks(report))
    causes = [_cause(fs, [a for f in fs for a in found[f.id]], ctx) for fs in members.values()]
    return sorted(
        causes, key=lambda c: -SEVERITY_RANK[c.severity]
    )  # stable: first appearance within a severity


def _picks(report: Report) -> dict[str, PickFacts]:
    return {
        f.anchors["pick"]["sha"]: f.anchors["pick"] for f in report.findings if "pick" in f.anchors
    }


@dataclass
class _Context:
    """What grouping reads once: HEAD's name, the missing commits and the picks."""

    head: str
    missing: list[MissingCommit]
    picks: dict[str, PickFacts]


def _shas_of(fs: list[Finding]) -> str:
    """The commits a kind-group's findings are about (a follow-up's own sha, not its source's)."""
    shas: list[str] = []
    for f in fs:
        if f.kind == "follow-up-not-picked":
            shas.append(f.key.rpartition(":")[2][:8])
        elif f.kind == "conflict-markers":
            shas += [m.group(0)[:8] for m in _SHA.finditer(f.key)][:1]
        else:
            shas += [m.group(0)[:8] for m in _SHA.finditer(f.key + " " + f.title)]
    return bounded(list(dict.fromkeys(shas)), sep=" ")


def _pick_action(lead: Finding, pick: str, ctx: _Context) -> str:
    """What to do about one pick, by the kind of its most severe finding: never "re-pick" a pick
    that has no source or whose difference may be an intended adaptation."""
    p = ctx.picks.get(pick, PickFacts(sha=pick, source="", differ=(), lacking=()))
    src = p["source"]
    of = f" {_short(src)}" if src else ""
    differ = list(p["differ"])
    lacking = list(p["lacking"]) or differ
    files = f" ({bounded(differ)})" if differ else ""
    if lead.kind == "pick-subset" and lead.severity == "P1":
        return (
            f"add to {_short(pick)} the lines of its source{of} it lacks ({bounded(lacking)}), "
            f"or say in its commit message why {ctx.head} must not have them"
        )
    if lead.kind in ("pick-adapted", "pick-superset", "pick-subset"):
        return (
            f"review {_short(pick)} against its source{of}{files}; if the difference is an "
            "intended adaptation, say so in its commit message (or waive the finding by id)"
        )
    if lead.kind == "pick-no-source":
        return (
            f"name the source of {_short(pick)} (cherry-pick -x), or say in its commit message "
            f"that it is made for {ctx.head} only"
        )
    if lead.kind == "end-state-introduced":
        return (
            f"check the lines at {ctx.head} that neither {_short(pick)}'s source{of} nor another "
            f"pick wrote{files}"
        )
    return f"review {_short(pick)}{files}"


def _control_action(
    fs: list[Finding], controls: list[str], commits: list[str], ctx: _Context
) -> str:
    """Never "make HEAD like the control" unless the probe expected HEAD to be the same as it."""
    lead = fs[0]
    if lead.kind == "probe-control-broken":
        return (
            f"fix the edit of control {', '.join(controls)} in the scenario (it does not apply "
            "to its ref), then re-run: until then the probe table has no control"
        )
    expects = lead.anchors.get("expects")
    if expects is None:
        return (
            "read the probe table against its control, fix the code or the expectation, then re-run"
        )
    col, rel, other = expects
    if rel == "same as" and commits:
        return f"cherry-pick -x {bounded([_short(c) for c in commits], sep=' ')} onto {ctx.head}, then re-run"
    if rel == "same as":
        edits = bounded(
            [re.sub(r"\s+", " ", e) for e in lead.anchors.get("other_edits", ())], 3, "; "
        )
        return (
            f"make {ctx.head} behave like control {other}"
            + (f" (it {edits})" if edits else "")
            + ", or correct the expectation; then re-run"
        )
    # "differs from": the control is the bug (put back); HEAD must not become it
    return (
        f"{col} should differ from control {other} (the code without the fix) and "
        f"does not: check that {ctx.head} carries the fix and that the probe exercises it"
    )


def _cause(fs: list[Finding], anchor_list: list[str], ctx: _Context) -> Cause:
    severity = max((f.severity for f in fs), key=lambda s: SEVERITY_RANK[s])
    lead = next(f for f in fs if f.severity == severity)  # titled by a finding of its severity
    ids = [f.id for f in fs]
    anchor_set = set(anchor_list)
    commits = [c for c in ctx.missing if f"commit:{c['sha']}" in anchor_set]
    controls = sorted(
        {_control_name(a.partition(":")[2]) for a in anchor_set if a.startswith("control:")}
    )
    picks = list(dict.fromkeys(a.partition(":")[2] for a in anchor_list if a.startswith("pick:")))
    if commits:
        shas = [_short(c["sha"]) for c in commits]
        listed = bounded([f"{_short(c['sha'])} {c['subject']}" for c in commits], sep="; ")
        title = f"the pick lacks {len(commits)} commit(s) of its source: {listed}"
        action = f"cherry-pick -x {bounded(shas, sep=' ')} onto {ctx.head}"
        key = "commits:" + " ".join(shas)
    elif controls:
        control_commits = sorted(
            {a.partition(":")[2] for a in anchor_set if a.startswith("commit:")}
        )
        title = f"{lead.title} (control {', '.join(controls)})"
        action = _control_action(
            [lead, *(f for f in fs if f is not lead)], controls, control_commits, ctx
        )
        key = "controls:" + ",".join(controls)
    elif picks:
        title = lead.title + (f" (+{len(fs) - 1} more finding(s) of it)" if len(fs) > 1 else "")
        action = _pick_action(lead, picks[0], ctx)
        key = "pick:" + picks[0]
    else:
        kind = lead.kind
        generic, action = _BY_KIND.get(
            kind, ("", "fix it, or waive it by id in the policy file (docs/ci.md)")
        )
        title = lead.title if len(fs) == 1 or not generic else f"{generic} ({len(fs)})"
        action = action.format(
            shas=_shas_of(fs) or "the commits listed",
            head=ctx.head,
            them="it" if len(fs) == 1 else "them",
        )
        key = "kind:" + kind
    digest = hashlib.sha1(key.encode()).hexdigest()[:10]
    return Cause(
        id=f"cause-{digest}",
        severity=severity,
        title=_clip(title),
        action=_clip(action),
        findings=ids,
    )
