"""Root causes: open findings that stem from the same missing commit, file or control, with one action each.

Computed once, before rendering (renderers only lay ``Report.causes`` out). Each open finding gets
*anchors* read from its key and its section's data — ``commit:<sha>`` (a commit the pick lacks, a
gap, a control's apply-commit), ``file:<path>`` (a file a pick got wrong, a missing commit touched,
or a control edits), ``control:<probe>/<column>`` and ``edit:<what it does>`` — and findings
sharing an anchor join one cause.
Findings without anchors are grouped by kind. Finding ids are untouched: the ledger tracks each one.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from harness.report.model import SEVERITY_RANK, Cause, Finding, Report, Section, open_findings

_EXPECT_KEY = re.compile(r"^(?P<probe>.+?):(?P<col>\S+) same as (?P<other>\S+)$")

# kind → (title, action) for findings without anchors; {shas} lists the short shas the findings name.
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
    "follow-up-not-picked": (
        "later fixes of a picked source were not picked",
        "cherry-pick -x the follow-up commits listed, or say in the PR why this release does not need them",
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
        "rebase HEAD onto BASE and resolve the conflicts",
    ),
    "harness-error": (
        "a section crashed inside the harness",
        "re-run with HARNESS_DEBUG=1 and report the traceback as a harness bug",
    ),
}


def _short(sha: str) -> str:
    return sha[:8]


def _control_name(probe_col: str) -> str:
    probe, _, col = probe_col.rpartition("/")
    return f"{col} (probe {probe})" if probe else col


def _section_of(report: Report) -> dict[str, Section]:
    return {f.id: s for s in report.sections for f in s.findings}


def _missing(report: Report) -> list[dict[str, Any]]:
    """The fidelity section's commits missing from the pick, in history order."""
    return [
        c for s in report.sections if s.id == "fidelity" for c in s.data.get("missing_commits", [])
    ]


def anchors(f: Finding, section: Section | None, missing: dict[str, dict[str, Any]]) -> list[str]:
    """What a finding is about: commits, files and controls (empty when it names none)."""
    data = section.data if section is not None else {}
    out: list[str] = []
    if f.kind == "missing-commit":
        sha = f.key.rpartition(":")[2]
        out.append(f"commit:{sha}")
        out += [f"file:{x['path']}" for x in missing.get(sha, {}).get("files", [])]
    elif f.kind.startswith("pick-") or f.kind == "end-state-introduced":
        pick = f.key.partition(":")[0]
        for p in data.get("picks", []):
            if p.get("pick") == pick:
                if f.kind == "end-state-introduced":
                    out += [
                        f"file:{e['path']}"
                        for e in p.get("end_state", [])
                        if e.get("status") in ("introduced", "binary-differs")
                    ]
                else:
                    out += [f"file:{x['path']}" for x in p.get("files", []) if not x.get("same")]
    elif f.kind == "gap-not-pinned":
        out.append(f"commit:{f.key.partition(':')[0]}")
    elif f.kind == "probe-expectation":
        m = _EXPECT_KEY.match(f.key)
        names = {m["col"], m["other"]} if m else set()
        for col in data.get("columns", []):
            if col.get("role") == "control" and (not names or col.get("name") in names):
                out.append(f"control:{data.get('probe', '')}/{col['name']}")
                out += [f"file:{p}" for p in col.get("edit_paths", [])]
                out += [f"commit:{c}" for c in col.get("edit_commits", [])]
                out += [f"edit:{e}" for e in col.get("edits", [])]
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
    sections = _section_of(report)
    missing_list = _missing(report)
    missing = {c["sha"]: c for c in missing_list}
    found = {f.id: anchors(f, sections.get(f.id), missing) for f in live}
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
    causes = [
        _cause(fs, [a for f in fs for a in found[f.id]], missing_list, head)
        for fs in members.values()
    ]
    return sorted(
        causes, key=lambda c: -SEVERITY_RANK[c.severity]
    )  # stable: first appearance within a severity


def _cause(
    fs: list[Finding], anchor_list: list[str], missing: list[dict[str, Any]], head: str
) -> Cause:
    severity = max((f.severity for f in fs), key=lambda s: SEVERITY_RANK[s])
    ids = [f.id for f in fs]
    anchor_set = set(anchor_list)
    commits = [c for c in missing if f"commit:{c['sha']}" in anchor_set]
    controls = sorted(
        {_control_name(a.partition(":")[2]) for a in anchor_set if a.startswith("control:")}
    )
    files = sorted({a.partition(":")[2] for a in anchor_set if a.startswith("file:")})
    if commits:
        shas = " ".join(_short(c["sha"]) for c in commits)
        listed = "; ".join(f"{_short(c['sha'])} {c['subject']}" for c in commits)
        title = f"the pick lacks {len(commits)} commit(s) of its source: {listed}"
        action = f"cherry-pick -x {shas} onto {head}"
        key = "commits:" + shas
    elif controls:
        control_commits = sorted(
            {a.partition(":")[2] for a in anchor_set if a.startswith("commit:")}
        )
        where = f" ({', '.join(files)})" if files else ""
        title = f"{head} behaves unlike control {', '.join(controls)}{where}: {fs[0].title}"
        if control_commits:
            action = f"cherry-pick -x {' '.join(_short(c) for c in control_commits)} onto {head}"
        else:
            edits = "; ".join(
                dict.fromkeys(
                    re.sub(r"\s+", " ", a.partition(":")[2])
                    for a in anchor_list
                    if a.startswith("edit:")
                )
            )
            action = (
                f"change {', '.join(files) or 'the code'} on {head} as control "
                f"{', '.join(controls)} does" + (f" ({edits})" if edits else "") + ", then re-run"
            )
        key = "controls:" + ",".join(controls)
    elif files:
        title = f"{fs[0].title} ({', '.join(files)})"
        action = f"compare {', '.join(files)} with the source and re-pick it, or explain the adaptation in the commit"
        key = "files:" + ",".join(files)
    else:
        kind = fs[0].kind
        shas = " ".join(
            dict.fromkeys(
                m.group(0)[:8]
                for f in fs
                for m in re.finditer(r"\b[0-9a-f]{10,40}\b", f.key + " " + f.title)
            )
        )
        title, action = _BY_KIND.get(
            kind,
            (
                fs[0].title if len(fs) == 1 else f"{len(fs)} {kind} findings",
                "fix it, or waive it by id in the policy file (docs/ci.md)",
            ),
        )
        action = action.format(shas=shas or "the commits listed")
        key = "kind:" + kind
    digest = hashlib.sha1(key.encode()).hexdigest()[:10]
    return Cause(id=f"cause-{digest}", severity=severity, title=title, action=action, findings=ids)
