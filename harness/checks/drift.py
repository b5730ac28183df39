"""Release drift: what BASE did since HEAD forked, where the two touch the same files, a trial merge,
and whether HEAD's added lines are already on BASE by another route (a redundant backport)."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from harness.checks.result import Checked
from harness.errors import UsageError
from harness.git.evidence import TrialMerge, trial_merge
from harness.git.patch import FilePatch, diff_trees
from harness.git.repo import Commit, GitRepo
from harness.report.model import Code, Control, Finding, Section, Sha, Table, bounded

_ALNUM = re.compile(rb"[A-Za-z0-9]")
_MAX_COMMIT_ROWS = 100  # keeps the section small enough for a pull-request comment


def significant(line: bytes) -> bool:
    """Lines that say something: blank lines and lone punctuation (``}``, ``)``) would inflate matches."""
    return bool(_ALNUM.search(line))


@dataclass
class FileDrift:
    """A file both sides changed since the merge base, with ± per side."""

    path: str
    head_added: int
    head_removed: int
    base_added: int
    base_removed: int


@dataclass
class Presence:
    """How many of HEAD's significant added lines in a file already exist in BASE's version of it."""

    path: str
    added: int
    present: int
    identical: bool  # the file at HEAD equals the file at BASE

    @property
    def fraction(self) -> float:
        return self.present / self.added if self.added else 1.0


@dataclass
class Drift:
    base: str
    head: str
    merge_base: str
    base_commits: list[Commit]
    head_commits: int
    overlap: list[FileDrift]
    merge: TrialMerge
    presence: list[Presence]
    # controls
    self_presence: tuple[int, int] = (
        0,
        0,
    )  # HEAD's added lines found at HEAD's own tip: (present, added)
    control_merge: TrialMerge | None = None
    head_tree: str = ""
    head_files: list[str] = field(default_factory=list)
    submodules: list[str] = field(default_factory=list)  # left out of the presence test
    audit: str = ""  # why this is the audit form (BASE is the source branch), else ""


def _lines(blob: bytes | None) -> set[bytes]:
    return {ln.strip() for ln in (blob or b"").split(b"\n")}


def _presence(fp: FilePatch, blob: bytes | None, head_blob: bytes | None) -> Presence:
    added = [ln.strip() for ln in fp.added if significant(ln)]
    there = _lines(blob)
    return Presence(
        fp.path,
        len(added),
        sum(ln in there for ln in added),
        blob is not None and head_blob is not None and blob == head_blob,
    )


# A release or maintenance branch by its name: release/X, maintenance/2.3.x, 8.4.x, 1.x, stable.
_RELEASE_BRANCH = re.compile(
    r"^(?:(?:refs/)?(?:heads/|remotes/)?(?:origin/|upstream/)?)"
    r"(?:(?:release|releases|maintenance|maint|stable|support)[/_-].+|v?\d+(?:\.\d+)*\.x)$",
    re.IGNORECASE,
)


def audit_form(repo: GitRepo, base: str, head: str, b: str, h: str, source: str | None) -> str:
    """Why ``base..head`` is the audit form (``main..release/X``: BASE is the source branch, which
    is never merged into a release), or "" for the pull-request form (``release/X..backport``),
    where the trial merge is the merge the PR will make."""
    if source and repo.try_resolve(source) == b:
        return f"{base} is the source branch (--source {source})"
    if not repo.is_ancestor(b, h) and _RELEASE_BRANCH.search(head):
        return f"{base} is not an ancestor of {head}, a release branch by its name"
    return ""


def drift(repo: GitRepo, base: str, head: str, source: str | None = None) -> Drift:
    """Gather the drift evidence (refs resolved here: unknown → UsageError). ``source``: the
    branch the picks come from; BASE being it makes this the audit form (``Drift.audit``)."""
    b, h = repo.resolve(base), repo.resolve(head)
    mb = repo.merge_base(h, b)
    if mb is None:
        if repo.is_shallow():  # the common history may only be cut off
            from harness.checks.judgeable import UNSHALLOW

            raise UsageError(
                f"{base} and {head} have no common history in this shallow repository "
                f"(it may be cut off); {UNSHALLOW}"
            )
        raise UsageError(f"{base} and {head} have no common history (no merge base)")
    base_commits = repo.commits([b], [mb])
    head_count = len(repo.rev_list([h], [mb]))
    head_files = diff_trees(repo, mb, h, renames=False)
    base_files = {fp.path: fp for fp in diff_trees(repo, mb, b, renames=False)}
    overlap = [
        FileDrift(
            fp.path,
            len(fp.added),
            len(fp.removed),
            len(base_files[fp.path].added),
            len(base_files[fp.path].removed),
        )
        for fp in head_files
        if fp.path in base_files
    ]
    presence, self_present, self_added = [], 0, 0
    kept = [fp for fp in head_files if fp.status != "D" and not fp.binary]
    blobs = repo.read_blobs([f"{rev}:{fp.path}" for fp in kept for rev in (h, b)])
    submodules: list[str] = []
    for k, fp in enumerate(kept):
        head_blob, base_blob = blobs[2 * k], blobs[2 * k + 1]
        if head_blob is None:
            # Not a blob at HEAD: a submodule (its diff's one line, "Subproject commit <sha>",
            # is in no file), so there is nothing to look for.
            submodules.append(fp.path)
            continue
        presence.append(_presence(fp, base_blob, head_blob))
        own = _presence(fp, head_blob, head_blob)
        self_present, self_added = self_present + own.present, self_added + own.added
    return Drift(
        base=b,
        head=h,
        merge_base=mb,
        base_commits=base_commits,
        head_commits=head_count,
        overlap=overlap,
        merge=trial_merge(repo, h, b),
        presence=presence,
        self_presence=(self_present, self_added),
        control_merge=trial_merge(repo, h, mb),
        head_tree=repo.resolve(h, "tree"),
        head_files=[fp.path for fp in head_files],
        submodules=submodules,
        audit=audit_form(repo, base, head, b, h, source),
    )


def _date(ts: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(ts))


def drift_check(repo: GitRepo, base: str, head: str, source: str | None = None) -> Checked[Drift]:
    """The drift and its report section for ``harness drift BASE HEAD``."""
    d = drift(repo, base, head, source)
    tables = [
        _commits_table(d, base, head),
        _overlap_table(d, base, head),
        _merge_table(d, base, head),
        _presence_table(d, base, head),
    ]
    findings = _findings(d, base, head)
    section = Section(
        id="drift",
        title=f"Drift: {base} vs {head}",
        summary=_summary(d, base),
        tables=tables,
        findings=findings,
        controls=_controls(d, base, head),
        not_verified=[
            "a clean trial merge says nothing about semantic conflicts or tests",
            "presence of a line at BASE is textual: the same line in another context counts as present",
            "renames are not followed (a file moved on one side is a different path)",
        ],
        data=_data(d),
    )
    return Checked(d, section)


def _control_merge_ok(d: Drift) -> bool:
    """Merging the merge base into HEAD gave HEAD's own tree (the trial merge is not blind)."""
    ctrl = d.control_merge
    return bool(ctrl and ctrl.clean and ctrl.tree == d.head_tree)


