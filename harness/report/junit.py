"""JUnit XML rendering: one test suite per section, for the test-report views of CI systems.

A section's judged items (a pick) and its findings not about one of them are its test cases: a
case fails when a finding in it blocks the gate (``Report.blocking``, set with the verdict), and
every not-verified entry is a skipped case whose message is the reason. Elements and attributes
are those of Jenkins' junit-10.xsd (GitLab, Jenkins, Azure Pipelines and Buildkite read it), so
``file``/``line`` go in the failure's text, not in attributes that schema lacks.
"""

from __future__ import annotations

import re
from xml.etree import ElementTree as ET

from harness.report.model import Finding, Judged, Report, Section

# XML 1.0 refuses these characters even escaped: shown as \xNN / \uNNNN text instead.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _text(s: str) -> str:
    return _NOT_XML.sub(
        lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", s
    )


def _el(parent: ET.Element, tag: str, text: str = "", **attrs: str) -> ET.Element:
    el = ET.SubElement(parent, tag, {k: _text(v) for k, v in attrs.items()})
    if text:
        el.text = _text(text)
    return el


def _where(f: Finding) -> str:
    places = [
        f"{w['path']}:{w['line']}" if w["line"] else w["path"] for w in f.anchors.get("where", ())
    ]
    return f"at {', '.join(places)}\n" if places else ""


def _finding_text(f: Finding, blocking: set[str]) -> str:
    state = "blocks the gate" if f.id in blocking else "below the gate"
    extra = [f"waived: {f.waived}"] if f.waived else []
    extra += [f"ledger: {f.status}"] if f.status else []
    head = f"[{f.severity}] {f.kind} {f.id} ({state}{''.join('; ' + e for e in extra)})"
    return f"{head}\n{f.title}\n{_where(f)}{f.detail + chr(10) if f.detail else ''}"


def _case(
    suite: ET.Element, classname: str, name: str, findings: list[Finding], blocking: set[str]
) -> tuple[int, int]:
    """One test case over ``findings``; returns (tests, failures) it adds."""
    case = _el(suite, "testcase", classname=classname, name=name, time="0")
    blocked = [f for f in findings if f.id in blocking]
    body = "\n".join(_finding_text(f, blocking) for f in findings)
    if blocked:
        lead = blocked[0]
        _el(case, "failure", body, message=f"[{lead.severity}] {lead.title}", type=lead.kind)
    elif body:
        _el(case, "system-out", body)
    return 1, 1 if blocked else 0


def _skipped(suite: ET.Element, classname: str, reason: str) -> None:
    case = _el(suite, "testcase", classname=classname, name=f"not verified: {reason}", time="0")
    _el(case, "skipped", message=reason)


def _item_name(item: Judged) -> str:
    return f"{item['name']} ({item['outcome']})" if item["outcome"] else item["name"]


def _suite(root: ET.Element, section: Section, blocking: set[str]) -> tuple[int, int, int]:
    suite = _el(root, "testsuite", name=section.title, id=section.id, package="harness")
    props = _el(suite, "properties")
    _el(props, "property", name="section", value=section.id)
    if section.summary:
        _el(props, "property", name="summary", value=section.summary)
    classname = f"harness.{section.id}"
    by_id = {f.id: f for f in section.findings}
    in_items: set[str] = set()
    tests = failures = 0
    for item in section.judged:
        mine = [by_id[i] for i in item["findings"] if i in by_id]
        in_items.update(f.id for f in mine)
        t, fl = _case(suite, classname, _item_name(item), mine, blocking)
        tests, failures = tests + t, failures + fl
    for f in section.findings:
        if f.id not in in_items:
            t, fl = _case(suite, classname, f"{f.kind}: {f.title}", [f], blocking)
            tests, failures = tests + t, failures + fl
    if not tests:  # nothing judged and nothing found: the check itself is the passing case
        tests, _ = _case(suite, classname, section.summary or section.title, [], blocking)
    for reason in section.not_verified:
        _skipped(suite, classname, reason)
    skipped = len(section.not_verified)
    suite.attrib.update(
        tests=str(tests + skipped),
        failures=str(failures),
        errors="0",
        skipped=str(skipped),
        time="0",
    )
    return tests + skipped, failures, skipped


def _report_suite(root: ET.Element, report: Report) -> tuple[int, int, int]:
    """The report's own suite: its header as properties, the verdict as its output and the
    report-wide not-verified entries as skipped cases."""
    suite = _el(root, "testsuite", name=report.title, id="harness", package="harness")
    props = _el(suite, "properties")
    header = [("command", report.command), ("generated", report.generated)]
    header += [(f"input: {k}", v) for k, v in report.inputs.items()]
    for name, value in [*header, ("fail-on", report.fail_on), ("verdict", report.verdict)]:
        _el(props, "property", name=name, value=value)
    for reason in report.not_verified:
        _skipped(suite, "harness.report", reason)
    _el(suite, "system-out", report.verdict)
    skipped = len(report.not_verified)
    suite.attrib.update(
        tests=str(skipped), failures="0", errors="0", skipped=str(skipped), time="0"
    )
    return skipped, 0, skipped


def render(report: Report) -> str:
    root = ET.Element("testsuites", name=_text(f"harness: {report.title}"))
    blocking = set(report.blocking)
    totals = [_report_suite(root, report)]
    totals += [_suite(root, s, blocking) for s in report.sections]
    root.attrib.update(
        tests=str(sum(t for t, _, _ in totals)),
        failures=str(sum(f for _, f, _ in totals)),
        errors="0",
        time="0",
    )
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode", short_empty_elements=True)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
