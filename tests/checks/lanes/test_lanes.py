"""harness lanes: marker expressions of CI lanes in workflow YAML read from git at a ref."""

from __future__ import annotations

import json

import pytest

from harness.checks.lanes.check import find_lanes, lanes_section, scan_lanes
from harness.errors import UsageError
from harness.git.repo import GitRepo

CI = """\
name: ci
on:
  push:
  workflow_call:
    inputs:
      pytest_markers:
        type: string
        default: "not slow"
x-common: &common
  runs-on: ubuntu-latest
  with:
    markers: "not gpu and not engine"
jobs:
  unit:
    <<: *common
  gpu:
    uses: ./.github/workflows/gpu.yml
    with:
      pytest_markers: 'gpu and not slow'
      extra_markers: >-
        engine and
        not flaky
      other: x
  mat:
    strategy:
      matrix:
        markers: ["a", "b or c"]
        include:
          - markers: d
    uses: ./.github/workflows/gpu.yml
    with:
      markers: ${{ matrix.markers }}
  bad:
    with:
      markers: "not (gpu"
    env:
      PYTEST_MARKERS: foo
"""


def _repo(builder):
    builder.commit(
        "ci",
        {
            ".github/workflows/ci.yml": CI,
            ".github/workflows/list.yaml": "- just\n- a list\n",
            ".github/workflows/notes.txt": "markers: ignored\n",
            ".github/workflows/sub/deep.yml": "jobs: {j: {with: {markers: deep}}}\n",
        },
    )
    return builder


def _by_name(lanes):
    return {(ln.job, ln.input): ln for ln in lanes}


def test_lanes_in_real_layouts(builder):
    _repo(builder)
    lanes = _by_name(find_lanes(GitRepo(builder.path), "HEAD"))
    assert lanes[("unit", "markers")].expression == "not gpu and not engine"
    assert lanes[("unit", "markers")].line == 12  # the anchor's line
    assert lanes[("gpu", "pytest_markers")].expression == "gpu and not slow"
    assert lanes[("gpu", "pytest_markers")].uses == "./.github/workflows/gpu.yml"
    assert lanes[("gpu", "extra_markers")].expression == "engine and not flaky"
    assert lanes[("(workflow_call default)", "pytest_markers")].expression == "not slow"
    assert {k for k in lanes if k[0].startswith("mat")} == {
        ("mat[markers=a]", "markers"),
        ("mat[markers=b or c]", "markers"),
        ("mat[markers=d]", "markers"),
    }
    assert lanes[("mat[markers=d]", "markers")].line == 29
    assert ("gpu", "other") not in lanes and not any(
        k[0] == "j" for k in lanes
    )  # sub/ is not read by GitHub


def test_section_rows_findings_and_controls(builder, run_cli):
    _repo(builder)
    snap = builder.snapshot()
    code, out, err = run_cli(
        "lanes", "--repo", str(builder.path), "--format", "json", "--fail-on", "never"
    )
    assert code == 0, err
    sec = json.loads(out)["sections"][0]
    row = next(
        r for r in sec["data"]["rows"] if r["job"] == "gpu" and r["input"] == "pytest_markers"
    )
    assert row == {
        "job": "gpu",
        "input": "pytest_markers",
        "expression": "gpu and not slow",
        "path": ".github/workflows/ci.yml",
        "line": 19,
        "source": "with",
        "uses": "./.github/workflows/gpu.yml",
        "template": None,
        "via": [],
    }
    kinds = {(f["kind"], f["severity"]) for f in sec["findings"]}
    assert ("lane-expression", "P2") in kinds  # "not (gpu" does not parse
    assert ("workflow-unreadable", "P2") in kinds  # list.yaml is not a mapping
    assert ("lane-unread", "info") in kinds  # PYTEST_MARKERS under env
    ctrl = {c["name"]: c for c in sec["controls"]}
    assert ctrl["expression read back from the raw line"]["ok"] is True
    assert "ci.yml:37" in ctrl["text scan for marker-named keys"]["result"]
    assert builder.snapshot() == snap
    code, _, _ = run_cli("lanes", "--repo", str(builder.path), "--format", "md", "--fail-on", "p2")
    assert code == 1


