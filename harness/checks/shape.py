"""Push shape: each commit's parents, author/committer identity and dates, Signed-off-by against the
author, and whether two commits carry the same tree (so an earlier validation still holds)."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from harness.checks.result import Checked
from harness.git.evidence import changed_paths, name_revs
from harness.git.repo import Commit, GitRepo
from harness.report.model import Code, Control, Finding, Section, Sha, Table

_SOB = re.compile(r"\s*signed-off-by:", re.I)  # a sign-off line's start (parse_signoffs)
_PICKED = re.compile(r"\(cherry picked from commit ([0-9a-f]{7,64})\)")

EXACT, NAME_ONLY, NOREPLY, EMAIL_ONLY, OTHER = (
    "exact",
    "name only",
    "noreply vs corporate address",
    "email only",
    "other person",
)
# DCO: a sign-off whose email is the author's satisfies it whatever the name, and so does the author's
# GitHub noreply address standing for it (a web edit or a squash merge), so those outrank a name-only likeness.
_RANK = {EXACT: 4, EMAIL_ONLY: 3, NOREPLY: 2, NAME_ONLY: 1, OTHER: 0}
_DCO_OK = (EXACT, EMAIL_ONLY, NOREPLY)
_GH_NOREPLY = re.compile(r"^(?:\d+\+)?([^@+]+)@users\.noreply\.github\.com$")


@dataclass(frozen=True)
class SignOff:
    name: str
    email: str
    match: str  # one of EXACT, NAME_ONLY, NOREPLY, EMAIL_ONLY, OTHER (against the author)


@dataclass
class ShapeRow:
    commit: Commit
    parent_names: dict[str, str | None]
    signoffs: list[SignOff]
    picked_from: str | None

    @property
    def date_shape(self) -> str:
        a, c = self.commit.author_time, self.commit.committer_time
        if a < c:
            return "authored before committed (cherry-pick/rebase shape)"
        if a == c:
            return "authored = committed"
        return "authored after committed (clock or rewritten dates)"

    @property
    def signoff_verdict(self) -> str:
        if self.commit.is_merge:
            return "merge: not checked"
        if not self.signoffs:
            return "no Signed-off-by"
        best = max(self.signoffs, key=lambda s: _RANK[s.match]).match
        return {
            EXACT: "author signed off",
            EMAIL_ONLY: "author signed off (name differs)",
            NOREPLY: f"author signed off ({NOREPLY})",
            OTHER: "author did not sign off",
        }.get(best, f"author: {best}")

    @property
    def dco_ok(self) -> bool:
        """A Signed-off-by carries the author's email (the DCO rule)."""
        return any(s.match in _DCO_OK for s in self.signoffs)


def _norm_name(name: str) -> str:
    return " ".join(name.split()).casefold()


def is_noreply(email: str) -> bool:
    """A GitHub noreply address (``[ID+]login@users.noreply.github.com``): it stands for one account."""
    return bool(_GH_NOREPLY.match(email.strip().casefold()))


def canonical_email(email: str) -> str:
    """Case-folded email; GitHub's ``ID+user@users.noreply.github.com`` and ``user@…`` are one address."""
    e = email.strip().casefold()
    m = _GH_NOREPLY.match(e)
    return f"{m.group(1)}@users.noreply.github.com" if m else e


def classify_signoff(author_name: str, author_email: str, name: str, email: str) -> str:
    """How a Signed-off-by identity relates to the author (emails compared as ``canonical_email``)."""
    same_email = canonical_email(author_email) == canonical_email(email)
    same_name = _norm_name(author_name) == _norm_name(name)
    if same_email:
        return EXACT if same_name else EMAIL_ONLY
    if is_noreply(author_email) != is_noreply(email) and (
        same_name
        or _login_matches(author_email, email)
        or _login_matches(author_email, f"{_norm_name(name)}@")
        or _login_matches(email, f"{_norm_name(author_name)}@")
    ):
        return NOREPLY
    return NAME_ONLY if same_name else OTHER


def _login_matches(a: str, b: str) -> bool:
    """One address is ``[ID+]login@users.noreply.github.com`` and the other's local part is ``login``
    (``name@`` stands for a person whose name is written as their login)."""
    ca, cb = canonical_email(a), canonical_email(b)
    for gh, other in ((ca, cb), (cb, ca)):
        m = _GH_NOREPLY.match(gh)
        if m and not _GH_NOREPLY.match(other) and other.split("@", 1)[0] == m.group(1):
            return True
    return False