def _commits_table(d: Drift, base: str, head: str) -> Table:
    return Table(
        f"commits on {base} since the merge base",
        ["commit", "date", "author", "subject"],
        [
            [Sha(c.sha), _date(c.committer_time), c.author_name, c.subject]
            for c in d.base_commits[-_MAX_COMMIT_ROWS:]
        ],
        legend=f"merge base {d.merge_base[:12]}; {base} is {len(d.base_commits)} commit(s) ahead of it, "
        f"{head} is {d.head_commits}"
        + (
            f"; the newest {_MAX_COMMIT_ROWS} are listed (all in the JSON data)"
            if len(d.base_commits) > _MAX_COMMIT_ROWS
            else ""
        ),
        control="the merge base is named with both commit counts, so an empty table is a measured zero",
        collapsed=len(d.base_commits) > 15,
    )


def _overlap_table(d: Drift, base: str, head: str) -> Table:
    conflicts = {c.path: c for c in d.merge.conflicts}
    return Table(
        f"files {head} changes that {base} also changed since the merge base",
        ["path", f"{head} +", f"{head} −", f"{base} +", f"{base} −", "trial merge"],
        [
            [
                Code(o.path),
                o.head_added,
                o.head_removed,
                o.base_added,
                o.base_removed,
                ", ".join(conflicts[o.path].kinds) or "conflict"
                if o.path in conflicts
                else "clean",
            ]
            for o in d.overlap
        ],
        legend=f"{len(d.head_files)} file(s) changed by {head} since the merge base; ± are lines per side",
        control="the same diff machinery lists every file HEAD changes (count in the legend)",
    )