def test_workflow_option_extra_lanes_and_ref(builder):
    _repo(builder)
    builder.commit(
        "more", {".github/workflows/ci.yml": "jobs:\n  only:\n    with:\n      markers: new\n"}
    )
    repo = GitRepo(builder.path)
    old = find_lanes(repo, "HEAD~1", [".github/workflows/ci.yml"])
    assert ("unit", "markers") in _by_name(old)
    new = find_lanes(
        repo,
        "HEAD",
        [".github/workflows/ci.yml"],
        extra_lanes=[{"name": "nightly", "expression": " slow "}],
    )
    assert [(ln.job, ln.expression, ln.source) for ln in new] == [
        ("only", "new", "with"),
        ("nightly", "slow", "scenario"),
    ]
    with pytest.raises(UsageError):
        find_lanes(repo, "HEAD", [".github/workflows/missing.yml"])
    with pytest.raises(UsageError):
        find_lanes(repo, "HEAD", extra_lanes=[{"name": "x"}])


def test_broken_yaml_and_non_utf8(builder):
    builder.commit(
        "odd",
        {
            ".github/workflows/broken.yml": "jobs: [\n",
            ".github/workflows/latin.yml": b"jobs:\n  j:\n    with:\n      markers: caf\xe9\n",
        },
    )
    scan = scan_lanes(GitRepo(builder.path), "HEAD")
    assert [(ln.job, ln.expression) for ln in scan.lanes] == [("j", "caf\ufffd")]
    reasons = dict(scan.problems)
    assert "not valid YAML" in reasons[".github/workflows/broken.yml"]
    assert "non-UTF-8" in reasons[".github/workflows/latin.yml"]


def test_no_workflows_is_an_empty_table_and_bare_repo_works(builder, tmp_path):
    builder.commit("plain", {"README": "x\n"})
    section = lanes_section(GitRepo(builder.path))
    assert section.tables[0].rows == [] and section.tables[0].control and section.not_verified
    _repo(builder)
    bare = builder.bare_clone(tmp_path / "bare.git")
    assert ("gpu", "pytest_markers") in _by_name(find_lanes(GitRepo(bare), "main"))


def test_unknown_and_option_like_refs(builder, run_cli, tmp_path):
    _repo(builder)
    out_file = tmp_path / "r.json"
    code, _, err = run_cli(
        "lanes", "--repo", str(builder.path), "--ref", "nope", "--output", str(out_file)
    )
    assert code == 2 and len(err.strip().splitlines()) == 1 and not out_file.exists()
    builder.repo.git.update_ref("refs/heads/--upload-pack=x", "HEAD")
    code, out, err = run_cli(
        "lanes",
        "--repo",
        str(builder.path),
        "--ref=--upload-pack=x",
        "--format",
        "json",
        "--fail-on",
        "never",
    )
    assert code == 0, err
    assert json.loads(out)["sections"][0]["data"]["rows"]


RUN_WF = """\
jobs:
  unit:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Unit tests
        run: |
          pip install -e .
          python -m pytest \\
            -m "pre_merge and not gpu" tests/
          echo -m not-a-lane
      - run: pytest -q tests/smoke  # no marker: not a lane
      - run: pytest -m nightly --durations=5
      - run: pytest -m 'inference_ops' -m 'inference' unit/  # pytest keeps the last -m
"""


def test_pytest_marker_expressions_in_run_scripts(builder):
    builder.commit("wf", {".github/workflows/run.yml": RUN_WF})
    lanes = [ln for ln in find_lanes(GitRepo(builder.path), "HEAD") if ln.source == "run"]
    assert [(ln.job, ln.input, ln.expression, ln.line) for ln in lanes] == [
        (
            "unit",
            "run: Unit tests",
            "pre_merge and not gpu",
            10,
        ),  # the continuation line that holds it
        ("unit", "run: step 4", "nightly", 13),
        ("unit", "run: step 5", "inference", 14),
    ]
    section = lanes_section(GitRepo(builder.path), "HEAD")
    readback = next(
        c for c in section.controls if c.name == "expression read back from the raw line"
    )
    assert readback.ok is True and readback.result.startswith("3 of 3")
