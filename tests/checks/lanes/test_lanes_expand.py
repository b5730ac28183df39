"""Lanes as real workflows write them: matrix include entries, local composite actions, env: values —
expanded per matrix combination, bounded on hostile input."""

from __future__ import annotations

import json
import time

import pytest

from harness.checks.lanes.check import find_lanes, lanes_section
from harness.checks.lanes.gha_expr import UNKNOWN, LStr, Scope, render
from harness.checks.tests_as_evidence.selection import lanes_from_workflows
from harness.git.repo import GitRepo

INCLUDE = """\
jobs:
  tests:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        include:
          - suite: unit
            marker: "not gpu and not slow"
          - suite: gpu
            marker: gpu
    steps:
      - run: pytest -m "${{ matrix.marker }}" tests/
  versions:
    strategy:
      matrix:
        python: ["3.11", "3.12"]
        include:
          - marker: "not slow"
          - python: "3.12"
            marker: slow
          - python: "3.13"
            marker: smoke
    steps:
      - run: pytest -m "${{ matrix.marker }}"
  domains:
    strategy:
      matrix:
        domain:
          - {name: agents, marker: domain_agents}
          - {name: infra, marker: domain_infra}
    steps:
      - name: Run domain tests
        run: |
          uv run pytest -m "${{ matrix.domain.marker }} and not integration" -q
"""


def _lanes(builder, files):
    builder.commit("wf", files)
    return find_lanes(GitRepo(builder.path), "HEAD")


def _rows(lanes):
    return [(ln.job, ln.expression, ln.line) for ln in lanes]


def test_matrix_include_entries_expand_per_entry(builder):
    lanes = _lanes(builder, {".github/workflows/ci.yml": INCLUDE})
    assert _rows(lanes) == [
        (
            "tests[marker=not gpu and not slow]",
            "not gpu and not slow",
            8,
        ),  # the include entry's own line
        ("tests[marker=gpu]", "gpu", 10),
        # GitHub's include rules: an entry without original keys extends every combination, a later one
        # overrides that added value where its original key matches, one that matches none is its own job
        ("versions[marker=not slow]", "not slow", 18),
        ("versions[marker=slow]", "slow", 20),
        ("versions[marker=smoke]", "smoke", 22),
        (
            "domains[domain={name: agents, marker: domain_agents}]",
            "domain_agents and not integration",
            34,
        ),
        (
            "domains[domain={name: infra, marker: domain_infra}]",
            "domain_infra and not integration",
            34,
        ),
    ]
    assert lanes[1].template == "${{ matrix.marker }}" and lanes[1].source == "run"
    section = lanes_section(GitRepo(builder.path), "HEAD")
    readback = next(
        c for c in section.controls if c.name == "expression read back from the raw line"
    )
    assert readback.ok is True and readback.result.startswith(
        "5 of 5"
    )  # composed texts are not counted


ACTION = """\
name: run tests
inputs:
  markers:
    description: pytest -m
    default: "not slow"
  workers: {default: "4"}
runs:
  using: composite
  steps:
    - name: pytest
      shell: bash
      run: python -m pytest -n ${{ inputs.workers }} -m "${{ inputs.markers }}" tests
"""

CALLER = """\
jobs:
  gpu:
    strategy:
      matrix:
        lane: [gpu, "gpu and slow"]
    steps:
      - uses: actions/checkout@v4
      - uses: ./.github/actions/run-tests
        with:
          markers: ${{ matrix.lane }}
  default:
    steps:
      - uses: ./.github/actions/run-tests/
  missing:
    steps:
      - uses: ./.github/actions/nope
        with:
          markers: smoke
"""


