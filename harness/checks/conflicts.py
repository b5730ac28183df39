"""Conflict markers committed in a pick: added lines that are git's ``<<<<<<<``/``>>>>>>>`` markers.

A line counts when the pick adds it at column 0: ``<<<<<<< LABEL`` or ``>>>>>>> LABEL`` (git always
writes a label, so a reStructuredText adornment of ``<`` or ``>`` characters does not match), and
``=======`` / ``||||||| LABEL`` only between an opening and a closing marker of the same hunk (alone,
``=======`` is a reStructuredText title underline). One P1 finding per pick names each file:line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.checks.result import Checked
from harness.git.patch import FilePatch, diff_many
from harness.git.repo import GitRepo
from harness.report.model import Anchors, Code, Control, Finding, Location, Section, Sha, Table
from harness.report.safe import line_shown

_OPEN = re.compile(rb"^<{7} \S")
_CLOSE = re.compile(rb"^>{7} \S")
_SEP = re.compile(rb"^={7}[ \t]*\r?$")
_BASE = re.compile(rb"^\|{7} \S")
MAX_LISTED = 10  # file:line places named in one finding


@dataclass(frozen=True)
class Marker:
    path: str
    line: int
    text: str


def _hunk_markers(path: str, start: int, hunk: list[bytes]) -> list[Marker]:
    """Markers among the added lines of one hunk (``start``: its first line in the new file)."""
    rows: list[tuple[bytes, bytes, int]] = []  # (prefix, text, new-file line)
    line = start
    for raw in hunk:
        prefix, text = raw[:1], raw[1:]
        rows.append((prefix, text, line))
        if prefix != b"-":
            line += 1
    opens = [i for i, (p, t, _) in enumerate(rows) if p != b"-" and _OPEN.match(t)]
    closes = [i for i, (p, t, _) in enumerate(rows) if p != b"-" and _CLOSE.match(t)]
    found = []
    for i, (prefix, text, no) in enumerate(rows):
        if prefix != b"+":
            continue
        inside = any(o < i for o in opens) and any(c > i for c in closes)
        if (
            _OPEN.match(text)
            or _CLOSE.match(text)
            or (inside and (_SEP.match(text) or _BASE.match(text)))
        ):
            found.append(Marker(path, no, line_shown(text).rstrip()))
    return found


def file_markers(fp: FilePatch) -> list[Marker]:
    """Conflict-marker lines one file's change adds (binary files: none)."""
    if fp.binary or fp.new_path is None:
        return []
    starts = fp.new_starts or [0] * len(fp.hunks)
    return [
        m
        for start, hunk in zip(starts, fp.hunks, strict=False)
        for m in _hunk_markers(fp.path, start, hunk)
    ]


def pick_markers(repo: GitRepo, base: str, head: str) -> list[tuple[str, list[Marker]]]:
    """Each non-merge commit of ``base..head`` (oldest first) with the markers it adds."""
    picks = repo.rev_list([repo.resolve(head)], [repo.resolve(base)], no_merges=True)
    patches = diff_many(repo, [(sha, None) for sha in picks])
    return [(p.commit, [m for fp in p.files for m in file_markers(fp)]) for p in patches]


def _control() -> Control:
    """The scanner on two synthetic hunks: a real conflict block, and an RST title with its underline."""
    conflict = [b"+<<<<<<< HEAD", b"+a = 1", b"+=======", b"+a = 2", b"+>>>>>>> 1234abc (fix)"]
    rst = [b"+Release notes", b"+=======", b"+", b"+<<<<<<<", b"+>>>>>>>"]
    hits = len(_hunk_markers("x", 1, conflict)), len(_hunk_markers("y", 1, rst))
    return Control(
        "conflict-marker scanner on synthetic hunks",
        f"conflict block: {hits[0]} of 3 marker lines found; reStructuredText underline and bare "
        f"adornments: {hits[1]} found",
        hits == (3, 0),
    )


def conflicts_check(repo: GitRepo, base: str, head: str) -> Checked[list[tuple[str, list[Marker]]]]:
    """Report section: conflict markers each pick of ``base..head`` adds."""
    per_pick = pick_markers(repo, base, head)
    rows: list[list[object]] = []
    findings: list[Finding] = []
    for sha, markers in per_pick:
        rows += [[Sha(sha), Code(f"{m.path}:{m.line}"), Code(m.text[:80])] for m in markers]
        if markers:
            places = ", ".join(f"{m.path}:{m.line}" for m in markers[:MAX_LISTED])
            more = f" and {len(markers) - MAX_LISTED} more" if len(markers) > MAX_LISTED else ""
            findings.append(
                Finding(
                    "conflict-markers",
                    "P1",
                    f"{sha[:12]}: conflict markers committed ({len(markers)} line(s))",
                    f"{places}{more}",
                    key=f"{sha}\0" + "\0".join(sorted({m.path for m in markers})),
                    anchors=Anchors(
                        where=tuple(Location(path=m.path, line=m.line) for m in markers)
                    ),
                )
            )
    hit = sum(1 for _, m in per_pick if m)
    section = Section(
        id="conflicts",
        title=f"Conflict markers in {base}..{head}",
        summary=f"{hit} of {len(per_pick)} pick(s) add conflict-marker lines",
        tables=[
            Table(
                "conflict-marker lines added by each pick",
                ["pick", "file:line", "line"],
                rows,  # type: ignore[arg-type]
                legend="added lines only, at column 0: <<<<<<< LABEL and >>>>>>> LABEL anywhere; ======= "
                "and ||||||| only between them in the same hunk; line numbers in the pick's tree",
                control="the scanner is first run on a synthetic conflict block and an RST underline",
            )
        ],
        findings=findings,
        controls=[_control()],
        not_verified=[
            "conflict markers in binary files, or longer markers set by a conflict-marker-size "
            "attribute",
            "a marker line that is meant as content (a merge tool's test fixture, a "
            "document showing a conflict) is reported too: waive it in the policy",
        ],
        data={
            "picks": [
                {
                    "sha": sha,
                    "markers": [{"path": m.path, "line": m.line, "text": m.text} for m in markers],
                }
                for sha, markers in per_pick
            ]
        },
    )
    return Checked(per_pick, section)


def conflicts_section(repo: GitRepo, base: str, head: str) -> Section:
    """The section of ``conflicts_check``."""
    return conflicts_check(repo, base, head).section
