"""What the reviewed repository holds is data: it becomes findings, never a refused run."""

from __future__ import annotations

import json
from pathlib import Path

WORKFLOW = """on: push
jobs:
  unit:
    uses: ./.github/workflows/reusable.yml
    with:
      markers: "not ("
  smoke:
    uses: ./.github/workflows/reusable.yml
    with:
      markers: "smoke"
"""


def _repo(builder) -> None:
    builder.commit(
        "base",
        {
            "a.py": "x = 1\n",
            "tests/test_a.py": "import pytest\n\n@pytest.mark.smoke\ndef test_a():\n    pass\n",
            "pytest.ini": "[pytest]\nmarkers =\n    smoke: s\n",
        },
    )
    builder.commit("ci", {".github/workflows/ci.yml": WORKFLOW, "a.py": "x = 2\n"})


def test_an_invalid_marker_expression_in_a_workflow_is_a_finding_in_compare(
    builder, run_cli, tmp_path
) -> None:
    _repo(builder)
    scen = tmp_path / "s.yaml"
    scen.write_text("selection: {}\n")
    out = tmp_path / "out"
    code, _, err = run_cli(
        "compare",
        "--no-fidelity",
        "HEAD~1",
        "HEAD",
        "--scenario",
        str(scen),
        "--repo",
        str(builder.path),
        "--output",
        str(out),
        "--format",
        "none",
    )
    assert code == 1, err  # blocked by the finding, with a report
    doc = json.loads((out / "report.json").read_text())
    sel = next(s for s in doc["sections"] if s["id"] == "selection")
    bad = [f for f in sel["findings"] if f["kind"] == "lane-invalid-expression"]
    assert len(bad) == 1 and "unit" in bad[0]["title"] and "not (" in bad[0]["title"]
    table = sel["tables"][0]
    unit = next(r for r in table["rows"] if "unit" in json.dumps(r[0]))
    assert "invalid -m" in json.dumps(unit)
    smoke = next(
        r for r in table["rows"] if "smoke" in json.dumps(r[0]) and "unit" not in json.dumps(r[0])
    )
    assert smoke[-2:] == [1, 1] or smoke[2:4] == [1, 1], smoke  # the valid lane is still counted


def test_select_reports_a_workflow_lane_pytest_refuses(builder, run_cli) -> None:
    _repo(builder)
    code, out, err = run_cli(
        "select", "--lanes-from-workflows", "--repo", str(builder.path), "--format", "json"
    )
    doc = json.loads(out)
    assert code == 1, err
    assert [f["kind"] for f in doc["sections"][0]["findings"]].count("lane-invalid-expression") == 1


def test_a_given_lane_pytest_refuses_is_a_usage_error_before_any_collection(
    builder, run_cli, tmp_path: Path, monkeypatch
) -> None:
    _repo(builder)
    monkeypatch.setenv("HARNESS_WORK_DIR", str(tmp_path / "w"))
    code, out, err = run_cli("select", "--lane", "x=not (", "--repo", str(builder.path))
    assert code == 2 and out == "" and err.count("\n") == 1 and "invalid marker expression" in err
    assert not (tmp_path / "w" / "trees").exists() and not list(
        (tmp_path / "w" / "runs").glob("*")
    ), "refused before any tree was exported or collected"
