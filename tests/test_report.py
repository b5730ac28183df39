"""Renderers: escaping, determinism, schema."""

import json

from harness.report import render
from harness.report.model import Code, Control, Details, Finding, Report, Section, Sha, Table


def _report() -> Report:
    t = Table(
        "files",
        ["path", "sha", "line"],
        [[Code("a|b.py"), Sha("0123456789abcdef" * 2 + "01234567"), "x | y <z>"]],
        legend="da39a3ee = empty input",
        control="empty-input checksum",
    )
    s = Section(
        "fidelity",
        "Fidelity",
        tables=[t],
        findings=[Finding("missing", "P1", "gap", key="k")],
        controls=[Control("c", "ok", True)],
        not_verified=["runtime"],
        details=[Details("diff", "```\ncode\n```")],
    )
    return Report("T", "harness x", [s], generated="2026-01-01")


def test_markdown_escapes_pipes_and_keeps_shas_intact():
    md = render(_report(), "md")
    assert "`a\\|b.py`" in md
    assert "x \\| y &lt;z&gt;" in md
    assert "`0123456789ab`" in md
    assert "<details><summary>diff</summary>" in md and "````" in md
    assert "## Not verified" in md and "- runtime" in md


def test_json_schema_and_full_shas():
    doc = json.loads(render(_report(), "json"))
    assert doc["schema"] == "harness.report/1"
    row = doc["sections"][0]["tables"][0]["rows"][0]
    assert row[1] == "0123456789abcdef" * 2 + "01234567"
    assert doc["open_findings"] == [doc["sections"][0]["findings"][0]["id"]]


def test_finding_id_is_stable_and_keyed():
    a, b = Finding("missing", "P1", "x", key="k"), Finding("missing", "P2", "y", key="k")
    assert a.id == b.id and a.id != Finding("missing", "P1", "x", key="other").id


def test_renderers_are_deterministic():
    for fmt in ("md", "json", "html", "term"):
        assert render(_report(), fmt) == render(_report(), fmt)
    assert "<table>" in render(_report(), "html")