def parse_signoffs(message: str) -> list[tuple[str, str]]:
    """``(name, email)`` of every ``Signed-off-by: Name <email>`` line. Read line by line with
    string operations: one pattern over the whole message backtracked in quadratic time over
    blank lines and long runs of spaces (the reviewed repository's text), and ran a name or an
    email over line ends, which no longer counts."""
    out = []
    for line in message.split("\n"):
        m = _SOB.match(line)
        if m is None:
            continue
        rest = line[m.end() :].rstrip()
        if not rest.endswith(">"):
            continue
        inner = rest[:-1]
        lt = inner.find("<", inner.rfind(">") + 1)  # the email holds no ">"
        if lt >= 0:
            out.append((inner[:lt].strip(), inner[lt + 1 :]))
    return out


def shape_rows(repo: GitRepo, base: str, head: str) -> list[ShapeRow]:
    """Every commit in ``base..head`` (oldest first, merges included) with its shape facts."""
    commits = repo.commits([repo.resolve(head)], [repo.resolve(base)])
    names = name_revs(repo, [p for c in commits if c.is_merge for p in c.parents])
    rows = []
    for c in commits:
        sobs = [
            SignOff(n, e, classify_signoff(c.author_name, c.author_email, n, e))
            for n, e in parse_signoffs(c.message)
        ]
        picked = _PICKED.search(c.message)
        rows.append(
            ShapeRow(
                c, {p: names.get(p) for p in c.parents}, sobs, picked.group(1) if picked else None
            )
        )
    return rows


@dataclass
class SameTree:
    a: Commit
    b: Commit
    differences: list[tuple[str, str, str]] = field(
        default_factory=list
    )  # (attribute, A, B) that differ
    changed: list[tuple[str, str]] = field(default_factory=list)  # (status, path) when trees differ

    @property
    def identical(self) -> bool:
        return self.a.tree == self.b.tree


def _attrs(c: Commit) -> list[tuple[str, str]]:
    return [
        ("commit", c.sha),
        ("tree", c.tree),
        ("parents", " ".join(p[:12] for p in c.parents)),
        ("author", f"{c.author_name} <{c.author_email}>"),
        ("authored", _when(c.author_time)),
        ("committer", f"{c.committer_name} <{c.committer_email}>"),
        ("committed", _when(c.committer_time)),
        ("message", c.message),
    ]


def compare_trees(repo: GitRepo, a: str, b: str) -> SameTree:
    """Whether two commits carry the same tree, and which attributes and paths differ."""
    sa, sb = repo.resolve(a), repo.resolve(b)
    ca = repo.commit(sa)
    cb = ca if sb == sa else repo.commit(sb)
    result = SameTree(ca, cb)
    result.differences = [
        (k, va, vb) for (k, va), (_, vb) in zip(_attrs(ca), _attrs(cb), strict=False) if va != vb
    ]
    if not result.identical:
        result.changed = changed_paths(repo, ca.sha, cb.sha)
    return result


def _when(ts: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ts))


def _ident(name: str, email: str) -> str:
    return f"{name} <{email}>"


def _parents_cell(row: ShapeRow) -> str:
    if not row.commit.is_merge:
        return " ".join(p[:12] for p in row.commit.parents) or "(root)"
    return ", ".join(
        f"{p[:12]} ({row.parent_names.get(p) or 'unnamed'})" for p in row.commit.parents
    )


def _classifier_control(rows: list[ShapeRow]) -> Control:
    """The sign-off classifier, fed identities built from a real author, must answer as designed."""
    c = rows[0].commit if rows else None
    name, email = (c.author_name, c.author_email) if c else ("A U Thor", "a@corp.example")
    cases = [
        ((name, email), EXACT),
        ((name, "123+x@users.noreply.github.com"), NOREPLY if not is_noreply(email) else NAME_ONLY),
        (("Another Name", email.upper()), EMAIL_ONLY),
        (("Someone Else", "else@other.example"), OTHER),
    ]
    got = [classify_signoff(name, email, n, e) == want for (n, e), want in cases]
    return Control(
        "sign-off classifier on synthetic identities",
        f"{sum(got)} of {len(got)} classified as designed "
        "(exact, noreply vs corporate, email only, other person)",
        all(got),
    )


@dataclass(frozen=True)
class ShapeResult:
    """The range's ends as commits, its rows, and the --same-tree comparison when asked for."""

    base: str
    head: str
    rows: list[ShapeRow]
    same_tree: SameTree | None


