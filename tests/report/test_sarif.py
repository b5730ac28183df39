"""report.sarif: valid by the published SARIF 2.1.0 schema, one result per finding of report.json with
its level, files and lines where the finding has them, fingerprints stable across runs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness.testing.located_repo import PLACES, Located

SCHEMA = Path(__file__).resolve().parents[3] / "shared" / "data" / "sarif-schema-2.1.0.json"
LEVEL = {"P1": "error", "P2": "warning", "info": "note"}
PLACES_KINDS = {kind for kind, _, _ in PLACES}


def _load(folder: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    return (
        json.loads((folder / "report.json").read_text()),
        json.loads((folder / "report.sarif").read_text()),
    )


def _findings(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (f["id"], f["kind"], LEVEL[f["severity"]])
        for s in report["sections"]
        for f in s["findings"]
    ]


def _results(sarif: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (r["partialFingerprints"]["harness/findingId/v1"], r["ruleId"], r["level"])
        for r in sarif["runs"][0]["results"]
    ]


@pytest.mark.parametrize("which", ["demo", "located"])
def test_valid_by_the_published_schema(which, demo_dir, located):
    if not SCHEMA.is_file():
        pytest.skip(f"{SCHEMA} is absent: the OASIS SARIF 2.1.0 schema is read from there")
    import jsonschema

    schema = json.loads(SCHEMA.read_text())
    folder = demo_dir if which == "demo" else located[1]
    _, sarif = _load(folder)
    validator = jsonschema.validators.validator_for(schema)(schema)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(sarif)]
    assert errors == []
    assert sarif["version"] == "2.1.0" and len(sarif["runs"]) == 1


@pytest.mark.parametrize("which", ["demo", "located"])
def test_one_result_per_finding_with_its_level(which, demo_dir, located):
    report, sarif = _load(demo_dir if which == "demo" else located[1])
    assert _results(sarif) == _findings(report) != []
    run = sarif["runs"][0]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert sorted(rules) == sorted({k for _, k, _ in _findings(report)})  # one rule per kind
    assert all(rules[r["ruleIndex"]] == r["ruleId"] for r in run["results"])
    blocking = {r["properties"]["id"] for r in run["results"] if r["properties"]["blocking"]}
    assert blocking == set(report["open_findings"]) & {
        i for i, _, level in _findings(report) if level == "error"
    }
    assert run["properties"]["verdict"] == report["verdict"]
    assert run["properties"]["notVerified"] == report["not_verified"]


def test_files_and_lines_where_the_finding_has_them(located):
    built, folder = located
    _, sarif = _load(folder)
    places = {
        (
            r["ruleId"],
            loc["physicalLocation"]["artifactLocation"]["uri"],
            loc["physicalLocation"].get("region", {}).get("startLine"),
        )
        for r in sarif["runs"][0]["results"]
        for loc in r.get("locations", ())
    }
    assert places == PLACES
    # each line is what the finding says is there, in HEAD's tree
    for kind, path, line in places:
        if line is None:
            continue
        text = subprocess.run(
            ["git", "-C", str(built.repo), "show", f"backport:{path}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()[line - 1]
        want = {"conflict-markers": ("<<<<<<<", "=======", ">>>>>>>"), "pin-differs": ("image:",)}
        assert text.strip().startswith(want.get(kind, ("markers:",))), (kind, path, line, text)


def test_same_inputs_same_bytes_and_stable_fingerprints(located, tmp_path, run_cli):
    """A second run (another folder, the cache warm) writes the same SARIF apart from the dated
    header; --format sarif prints the file's bytes."""
    built: Located = located[0]
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
        "sarif",
    )
    assert code == 1, err
    again = (tmp_path / "again" / "report.sarif").read_text()
    assert out == again
    first, second = (json.loads(t) for t in ((located[1] / "report.sarif").read_text(), again))
    for doc in (first, second):
        doc["runs"][0]["properties"].pop("generated")
        doc["runs"][0]["invocations"][0].pop("commandLine")  # names the output folder
    assert first == second


def test_the_ledger_and_waivers_as_baseline_and_suppressions(located, tmp_path, run_cli):
    built, folder = located
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        "waivers:\n  - kind: conflict-markers\n    reason: a fixture of the merge tool\n"
        "    expires: 2999-01-01\n"
    )
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
        str(tmp_path / "round2"),
        "--previous",
        str(folder / "report.json"),
        "--policy",
        str(policy),
        "--format",
        "none",
    )
    assert code == 0, err
    _, sarif = _load(tmp_path / "round2")
    results = sarif["runs"][0]["results"]
    assert [r["baselineState"] for r in results] == ["unchanged"] * len(PLACES_KINDS)
    [waived] = [r for r in results if r["ruleId"] == "conflict-markers"]
    assert waived["suppressions"] == [
        {
            "kind": "external",
            "status": "accepted",
            "justification": "a fixture of the merge tool (until 2999-01-01)",
        }
    ]
    assert waived["level"] == "error" and not waived["properties"]["blocking"]