def _merge_table(d: Drift, base: str, head: str) -> Table:
    if d.merge.error:
        merge_rows: list[list[object]] = [["(not attempted)", d.merge.error]]
    elif d.merge.clean:
        merge_rows = [["(clean)", Sha(d.merge.tree or "")]]
    else:
        merge_rows = [[Code(c.path), ", ".join(c.kinds) or "conflict"] for c in d.merge.conflicts]
    ctrl_ok = _control_merge_ok(d)
    return Table(
        f"trial merge of {base} into {head} (git merge-tree, nothing written to the repository)",
        ["file", "result"],
        merge_rows,  # type: ignore[arg-type]
        control=f"merging the merge base into {head} gives {head}'s own tree: "
        + ("yes" if ctrl_ok else "NO"),
    )


def _presence_table(d: Drift, base: str, head: str) -> Table:
    return Table(
        f"already on {base} by another route",
        [
            "path",
            f"lines {head} adds",
            f"present at {base}",
            "fraction",
            f"file identical at {base}",
        ],
        [
            [
                Code(p.path),
                p.added,
                p.present,
                f"{p.fraction:.0%}" if p.added else "n/a",
                "yes" if p.identical else "no",
            ]
            for p in d.presence
        ],
        legend="added lines compared with leading/trailing whitespace stripped; blank and punctuation-only lines "
        "are ignored; presence anywhere in the file at BASE's tip counts"
        + (
            f"; submodules left out (no file to look in): {bounded(d.submodules)}"
            if d.submodules
            else ""
        ),
        control=f"the same test on {head}'s own tip finds {d.self_presence[0]} of {d.self_presence[1]} lines",
    )


def _controls(d: Drift, base: str, head: str) -> list[Control]:
    ctrl = d.control_merge
    ctrl_ok = _control_merge_ok(d)
    self_ok = d.self_presence[0] == d.self_presence[1]
    return [
        Control(
            "merge base",
            f"{d.merge_base[:12]}: {base} +{len(d.base_commits)} commit(s), "
            f"{head} +{d.head_commits} commit(s)",
            None,
        ),
        Control(
            "trial merge of the merge base into HEAD",
            "clean, HEAD's tree" if ctrl_ok else f"unexpected: {ctrl.error if ctrl else 'not run'}",
            ctrl_ok,
        ),
        Control(
            "presence test on HEAD's own tip",
            f"{d.self_presence[0]} of {d.self_presence[1]} added lines found",
            self_ok,
        ),
    ]


def _summary(d: Drift, base: str) -> str:
    total_added = sum(p.added for p in d.presence)
    total_present = sum(p.present for p in d.presence)
    return (
        f"{base} moved {len(d.base_commits)} commit(s) since the merge base {d.merge_base[:12]}; "
        f"{len(d.overlap)} file(s) changed on both sides; trial merge "
        + (
            "not possible"
            if d.merge.error
            else "clean"
            if d.merge.clean
            else f"conflicts in {len(d.merge.conflicts)} file(s)"
        )
        + f"; {total_present} of {total_added} added line(s) already at {base}"
        + (f" (audit form: {d.audit})" if d.audit else "")
    )


