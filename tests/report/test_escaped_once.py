"""``compare`` shows bytes that are not UTF-8 as ``\\xNN`` once for all the files it writes
(``printable(report)``, then ``render(..., escaped=True)``): each file is the bytes its renderer
gives a report escaped on its own, as before (issue 42: each walk of a long report cost ~10 ms)."""

from __future__ import annotations

import copy

import pytest

from harness.report import comment, render
from harness.report.model import Code, Control, Details, Finding, Report, Section, Sha, Table
from harness.report.printable import printable

BYTE = "caf\udce9"  # the byte 0xE9 of a path that is not UTF-8, as the git layer reads it


def _report() -> Report:
    section = Section(
        "fidelity",
        f"Picks of {BYTE}",
        summary=f"1 pick changes {BYTE}.py",
        tables=[
            Table(
                f"Files of {BYTE}",
                ["path", "pick", "note"],
                [[Code(f"{BYTE}.py"), Sha("0123456789abcdef"), f"{BYTE} \u00e9"]],
                legend=f"legend {BYTE}",
                control=f"control {BYTE}",
            )
        ],
        findings=[Finding("dropped", "P1", f"{BYTE}.py dropped", detail=f"see {BYTE}")],
        controls=[Control(f"c {BYTE}", f"r {BYTE}", ok=True)],
        not_verified=[f"not {BYTE}"],
        details=[Details(f"sum {BYTE}", f"body {BYTE}")],
        data={BYTE: [BYTE, {"k": BYTE}]},
    )
    return Report(f"Review {BYTE}", "harness compare", [section], {"range": f"a..{BYTE}"})


@pytest.mark.parametrize("fmt", ["md", "json", "html", "junit", "sarif", "comment"])
def test_one_escape_for_every_file_gives_the_bytes_of_one_escape_each(fmt):
    def rendered(report: Report, escaped: bool) -> str:
        if fmt == "comment":
            return comment.render(report, escaped=escaped)
        return render(report, fmt, escaped=escaped)

    alone = rendered(_report(), escaped=False)
    shared = _report()
    printable(shared)
    for _ in range(2):  # every file of the folder from the one escaped report, in any order
        assert rendered(shared, escaped=True) == alone
    assert "\udce9" not in alone and "xe9" in alone


def test_escaped_is_the_callers_word_the_control():
    raw = _report()
    text = render(copy.deepcopy(raw), "md", escaped=True)  # nobody escaped it: shown as it is
    assert "\udce9" in text
    assert "\udce9" not in render(raw, "md")


@pytest.mark.parametrize("limit", [comment.LIMIT, 12000, 2500])  # whole, trimmed, left out
def test_report_md_and_comment_md_share_each_sections_lines_to_the_same_bytes(limit):
    """comment.md shows report.md's sections again (whole, or trimmed copies when they do not
    fit ``limit``): made once, the files are the bytes each makes alone."""
    from harness.report import markdown

    def big() -> Report:
        report = _report()
        rows = [[Code(f"p{i}.py"), Sha(f"{i:040x}"), "x" * 60] for i in range(120)]
        report.sections.append(
            Section("more", "More", tables=[Table("rows", ["p", "s", "n"], rows)] * 4)
        )
        printable(report)
        return report

    made = markdown.Sections()
    shared = big()
    assert markdown.render(shared, made) == markdown.render(big())
    text = comment.render(shared, limit=limit, escaped=True, made=made)
    assert text == comment.render(big(), limit=limit)
    assert ("first 15" in text) == (limit == 12000)  # the trimmed copies were shown


def test_each_section_is_laid_out_once_for_report_md_and_comment_md(monkeypatch):
    from harness.report import markdown

    report = _report()
    printable(report)
    calls: list[object] = []
    real = markdown._section

    def counted(s: Section) -> list[str]:
        calls.append(s)
        return real(s)

    monkeypatch.setattr(markdown, "_section", counted)
    monkeypatch.setattr(markdown, "section", counted)  # (what comment.md uses on its own)
    made = markdown.Sections()
    markdown.render(report, made)
    comment.render(report, escaped=True, made=made)
    assert [sum(c is s for c in calls) for s in report.sections] == [1]
    # The control: without ``made`` comment.md lays the section out again.
    comment.render(report, escaped=True, made=markdown.Sections())
    assert [sum(c is s for c in calls) for s in report.sections] == [2]
