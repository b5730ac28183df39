"""JSON rendering (schema ``harness.report/1``)."""

from __future__ import annotations

from collections.abc import Mapping

from harness.report.jsontext import Rendered, dump_utf8, dumps, dumps_at
from harness.report.model import Report, Section, open_findings

SCHEMA = "harness.report/1"
SECTION_NL = "\n    "  # a section's depth in the document: an item of the top object's list


def render(report: Report) -> str:
    return dumps(_document(report)) + "\n"


def render_utf8(report: Report, rendered: Mapping[int, bytes] | None = None) -> list[bytes]:
    """``render(report).encode()``, in pieces (what ``--output`` writes: never the whole text).
    ``rendered``: sections (by ``id``) as ``section_text`` gave them earlier, written as given."""
    return dump_utf8(_document(report, rendered), end="\n")


def section_text(section: Section) -> str:
    """A section's JSON text as this document writes it (given back through ``rendered``)."""
    return dumps_at(section, SECTION_NL)


def section_utf8(section: Section) -> bytes:
    """``section_text(section).encode()``, text rendered before (``Rendered`` at its depth)
    written as it is."""
    return b"".join(dump_utf8(section, nl=SECTION_NL))


def _document(report: Report, rendered: Mapping[int, bytes] | None = None) -> dict[str, object]:
    sections: list[object] = list(report.sections)
    if rendered:
        sections = [
            Rendered(rendered[id(s)], SECTION_NL) if id(s) in rendered else s for s in sections
        ]
    return {
        "schema": SCHEMA,
        "title": report.title,
        "command": report.command,
        "generated": report.generated,
        "inputs": report.inputs,
        "verdict": report.verdict,
        "open_findings": [f.id for f in open_findings(report)],
        "causes": report.causes,
        "sections": sections,
        "not_verified": report.all_not_verified(),
    }
