"""Lanes hidden in shell wrappers: run: scripts read with a shell parser (harness/checks/lanes/gha_shell.py)."""

from __future__ import annotations

import shlex

from harness.checks.lanes.check import find_lanes, lanes_check
from harness.checks.lanes.gha_shell import MAX_NESTING, MAX_SCRIPT, pytest_calls
from harness.git.repo import GitRepo

# The shape of the issue's workflow: marks from matrix.include entries, handed to the job's env,
# used inside a docker run … bash -c string, once through ${{ env }} and once as the shell's $VAR.
DOCKER = """\
name: gpu
on: [push]
env:
  IMAGE: ci:latest
jobs:
  tests:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        include:
          - name: unit
            pytest_marks: "pre_merge and not gpu"
          - name: gpu
            pytest_marks: "gpu and not slow"
          - name: e2e
            pytest_marks: e2e
    env:
      PYTEST_MARKS: ${{ matrix.pytest_marks }}
    steps:
      - name: in docker, through env
        run: |
          docker run --rm --gpus all -v "$PWD":/w -w /w "$IMAGE" \\
            bash -c "cd /w && pytest -x --durations=5 -m \\"${{ env.PYTEST_MARKS }}\\" tests/"
      - name: in docker, the shell's variable
        run: >-
          docker run --rm -e PYTEST_MARKS="$PYTEST_MARKS" ${IMAGE}
          bash -c "pytest -m \\"$PYTEST_MARKS\\" tests/"
"""


def _lanes(builder, files):
    builder.commit("wf", files)
    repo = GitRepo(builder.path)
    return find_lanes(repo, "HEAD"), lanes_check(repo, "HEAD")


def test_docker_bash_c_lanes_from_matrix_include_through_env(builder):
    lanes, checked = _lanes(builder, {".github/workflows/gpu.yml": DOCKER})
    rows = sorted((ln.job, ln.input, ln.expression, ln.line) for ln in lanes)
    # every include entry is a lane of both steps, placed on the entry's own line
    assert rows == sorted(
        [
            (f"tests[pytest_marks={m}]", f"run: {step}", m, line)
            for m, line in (("pre_merge and not gpu", 12), ("gpu and not slow", 14), ("e2e", 16))
            for step in ("in docker, through env", "in docker, the shell's variable")
        ]
    )
    assert {ln.via for ln in lanes} == {("docker run", "bash -c")}
    kinds = {f.kind for f in checked.section.findings}
    assert "lane-unread" not in kinds and "lane-unread-shell" not in kinds
    text_scan = next(c for c in checked.section.controls if c.name.startswith("text scan"))
    assert text_scan.ok is True  # every pytest_marks: line became a lane


FOLDED = """\
on: [push]
jobs:
  fast:
    runs-on: ubuntu-latest
    steps:
      - name: fast tests
        run: >-
          uv run --group dev coverage run -m pytest
          --durations=5 --exitfirst
          -m "not slow and not requires_creds and
          not flaky"
      - name: literal
        run: |
          set -euo pipefail
          python3 -m pytest \\
            -v \\
            -m 'smoke' tests/
          echo pytest -m not-a-lane
"""


def test_folded_block_lane_is_placed_and_read_back(builder):
    lanes, checked = _lanes(builder, {".github/workflows/t.yml": FOLDED})
    assert [(ln.expression, ln.line, ln.via) for ln in lanes] == [
        ("not slow and not requires_creds and not flaky", 10, ("uv run", "coverage run")),
        ("smoke", 17, ("python -m pytest",)),
    ]
    readback = next(c for c in checked.section.controls if c.name.startswith("expression read"))
    assert readback.ok is True and readback.result.startswith("2 of 2")


SCRIPTED = """\
on: [push]
jobs:
  t:
    runs-on: ubuntu-latest
    env:
      BASE: not gpu
    steps:
      - name: branches
        run: |
          if [[ "${{ github.event_name }}" == "schedule" ]]; then
            FINAL="${BASE}"
          else
            FINAL="${BASE} and not scheduled_only"
          fi
          $PYTHON_EXE -m pytest -v -m "${FINAL}" &
          wait $!
      - name: computed
        run: |
          MARKS=$(cat marks.txt)
          pytest -m "$MARKS"
      - name: tox
        run: tox -e py311 -- -m "not network"
      - name: sh in docker exec
        run: docker exec -t box sh -lc 'cd /src && python -m pytest -m "db and not slow"'
"""


def test_shell_assignments_branches_and_what_is_not_read(builder):
    lanes, checked = _lanes(builder, {".github/workflows/s.yml": SCRIPTED})
    assert sorted((ln.input, ln.expression, ln.line) for ln in lanes) == [
        ("run: branches", "not gpu", 6),  # ${BASE} alone: the env: value's own line
        ("run: branches", "not gpu and not scheduled_only", 13),
        ("run: sh in docker exec", "db and not slow", 24),
        ("run: tox", "not network", 22),
    ]
    unread = [f for f in checked.section.findings if f.kind == "lane-unread-shell"]
    assert len(unread) == 1
    assert "s.yml:20" in unread[0].title and "command substitution" in unread[0].title