def test_local_composite_action_receives_inputs(builder):
    lanes = _lanes(
        builder,
        {".github/workflows/ci.yml": CALLER, ".github/actions/run-tests/action.yml": ACTION},
    )
    got = [(ln.job, ln.input, ln.expression, ln.path, ln.line, ln.source) for ln in lanes]
    assert got == [
        (
            "gpu[lane=gpu]",
            "run: .github/actions/run-tests: pytest",
            "gpu",
            ".github/workflows/ci.yml",
            5,
            "action",
        ),
        (
            "gpu[lane=gpu and slow]",
            "run: .github/actions/run-tests: pytest",
            "gpu and slow",
            ".github/workflows/ci.yml",
            5,
            "action",
        ),
        (
            "default",
            "run: .github/actions/run-tests: pytest",
            "not slow",
            ".github/actions/run-tests/action.yml",
            5,
            "action",
        ),
        (
            "missing",
            "markers",
            "smoke",
            ".github/workflows/ci.yml",
            18,
            "step with",
        ),  # no action.yml: the input
    ]
    section = lanes_section(GitRepo(builder.path), "HEAD")
    [missing] = [f for f in section.findings if f.kind == "lane-action-missing"]
    assert (
        missing.title.startswith("1 local action(s)")
        and missing.detail == "./.github/actions/nope (used in .github/workflows/ci.yml)"
    )
    readback = next(
        c for c in section.controls if c.name == "expression read back from the raw line"
    )
    assert readback.ok is True
    selected, skipped = lanes_from_workflows(GitRepo(builder.path), "HEAD")
    assert [x.expr for x in selected] == [
        "gpu",
        "gpu and slow",
        "not slow",
        "smoke",
    ] and skipped == []


ENV = """\
env:
  BASE_MARK: "not slow"
jobs:
  unit:
    strategy:
      matrix:
        test-type: [unit, integration]
        os: [ubuntu, windows, macos]
    env:
      PYTEST_MARKER: ${{ matrix.test-type == 'UNIT' && 'not integration' || 'integration' }}
    steps:
      - run: python -m pytest -m "${{ env.PYTEST_MARKER }}"
      - run: pytest -m "$STEP_MARK"
        env:
          STEP_MARK: ${{ env.BASE_MARK }} and not gpu
      - run: pytest -m "$UNSET_IN_YAML"
  nightly:
    steps:
      - run: pytest -m "${{ github.event_name == 'schedule' && 'slow' || 'not slow' }}"
      - run: >
          python -m pytest
          --durations=5
          -m "${{ env.BASE_MARK }}"
"""


def test_env_values_at_workflow_job_and_step_level(builder):
    lanes = _lanes(builder, {".github/workflows/ci.yml": ENV})
    assert _rows(lanes) == [
        ("unit[test-type=unit]", "not integration", 10),  # the literal's line: the job's env value
        ("unit[test-type=integration]", "integration", 10),
        ("unit", "not slow and not gpu", 13),  # composed from step env + workflow env: the run line
        ("unit", "$UNSET_IN_YAML", 16),  # a variable no env: sets stays as written
        ("nightly", "${{ github.event_name == 'schedule' && 'slow' || 'not slow' }}", 19),
        ("nightly", "not slow", 2),
    ]
    selected, skipped = lanes_from_workflows(GitRepo(builder.path), "HEAD")
    assert (
        len(skipped) == 2 and "$UNSET_IN_YAML" in skipped[0] and "github.event_name" in skipped[1]
    )
    assert not [
        f
        for f in lanes_section(GitRepo(builder.path), "HEAD").findings
        if f.kind == "lane-expression"
    ]


def test_huge_matrix_is_capped_with_a_note(builder, run_cli):
    axes = "\n".join(f"        k{i}: [{', '.join(str(j) for j in range(10))}]" for i in range(12))
    wf = (
        f"jobs:\n  big:\n    strategy:\n      matrix:\n{axes}\n"
        f'    steps:\n      - run: pytest -m "m${{{{ matrix.k0 }}}}"\n'
    )
    builder.commit("wf", {".github/workflows/big.yml": wf})
    t0 = time.monotonic()
    code, out, err = run_cli(
        "lanes", "--repo", str(builder.path), "--format", "json", "--fail-on", "never"
    )
    assert code == 0, err
    assert time.monotonic() - t0 < 60  # the matrix is capped, not expanded whole
    sec = json.loads(out)["sections"][0]
    assert [r["expression"] for r in sec["data"]["rows"]] == [
        "m0"
    ]  # the first 256 combinations hold k0=0 only
    bounded = [f for f in sec["findings"] if f["kind"] == "lane-bounded"]
    assert len(bounded) == 1 and "1000000000000 combinations" in bounded[0]["title"]
    assert any("first 256" in n for n in sec["not_verified"])


