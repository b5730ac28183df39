"""report.junit.xml: read back by junitparser, within what Jenkins' junit-10.xsd (the schema GitLab,
Jenkins and Azure Pipelines read) allows; one suite per section, failures exactly the findings at or
above --fail-on, the not-verified list as skipped cases with their reason."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest

from harness.testing.located_repo import Located

# junit-10.xsd (jenkinsci/xunit-plugin): the attributes and children each element may have.
ATTRS = {
    "testsuites": {"name", "time", "tests", "failures", "errors"},
    "testsuite": {"name", "tests", "failures", "errors", "group", "time", "skipped", "timestamp"}
    | {"hostname", "id", "package", "file", "log", "url"},
    "testcase": {"name", "time", "classname", "group"},
    "properties": set(),
    "property": {"name", "value"},
    "failure": {"type", "message"},
    "error": {"type", "message"},
    "skipped": {"type", "message"},
    "system-out": set(),
    "system-err": set(),
}
CHILDREN = {
    "testsuites": {"testsuite"},
    "testsuite": {"testsuite", "properties", "testcase", "system-out", "system-err"},
    "testcase": {"skipped", "error", "failure", "system-out", "system-err"},
    "properties": {"property"},
}
REQUIRED = {
    "testsuite": {"name", "tests", "failures", "errors"},
    "testcase": {"name"},
    "property": {"name", "value"},
}
TIME = re.compile(r"(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?")


def _schema_problems(el: ET.Element, path: str = "") -> list[str]:
    here = f"{path}/{el.tag}"
    problems = [f"{here}: attribute {a}" for a in set(el.attrib) - ATTRS.get(el.tag, set())]
    problems += [f"{here}: lacks {a}" for a in REQUIRED.get(el.tag, set()) - set(el.attrib)]
    problems += [
        f"{here}: time {el.get('time')}" for _ in [0] if not TIME.fullmatch(el.get("time", ""))
    ]
    for child in el:
        if child.tag not in CHILDREN.get(el.tag, set()):
            problems.append(f"{here}: child {child.tag}")
        problems += _schema_problems(child, here)
    if el.tag == "testcase":  # readers take one outcome a case
        outcomes = [c.tag for c in el if c.tag in ("failure", "error", "skipped")]
        problems += [f"{here} {el.get('name')}: {outcomes}" for _ in [0] if len(outcomes) > 1]
    return problems


def _report(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "report.json").read_text())


def _folders(demo_dir: Path, located: tuple[Located, Path]) -> dict[str, Path]:
    return {"demo": demo_dir, "located": located[1]}


@pytest.mark.parametrize("which", ["demo", "located"])
def test_within_what_the_readers_accept(which, demo_dir, located):
    root = ET.parse(_folders(demo_dir, located)[which] / "report.junit.xml").getroot()
    assert root.tag == "testsuites"
    assert _schema_problems(root) == []


@pytest.mark.parametrize("which", ["demo", "located"])
def test_read_back_suites_cases_and_counts(which, demo_dir, located):
    from junitparser import Failure, JUnitXml, Skipped

    folder = _folders(demo_dir, located)[which]
    report = _report(folder)
    xml = JUnitXml.fromfile(str(folder / "report.junit.xml"))
    suites = list(xml)
    assert [s.name for s in suites] == [report["title"]] + [s["title"] for s in report["sections"]]
    for suite, section in zip(suites[1:], report["sections"], strict=True):
        cases = list(suite)
        skipped = [c for c in cases if any(isinstance(r, Skipped) for r in c.result)]
        failed = [c for c in cases if any(isinstance(r, Failure) for r in c.result)]
        assert [c.result[0].message for c in skipped] == section["not_verified"]
        assert (suite.tests, suite.failures, suite.skipped, suite.errors) == (
            len(cases),
            len(failed),
            len(skipped),
            0,
        )
    assert xml.tests == sum(s.tests for s in suites)
    assert xml.failures == sum(s.failures for s in suites)
    skipped_all = {r.message for s in suites for c in s for r in c.result if isinstance(r, Skipped)}
    assert skipped_all == set(report["not_verified"])  # the report's list, each with its reason


def _case_findings(folder: Path) -> dict[str, tuple[str, bool]]:
    """Each finding id named in a case: (the case, whether the case fails)."""
    from junitparser import Failure, JUnitXml

    found: dict[str, tuple[str, bool]] = {}
    ids = {f["id"] for s in _report(folder)["sections"] for f in s["findings"]}
    for suite in JUnitXml.fromfile(str(folder / "report.junit.xml")):
        for case in suite:
            fails = any(isinstance(r, Failure) for r in case.result)
            text = "".join(r.text or "" for r in case.result) + (case.system_out or "")
            for fid in ids:
                if fid in text:
                    assert fid not in found, f"{fid} in two cases"
                    found[fid] = (case.name, fails)
    return found


@pytest.mark.parametrize("which", ["demo", "located"])
def test_every_finding_in_one_case_failing_when_it_blocks(which, demo_dir, located):
    folder = _folders(demo_dir, located)[which]
    report = _report(folder)
    found = _case_findings(folder)
    findings = [f for s in report["sections"] for f in s["findings"]]
    assert set(found) == {f["id"] for f in findings}
    blocking = {f["id"] for f in findings if f["severity"] == "P1"} & set(report["open_findings"])
    assert {fid for fid, (_, fails) in found.items() if fails} >= blocking
    for f in findings:  # a case fails only for a blocking finding of its own
        case, fails = found[f["id"]]
        if f["id"] in blocking:
            assert fails, case


def test_a_pick_is_a_case_that_fails_with_its_findings(demo_dir):
    found = _case_findings(demo_dir)
    report = _report(demo_dir)
    fidelity = next(s for s in report["sections"] if s["id"] == "fidelity")
    cases = {found[f["id"]] for f in fidelity["findings"]}
    assert len(cases) == 1  # the subset pick and the PR-branch commits it lacks
    [(name, fails)] = cases
    assert name.startswith("pick 2 12e98ecbc440") and name.endswith("(subset)") and fails

    from junitparser import JUnitXml

    suite = next(
        s
        for s in JUnitXml.fromfile(str(demo_dir / "report.junit.xml"))
        if s.name == "Cherry-pick fidelity"
    )
    [identical] = [c for c in suite if c.name.startswith("pick 1 ")]
    assert identical.name.endswith("(identical)") and identical.is_passed


def test_the_threshold_moves_the_failures(located, run_cli, tmp_path):
    """--fail-on p2: the P2 findings fail too; never: nothing fails."""
    from junitparser import JUnitXml

    built, _ = located
    failing = {}
    for fail_on in ("p1", "p2", "never"):
        out = tmp_path / fail_on
        code, _, err = run_cli(
            "compare",
            "release..backport",
            "--repo",
            str(built.repo),
            "--source",
            "main",
            "--scenario",
            str(built.scenario),
            "--output-dir",
            str(out),
            "--fail-on",
            fail_on,
            "--format",
            "none",
        )
        assert code == (0 if fail_on == "never" else 1), err
        xml = JUnitXml.fromfile(str(out / "report.junit.xml"))
        failing[fail_on] = {r.type for s in xml for c in s for r in c.result if r._tag == "failure"}
    assert failing == {
        "p1": {"conflict-markers"},
        "p2": {"conflict-markers", "lane-expression", "pick-no-source"},
        "never": set(),
    }


TEST_A = "from a import f\n\n\ndef test_int():\n    assert isinstance(f(), int)\n"
TEST_ONE = TEST_A + "\n\ndef test_one():\n    assert f() == 1\n"


def test_a_test_of_the_tests_section_is_a_case(builder, run_cli, tmp_path):
    """A pick that carries the source's test but not its fix: the test fails at HEAD, its case
    fails, the passing one passes, and SARIF places the finding at the test's file."""
    import sys

    from junitparser import JUnitXml

    builder.commit("base", {"a.py": "def f():\n    return 0\n", "tests/test_a.py": TEST_A})
    builder.branch("release")
    fix = builder.commit("Fix f", {"a.py": "def f():\n    return 1\n", "tests/test_a.py": TEST_ONE})
    builder.branch("backport", "release")
    builder.checkout("backport")
    builder.commit(f"Fix f\n\n(cherry picked from commit {fix})", {"tests/test_a.py": TEST_ONE})
    builder.checkout("main")
    common = ["tests", "release..backport", "--repo", str(builder.path), "--source", "main"]
    common += ["--python", sys.executable]
    out = tmp_path / "r.xml"
    code, _, err = run_cli(*common, "--format", "junit", "--output", str(out))
    assert code == 1, err
    sections = list(JUnitXml.fromfile(str(out)))[1:]  # the first suite is the report's own
    suite = next(s for s in sections if s.name.startswith("Tests of the fix"))
    cases = {c.name: c for c in suite}
    assert cases["tests/test_a.py::test_one (fails-head)"].result[0].type == "fails-head"
    assert cases["tests/test_a.py::test_int (passes-both)"].is_passed
    code, sarif, err = run_cli(*common, "--format", "sarif")
    [result] = [r for r in json.loads(sarif)["runs"][0]["results"] if r["ruleId"] == "fails-head"]
    [loc] = result["locations"]
    assert loc["physicalLocation"]["artifactLocation"]["uri"] == "tests/test_a.py"


def test_same_inputs_same_bytes(located, run_cli, tmp_path):
    """--format junit prints the file's bytes; a second run (another folder, the cache warm)
    differs only in the dated header and the command line naming that folder."""
    built, folder = located
    code, out, err = run_cli(
        "compare",
        "release..backport",
        "--repo",
        str(built.repo),
        "--source",
        "main",
        "--scenario",
        str(built.scenario),
        "--output-dir",
        str(tmp_path / "again"),
        "--format",
        "junit",
    )
    assert code == 1, err
    again = (tmp_path / "again" / "report.junit.xml").read_text()
    assert out == again

    def varying(text: str) -> str:
        return re.sub(r'<property name="(generated|command)" value="[^"]*" />', "", text)

    assert varying(again) == varying((folder / "report.junit.xml").read_text())