def test_pytest_calls_bounds_and_wrappers():
    # nested bash -c past the bound is listed, not followed
    inner = 'pytest -m "deep"'
    for _ in range(MAX_NESTING + 1):
        inner = "bash -c " + shlex.quote(inner)
    read = pytest_calls(inner)
    assert not read.calls and read.unread and "nested deeper" in read.unread[0][1]
    huge = "pytest -m x\n" + "#" * MAX_SCRIPT
    assert "over" in pytest_calls(huge).unread[0][1]
    # wrappers that are not pytest runners: no lane; a command the reading does not know: listed
    assert pytest_calls("echo pytest -m x; pip install pytest").calls == []
    read = pytest_calls("make test -- pytest -m slow")
    assert not read.calls and "a command not read" in read.unread[0][1]
    # the last -m wins, -mEXPR and env/sudo/timeout prefixes
    calls = pytest_calls("sudo -E env A=1 timeout 30m pytest -m a -m'b or c'").calls
    assert [c.expression for c in calls] == ["b or c"]
    # a variable for one command only, and a ${{ }} kept as written
    calls = pytest_calls('M="${{ matrix.m }} and x" pytest -m "$M"').calls
    assert [c.expression for c in calls] == ["${{ matrix.m }} and x"]


PIXI_WF = """\
on: [push]
jobs:
  test:
    strategy:
      matrix:
        task: [test-ci, test-noqueue]
        partition: [ci1, not ci1]
    steps:
      - name: Test
        shell: bash -l {0}
        run: |
          set -o pipefail
          pixi run -e py312 ${{ matrix.task }} \\
            -m "${{ matrix.partition }}" \\
          | tee pytest-stdout.log
      - name: named task
        run: pixi run smoke
      - name: a command, not a task
        run: pixi run python -m pytest -m "not slow"
      - name: a task picked by CI, no -m of its own
        run: pixi run ${{ inputs.task }} --count 3
"""
PIXI_TOML = """\
[tasks]
smoke = "pytest -m smoke -x"
gpu = "pytest -m gpu"
lint = "ruff check ."

[feature.test.tasks]
test-ci = "coverage run -m pytest --runslow"

[feature.test.tasks.test-noqueue]
cmd = "coverage run -m pytest --runslow"
"""


def test_pixi_tasks_are_read_from_the_manifest_at_the_ref(builder):
    lanes, checked = _lanes(builder, {".github/workflows/t.yml": PIXI_WF, "pixi.toml": PIXI_TOML})
    assert sorted((ln.job, ln.expression, ln.line, ln.via) for ln in lanes) == [
        ("test", "not slow", 19, ("pixi run", "python -m pytest")),
        ("test", "smoke", 2, ("pixi run smoke",)),  # written in pixi.toml, on its line 2
        ("test[partition=ci1]", "ci1", 7, ("pixi run ${{ matrix.task }}",)),
        ("test[partition=not ci1]", "not ci1", 7, ("pixi run ${{ matrix.task }}",)),
    ]
    assert {ln.path for ln in lanes if ln.expression == "smoke"} == {"pixi.toml"}
    readback = next(c for c in checked.section.controls if c.name.startswith("expression read"))
    assert readback.ok is True  # smoke read back from pixi.toml's line
    unread = [f.title for f in checked.section.findings if f.kind == "lane-unread-shell"]
    assert len(unread) == 1 and "picked when CI runs" in unread[0] and "t.yml:21" in unread[0]
    # without the manifest the task is not known: its -m is not read as a lane
    builder.remove("pixi.toml")
    builder.commit("no manifest")
    names = {ln.expression for ln in find_lanes(GitRepo(builder.path), "HEAD")}
    assert names == {"not slow"}


TOX_WF = """\
on: [push]
jobs:
  tox:
    steps:
      - run: uv run tox -e integration,py311
      - run: tox run -e py312 -- -m "smoke and not slow"
      - run: tox -e lint
"""
TOX_INI = """\
[tox]
envlist = py311, integration

[testenv]
commands = pytest -m "not slow" {posargs}

[testenv:integration]
commands =
    -python -m pytest \\
      -m integration {posargs:tests}

[testenv:lint]
commands = ruff check .
"""


