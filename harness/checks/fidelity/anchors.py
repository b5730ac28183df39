"""What each fidelity finding is about, for the verdict's causes: the pick (its source and the files
that differ) or the PR-branch commit the pick lacks, as ``Finding.anchors``; and each pick as an
item the section judges, with the findings about it (JUnit's test cases)."""

from __future__ import annotations

from collections.abc import Sequence

from harness.checks.fidelity.missing import BranchCommit, MissingResult
from harness.checks.fidelity.pick import PickResult
from harness.report.model import Anchors, Finding, Judged, Location, MissingCommit, PickFacts


def pick_facts(sha: str, r: PickResult | None) -> PickFacts:
    """The pick ``sha`` as an action names it (no source and no file when it is not a pick)."""
    if r is None:
        return PickFacts(sha=sha, source="", differ=(), lacking=())
    sources = r.resolution.sources
    return PickFacts(
        sha=sha,
        source=sources[0] if sources else "",
        differ=tuple(f.path for f in r.files if not f.same),
        lacking=tuple(f.path for f in r.files if f.only_source),
    )


def missing_commit(c: BranchCommit) -> MissingCommit:
    return MissingCommit(sha=c.sha, subject=c.subject, paths=tuple(str(x["path"]) for x in c.files))


def located(paths: Sequence[str]) -> tuple[Location, ...]:
    """Whole files as the places a finding is at."""
    return tuple(Location(path=p, line=None) for p in paths)


def anchored(
    findings: list[Finding], results: Sequence[PickResult], missing: MissingResult | None
) -> list[Finding]:
    """``findings`` with their anchors set: a pick finding's pick (its key starts with the pick's
    sha), marked as the pick that lacks the PR branch's later commits when it is; a missing commit
    and the pick it was cut from."""
    by_sha = {r.commit.sha: r for r in results}
    lacked = missing.missing if missing is not None else []
    commits = {f"{missing.pick}:{c.sha}": c for c in lacked} if missing is not None else {}
    cut_from = missing.pick or "" if missing is not None else ""
    for f in findings:
        if f.kind == "missing-commit" and f.key in commits:
            gap = missing_commit(commits[f.key])
            f.anchors = Anchors(missing=gap, lacks=cut_from, where=located(gap["paths"]))
        elif f.kind.startswith("pick-") or f.kind == "end-state-introduced":
            sha = f.key.partition(":")[0]
            pick = pick_facts(sha, by_sha.get(sha))
            f.anchors = Anchors(pick=pick, where=located(pick["lacking"] or pick["differ"]))
            if lacked and cut_from == sha:
                f.anchors["lacks"] = sha
    return findings


def judged(results: Sequence[PickResult], findings: Sequence[Finding]) -> list[Judged]:
    """Each pick with its status and the findings about it: its own, and the PR-branch commits
    it lacks."""
    about: dict[str, list[str]] = {}
    for f in findings:
        sha = f.anchors.get("lacks", "") if f.kind == "missing-commit" else ""
        sha = f.anchors["pick"]["sha"] if "pick" in f.anchors else sha
        if sha:
            about.setdefault(sha, []).append(f.id)
    return [
        Judged(
            name=f"pick {i} {r.commit.sha[:12]}: {r.commit.subject}",
            outcome=r.status,
            findings=tuple(about.get(r.commit.sha, ())),
        )
        for i, r in enumerate(results, 1)
    ]