def shape_check(
    repo: GitRepo, base: str, head: str, same_tree: tuple[str, str] | None = None
) -> Checked[ShapeResult]:
    """Report section for ``harness shape BASE..HEAD [--same-tree A B]``."""
    rows = shape_rows(repo, base, head)
    spec = f"{base}..{head}"
    tables = [_commits_table(rows, spec), _signoffs_table(rows)]
    plain = [r for r in rows if not r.commit.is_merge]
    signed = sum(bool(r.signoffs) for r in plain)
    # A project "uses" sign-offs when at least half its commits in the range carry one; elsewhere a
    # bot's trailer alone should not turn every unsigned commit into a finding.
    uses_sob = bool(plain) and signed * 2 >= len(plain)
    findings = _signoff_findings(plain, uses_sob) + _date_findings(rows)
    head_sha = repo.resolve(head)
    controls = _controls(repo, head_sha, rows, signed, len(plain), uses_sob)
    base_sha = repo.resolve(base)
    st: SameTree | None = None
    data: dict[str, object] = {
        "base": base_sha,
        "head": head_sha,
        "rows": [_row_data(r) for r in rows],
    }
    if same_tree:
        st = compare_trees(repo, *same_tree)
        tables.append(_same_tree_table(st, *same_tree))
        findings.append(_same_tree_finding(st, *same_tree))
        data["same_tree"] = _same_tree_data(st)
    merges = sum(r.commit.is_merge for r in rows)
    summary = (
        f"{len(rows)} commit(s) in {spec} ({merges} merge(s)); "
        f"{sum(r.commit.author_time < r.commit.committer_time for r in rows)} authored before committed; "
        f"{len([f for f in findings if f.kind == 'shape-signoff'])} sign-off mismatch(es) (DCO: a Signed-off-by "
        "with the author's email)"
    )
    section = Section(
        id="shape",
        title=f"Shape of {spec}",
        summary=summary,
        tables=tables,
        findings=findings,
        controls=controls,
        not_verified=[
            "GPG/SSH signatures are not checked",
            "sign-offs are matched against the author's email "
            "(the DCO rule); a project's stricter policy (e.g. committer sign-off) is not evaluated",
            "a sign-off of merge commits is not checked",
        ],
        data=data,
    )
    return Checked(ShapeResult(base_sha, head_sha, rows, st), section)


def _commits_table(rows: Sequence[ShapeRow], spec: str) -> Table:
    return Table(
        f"commits in {spec}",
        [
            "commit",
            "parents",
            "author",
            "authored",
            "committer",
            "committed",
            "shape",
            "sign-off",
        ],
        [
            [
                Sha(r.commit.sha),
                Code(_parents_cell(r)),
                _ident(r.commit.author_name, r.commit.author_email),
                _when(r.commit.author_time),
                _ident(r.commit.committer_name, r.commit.committer_email),
                _when(r.commit.committer_time),
                r.date_shape
                + (f"; cherry picked from {r.picked_from[:12]}" if r.picked_from else ""),
                r.signoff_verdict,
            ]
            for r in rows
        ],
        legend="oldest first; merges list every parent with a symbolic name; dates in UTC",
        control="the same commit compared with itself is identical (tree and attribution); see Controls",
    )


def _signoffs_table(rows: Sequence[ShapeRow]) -> Table:
    sob_rows = [
        [Sha(r.commit.sha), _ident(s.name, s.email), s.match] for r in rows for s in r.signoffs
    ]
    return Table(
        "Signed-off-by trailers against the author",
        ["commit", "Signed-off-by", "vs author"],
        sob_rows,  # type: ignore[arg-type]
        legend="exact: same name and email; email only: same email, another name; noreply vs "
        "corporate address: one address is the author's GitHub noreply one (same name, or "
        "its login is the other's local part or name); these three satisfy DCO; name only: same "
        "name, another email; emails compare case-insensitively and GitHub's ID+user@ and "
        "user@users.noreply.github.com are one address",
        control="the classifier is run on synthetic identities built from a real author first",
    )


def _signoff_findings(plain: Sequence[ShapeRow], uses_sob: bool) -> list[Finding]:
    """A sign-off that does not match the author (P2 where the range uses sign-offs), then one
    info finding for those signed off under another name or address (DCO satisfied)."""
    findings: list[Finding] = []
    renamed = []
    for r in plain:
        v = r.signoff_verdict
        if r.dco_ok:
            if v != "author signed off":
                renamed.append(r)
            continue
        if v == "no Signed-off-by" and not uses_sob:
            continue
        who = _ident(r.commit.author_name, r.commit.author_email)
        detail = f"author {who}; " + (
            "; ".join(f"{_ident(s.name, s.email)}: {s.match}" for s in r.signoffs) or "no trailer"
        )
        if v == "no Signed-off-by":
            title = (
                f"{r.commit.sha[:12]}: no Signed-off-by, while other commits in the range carry one"
            )
        else:
            title = f"{r.commit.sha[:12]}: sign-off does not match the author ({v})"
        findings.append(
            Finding(
                "shape-signoff",
                "P2" if uses_sob else "info",
                title,
                detail,
                key=f"{r.commit.sha}\0signoff",
            )
        )
    if renamed:
        findings.append(
            Finding(
                "shape-signoff-name",
                "info",
                f"{len(renamed)} commit(s) signed off under another name or the other of the author's GitHub noreply "
                "and own address (DCO satisfied)",
                "; ".join(
                    f"{r.commit.sha[:12]}: author {_ident(r.commit.author_name, r.commit.author_email)}, signed "
                    "off as "
                    + ", ".join(_ident(s.name, s.email) for s in r.signoffs if s.match in _DCO_OK)
                    for r in renamed
                ),
                key="signoff-name\0" + "\0".join(r.commit.sha for r in renamed),
            )
        )
    return findings