def test_tox_environments_are_read_from_tox_ini(builder):
    lanes, checked = _lanes(builder, {".github/workflows/t.yml": TOX_WF, "tox.ini": TOX_INI})
    assert sorted((ln.expression, ln.path, ln.line, ln.via) for ln in lanes) == [
        ("integration", "tox.ini", 10, ("uv run", "tox -e integration", "python -m pytest")),
        ("not slow", "tox.ini", 5, ("uv run", "tox -e py311")),
        ("smoke and not slow", ".github/workflows/t.yml", 6, ("tox -e py312",)),  # {posargs}
    ]
    readback = next(c for c in checked.section.controls if c.name.startswith("expression read"))
    assert readback.ok is True


SCRIPT_WF = """\
on: [push]
jobs:
  unit:
    strategy:
      matrix:
        pattern: ["not slow and not network", "network"]
    env:
      PATTERN: ${{ matrix.pattern }}
    steps:
      - run: ci/run_tests.sh
      - run: bash ci/run_tests.sh "db"
      - run: bash ci/not_in_the_tree.sh
"""
RUN_TESTS = """\
#!/bin/bash
set -euo pipefail
echo "pytest -m $PATTERN"
pytest -m "$PATTERN" -n 4 pandas
MARKS="${1:-not single_cpu}"
python -m pytest -m "$MARKS and not clipboard" pandas
"""


def test_scripts_the_step_runs_are_read_at_the_ref(builder):
    lanes, checked = _lanes(
        builder, {".github/workflows/t.yml": SCRIPT_WF, "ci/run_tests.sh": RUN_TESTS}
    )
    assert sorted((ln.job, ln.input, ln.expression, ln.path, ln.line) for ln in lanes) == [
        ("unit", "run: step 1", "not single_cpu and not clipboard", "ci/run_tests.sh", 6),
        ("unit", "run: step 2", "db and not clipboard", "ci/run_tests.sh", 6),
        # $PATTERN from the job's env:, one lane per matrix value, on the matrix's line
        ("unit[pattern=network]", "run: step 1", "network", ".github/workflows/t.yml", 6),
        ("unit[pattern=network]", "run: step 2", "network", ".github/workflows/t.yml", 6),
        (
            "unit[pattern=not slow and not network]",
            "run: step 1",
            "not slow and not network",
            ".github/workflows/t.yml",
            6,
        ),
        (
            "unit[pattern=not slow and not network]",
            "run: step 2",
            "not slow and not network",
            ".github/workflows/t.yml",
            6,
        ),
    ]
    assert all(ln.via[0] == "script ci/run_tests.sh" for ln in lanes)
    assert not [f for f in checked.section.findings if f.kind == "lane-expression"]
    readback = next(c for c in checked.section.controls if c.name.startswith("expression read"))
    assert readback.ok is True


CALLER = """\
on: [push]
jobs:
  suite:
    strategy:
      matrix:
        flavor: [unit, gpu]
    uses: ./.github/workflows/run.yml
    with:
      flavor: ${{ matrix.flavor }}
"""
CALLED = """\
on:
  workflow_call:
    inputs:
      flavor:
        type: string
        default: unit
jobs:
  test:
    runs-on: ubuntu-latest
    env:
      MARKS: >-
        ${{ fromJSON('{"unit": "not gpu and not slow", "gpu": "gpu"}')[inputs.flavor] }}
    steps:
      - run: docker run --rm -e MARKS img bash -c 'pytest -m "$MARKS"'
"""


def test_reusable_workflow_read_through_its_callers_inputs(builder):
    lanes, _checked = _lanes(
        builder, {".github/workflows/ci.yml": CALLER, ".github/workflows/run.yml": CALLED}
    )
    rows = sorted((ln.job, ln.expression, ln.path) for ln in lanes)
    assert rows == [
        # through the caller, once per flavor its matrix passes
        ("suite[flavor=gpu] → test", "gpu", ".github/workflows/run.yml"),
        ("suite[flavor=unit] → test", "not gpu and not slow", ".github/workflows/run.yml"),
        # the called workflow on its own: inputs only its callers know (not its default: a caller may
        # pass another value), so the lane stays as written
        ("test", "$MARKS", ".github/workflows/run.yml"),
    ]


def test_reusable_workflow_fan_out_is_bounded(builder):
    # a workflow calling itself from 8 jobs, each over 16 combinations: 8 × 16 × 8 × … readings
    jobs = "".join(
        f"  j{i}:\n    strategy:\n      matrix:\n        a: [{', '.join(map(str, range(16)))}]\n"
        f"    uses: ./.github/workflows/ci.yml\n    with:\n      x: ${{{{ matrix.a }}}}\n"
        for i in range(8)
    )
    builder.commit("wf", {".github/workflows/ci.yml": "on: [push]\njobs:\n" + jobs})
    checked = lanes_check(GitRepo(builder.path), "HEAD")
    bounded = [f.title for f in checked.section.findings if f.kind == "lane-bounded"]
    assert bounded == [
        ".github/workflows/ci.yml: reusable workflows read through their callers: the first 512 jobs"
    ]