def _data(d: Drift) -> dict[str, object]:
    return {
        "base": d.base,
        "head": d.head,
        "merge_base": d.merge_base,
        "audit": d.audit,
        "submodules": d.submodules,
        "base_commits": [c.sha for c in d.base_commits],
        "head_commits": d.head_commits,
        "overlap": [vars(o) for o in d.overlap],
        "merge": {
            "clean": d.merge.clean,
            "tree": d.merge.tree,
            "error": d.merge.error,
            "conflicts": [{"path": c.path, "kinds": c.kinds} for c in d.merge.conflicts],
        },
        "presence": [
            {
                "path": p.path,
                "added": p.added,
                "present": p.present,
                "fraction": round(p.fraction, 4),
                "identical": p.identical,
            }
            for p in d.presence
        ],
    }


def _findings(d: Drift, base: str, head: str) -> list[Finding]:
    """Severity by form: the pull-request form (``release/X..backport``) gates on the merge the PR
    will make; the audit form (``main..release/X``) only says how far the release is behind, since
    the source branch is never merged into a release and a release's changes are on it by design."""
    findings: list[Finding] = []
    total_added = sum(p.added for p in d.presence)
    total_present = sum(p.present for p in d.presence)
    if d.audit:
        return [_behind(d, base, head, total_added, total_present)]
    if d.merge.error:
        findings.append(
            Finding(
                "drift-merge-failed",
                "P2",
                f"trial merge of {base} into {head} was not possible",
                d.merge.error,
                key=f"{d.base}\0{d.head}\0merge",
            )
        )
    elif not d.merge.clean:
        paths = [c.path for c in d.merge.conflicts]
        findings.append(
            Finding(
                "drift-conflict",
                "P1",
                f"trial merge of {base} into {head} conflicts in {len(paths)} file(s)",
                bounded(paths),
                key=f"{d.base}\0{d.head}\0conflict",
            )
        )
    findings += _already_there(d, base, head, total_added, total_present)
    if d.overlap and d.merge.clean:
        findings.append(
            Finding(
                "drift-overlap",
                "info",
                f"{len(d.overlap)} file(s) changed on both sides merge "
                "cleanly; review them for semantic drift",
                bounded([o.path for o in d.overlap]),
                key=f"{d.base}\0{d.head}\0overlap",
            )
        )
    return findings


def _behind(d: Drift, base: str, head: str, total_added: int, total_present: int) -> Finding:
    """The audit form's one finding: how far the release is behind (info)."""
    merge = (
        "not attempted"
        if d.merge.error
        else "clean"
        if d.merge.clean
        else f"conflicts in {len(d.merge.conflicts)} file(s)"
    )
    return Finding(
        "drift-behind",
        "info",
        f"{head} is {len(d.base_commits)} commit(s) behind {base} "
        f"({d.head_commits} of its own since the merge base {d.merge_base[:12]})",
        f"audit form: {d.audit}; a trial merge of {base} into {head} ({merge}) and lines "
        f"already on {base} ({total_present} of {total_added}) are shown, not gated",
        key=f"{d.base}\0{d.head}\0behind",
    )


def _already_there(
    d: Drift, base: str, head: str, total_added: int, total_present: int
) -> list[Finding]:
    """HEAD's change already on BASE: all of it (P2), else each file whose lines all are (info)."""
    if total_added and total_present == total_added:
        return [
            Finding(
                "drift-redundant",
                "P2",
                f"{head}'s change is already on {base} by another route",
                f"all {total_added} significant added line(s) exist at {base}'s tip",
                key=f"{d.base}\0{d.head}\0redundant",
            )
        ]
    return [
        Finding(
            "drift-file-present",
            "info",
            f"{p.path}: {head}'s added lines are all at {base} already",
            f"{p.added} line(s)",
            key=f"{p.path}\0present",
        )
        for p in d.presence
        if p.added and p.present == p.added
    ]


def drift_section(repo: GitRepo, base: str, head: str, source: str | None = None) -> Section:
    """The section of ``drift_check``."""
    return drift_check(repo, base, head, source).section