def test_hostile_expressions_stay_bounded(builder):
    wf = """\
env:
  A: ${{ env.B }}
  B: ${{ env.A }}
jobs:
  loop:
    steps:
      - run: pytest -m "${{ env.A }}"
      - uses: ./.github/actions/self
      - uses: ./../../outside
      - run: pytest -m "${{ ((((((((( matrix.x )))))))) }}"
      - run: pytest -m "${{ ((((((((( matrix.x ))))))))) }}"
"""
    selfref = "runs:\n  using: composite\n  steps:\n    - uses: ./.github/actions/self\n"
    lanes = _lanes(
        builder, {".github/workflows/ci.yml": wf, ".github/actions/self/action.yml": selfref}
    )
    unbalanced, balanced = (
        "${{ ((((((((( matrix.x )))))))) }}",
        "${{ ((((((((( matrix.x ))))))))) }}",
    )
    assert [(ln.expression, ln.template) for ln in lanes] == [
        ("${{ env.A }}", None),
        (unbalanced, None),
        ("", balanced),
    ]


@pytest.mark.parametrize(
    "expr,matrix,want",
    [
        ("matrix.t == 'unit' && 'a' || 'b'", {"t": "Unit"}, "a"),  # == ignores case, as in GitHub
        ("matrix.t != 'unit' && 'a' || 'b'", {"t": "unit"}, "b"),
        ("!matrix.flag && 'off' || 'on'", {"flag": "true"}, "on"),
        ("matrix.n >= 3 && 'big' || 'small'", {"n": "3.0"}, "big"),
        ("matrix.missing", {}, ""),
        ("(matrix.t == 'x') || matrix.t", {"t": "y"}, "y"),
        ("format('{0} and not {1}', matrix.t, 'slow')", {"t": "gpu"}, "gpu and not slow"),
        ("format('{{0}} {0}', matrix.t)", {"t": "y"}, "{0} y"),
        ("format('{2}', matrix.t)", {"t": "y"}, UNKNOWN),
        ("contains(matrix.t, 'PU') && 'gpu' || 'cpu'", {"t": "gpu-a100"}, "gpu"),
        ("startsWith(matrix.t, 'x') && 'a' || 'b'", {"t": "y"}, "b"),
        ("hashFiles('**/x')", {}, UNKNOWN),
        ("secrets.TOKEN || 'x'", {}, UNKNOWN),
        ("matrix.t ==", {"t": "y"}, UNKNOWN),
        ('fromJSON(\'{"unit": "not gpu", "gpu": "gpu"}\')[matrix.t]', {"t": "gpu"}, "gpu"),
        ('fromJSON(\'["a", "b"]\')[1]', {}, "b"),
        ("fromJSON('{\"a\": ')['a']", {}, UNKNOWN),  # not JSON
        ("fromJSON('" + "[" * 5000 + "]" * 5000 + "')", {}, UNKNOWN),  # nested past the parser
        ("fromJSON(matrix.t)['k']", {"t": '{"k": "v"}'}, "v"),
    ],
)
def test_expression_evaluator(expr, matrix, want):
    scope = Scope({k: LStr(v, "f", 1) for k, v in matrix.items()})
    got = render(LStr("${{ " + expr + " }}", "f", 9), scope)
    assert got is UNKNOWN if want is UNKNOWN else str(got) == want


def test_exponential_env_and_huge_include_stay_bounded(builder):
    """env values that each double the next one, and an include list past the value budget."""
    levels = (
        "\n".join(f'  E{i}: "{("${{ env.E" + str(i + 1) + " }}") * 8}"' for i in range(8))
        + "\n  E8: x\n"
    )
    include = "\n".join(f"          - {{marker: m{i}}}" for i in range(25_000))
    wf = (
        f'env:\n{levels}jobs:\n  blow:\n    steps:\n      - run: pytest -m "${{{{ env.E0 }}}}"\n'
        f"  wide:\n    strategy:\n      matrix:\n        include:\n{include}\n"
        '    steps:\n      - run: pytest -m "${{ matrix.marker }}"\n'
    )
    builder.commit("wf", {".github/workflows/ci.yml": wf})
    t0 = time.monotonic()
    section = lanes_section(GitRepo(builder.path), "HEAD")
    assert time.monotonic() - t0 < 30
    rows = section.data["rows"]
    assert [(r["job"], r["expression"]) for r in rows] == [
        ("blow", "${{ env.E0 }}"),
        ("wide", "${{ matrix.marker }}"),
    ]
    assert [f.title for f in section.findings if f.kind == "lane-bounded"] == [
        ".github/workflows/ci.yml: job wide: its matrix is too large to read; lanes that read it stay unexpanded"
    ]
