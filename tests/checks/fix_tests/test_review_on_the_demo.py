"""The rest of the review on the built-in demo with no scenario: its missing c3 pinned by no test,
its missing c4 pinned by the nightly test that polls for the log line c4 deletes, the hunk table,
and the same answers as ``mutate --gap`` and ``trace`` give for the same edits."""

from __future__ import annotations

import json

import pytest

from harness import demo
from harness.testing.network import need_index


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    need_index()
    from harness.cli import main

    root = tmp_path_factory.mktemp("demo-review")
    repo = root / "repo"
    marks = demo.build(repo)
    code = main(
        [
            "compare",
            "release/1.0..backport/42",
            "--source",
            "main",
            "--source-branch",
            "pr/42",
            "--repo",
            str(repo),
            "--output-dir",
            str(root / "out"),
            "--format",
            "none",
        ]
    )
    doc = json.loads((root / "out" / "report.json").read_text())
    return {"code": code, "doc": doc, "repo": repo, "marks": marks, "root": root}


def _tests(doc: dict) -> dict:
    return next(s for s in doc["sections"] if s["id"] == "tests")


def test_pins_hunks_and_strings_without_a_scenario(demo_run):
    data = _tests(demo_run["doc"])["data"]
    marks = demo_run["marks"]
    pins = {p["commit"]: p for p in data["pins"]}
    assert pins[marks["c3"]]["pinned_by"] == []
    assert pins[marks["c4"]]["pinned_by"] == ["tests/test_worker.py::test_worker_logs_ready"]
    assert all(p["applies"] for p in pins.values())
    assert {h["file"] for h in data["hunks"]} == {"serving/decoder.py", "serving/handler.py"}
    kinds = {f["kind"]: f for f in _tests(demo_run["doc"])["findings"]}
    assert marks["c3"][:10] in kinds["tests-gap-not-pinned"]["title"]


def test_pins_equal_what_mutate_gap_gives(demo_run, run_cli):
    marks = demo_run["marks"]
    code, out, err = run_cli(
        "mutate",
        "--repo",
        str(demo_run["repo"]),
        "--ref",
        "backport/42",
        "--gap",
        marks["c3"],
        "--gap",
        marks["c4"],
        "--format",
        "json",
        "--fail-on",
        "never",
    )
    assert code == 0, err
    rows = {r["gap"]: r for r in json.loads(out)["sections"][0]["data"]["rows"] if r["gap"]}
    pins = {p["commit"]: p for p in _tests(demo_run["doc"])["data"]["pins"]}
    for sha in (marks["c3"], marks["c4"]):
        assert sorted(rows[sha]["changed"]) == pins[sha]["pinned_by"], sha