def _date_findings(rows: Sequence[ShapeRow]) -> list[Finding]:
    findings: list[Finding] = []
    for r in rows:
        if not r.commit.dated:
            findings.append(
                Finding(
                    "shape-undated",
                    "P2",
                    f"{r.commit.sha[:12]}: git cannot date this commit",
                    "its author or committer line has no date, no email, or a timestamp out of range "
                    "(git fsck reports it); its dates read as 1970-01-01 in this report",
                    key=f"{r.commit.sha}\0undated",
                )
            )
    odd = [r for r in rows if r.commit.dated and r.commit.author_time > r.commit.committer_time]
    for r in odd:
        findings.append(
            Finding(
                "shape-dates",
                "info",
                f"{r.commit.sha[:12]}: authored after committed",
                f"{_when(r.commit.author_time)} > {_when(r.commit.committer_time)}",
                key=f"{r.commit.sha}\0dates",
            )
        )
    return findings


def _controls(
    repo: GitRepo,
    head_sha: str,
    rows: list[ShapeRow],
    signed: int,
    plain: int,
    uses_sob: bool,
) -> list[Control]:
    self_check = compare_trees(repo, head_sha, head_sha)
    return [
        Control(
            "a commit compared with itself",
            "identical tree, no attribute differs"
            if self_check.identical and not self_check.differences
            else "MISMATCH",
            self_check.identical and not self_check.differences,
        ),
        _classifier_control(rows),
        Control(
            "sign-off usage in the range",
            f"{signed} of {plain} non-merge commit(s) carry Signed-off-by: "
            + (
                "treated as required (mismatches are P2)"
                if uses_sob
                else "not treated as required (info)"
            ),
            None,
        ),
    ]


def _row_data(r: ShapeRow) -> dict[str, object]:
    return {
        "sha": r.commit.sha,
        "parents": list(r.commit.parents),
        "merge": r.commit.is_merge,
        "author": _ident(r.commit.author_name, r.commit.author_email),
        "author_time": r.commit.author_time,
        "committer": _ident(r.commit.committer_name, r.commit.committer_email),
        "committer_time": r.commit.committer_time,
        "picked_from": r.picked_from,
        "signoff": r.signoff_verdict,
        "signoffs": [{"name": s.name, "email": s.email, "match": s.match} for s in r.signoffs],
    }


def _same_tree_finding(st: SameTree, a: str, b: str) -> Finding:
    if st.identical:
        return Finding(
            "shape-same-tree",
            "info",
            f"{a} and {b} have identical trees",
            "a validation of one holds for the other (content-wise); differs: "
            + (", ".join(k for k, _, _ in st.differences) or "nothing"),
            key=f"{st.a.sha}\0{st.b.sha}\0same",
        )
    return Finding(
        "shape-tree-differs",
        "P2",
        f"{a} and {b} have different trees",
        f"{len(st.changed)} path(s) differ: an earlier validation of {a} does not carry "
        f"over to {b}",
        key=f"{st.a.sha}\0{st.b.sha}\0differs",
    )


def _same_tree_data(st: SameTree) -> dict[str, object]:
    return {
        "a": st.a.sha,
        "b": st.b.sha,
        "identical": st.identical,
        "differences": [k for k, _, _ in st.differences],
        "changed": [{"status": s, "path": p} for s, p in st.changed],
    }


def shape_section(
    repo: GitRepo, base: str, head: str, same_tree: tuple[str, str] | None = None
) -> Section:
    """The section of ``shape_check``."""
    return shape_check(repo, base, head, same_tree).section


def _same_tree_table(st: SameTree, a: str, b: str) -> Table:
    rows: list[list[object]] = []
    for (k, va), (_, vb) in zip(_attrs(st.a), _attrs(st.b), strict=False):
        shown_a = va.splitlines()[0] if k == "message" else va
        shown_b = vb.splitlines()[0] if k == "message" else vb
        rows.append([k, Code(shown_a), Code(shown_b), "same" if va == vb else "differs"])
    for status, path in st.changed[:50]:
        rows.append([f"path {status}", Code(path), "", "differs"])
    return Table(
        f"same tree? {a} vs {b}",
        ["attribute", a, b, "mark"],
        rows,  # type: ignore[arg-type]
        legend="identical trees mean identical content whatever the history or attribution; "
        "changed paths listed when they differ (first 50)",
        control="the head commit compared with itself gives identical trees and no differing attribute",
    )
