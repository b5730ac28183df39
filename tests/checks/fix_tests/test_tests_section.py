"""The tests section on a real repository (harness/testing/fix_repo.py), real pytest in a real
environment built from the project's pyproject.toml, held to plain pytest runs made by hand."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.testing import fix_repo
from harness.testing.network import need_index
from harness.testing.pytest_truth import plain_checkout, plain_pytest
from harness.testing.repos import RepoBuilder


@pytest.fixture(scope="module")
def calc(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    need_index()
    path = tmp_path_factory.mktemp("calc") / "repo"
    return path, fix_repo.build(path)


def _compare(run_cli, repo: Path, head: str, out: Path, *extra: str) -> tuple[int, dict]:
    code, _, err = run_cli(
        "compare",
        f"release/1.x..{head}",
        "--source",
        "main",
        "--repo",
        str(repo),
        "--output-dir",
        str(out),
        "--format",
        "none",
        *extra,
    )
    assert code in (0, 1), err
    report = json.loads((out / "report.json").read_text())
    return code, report


def _tests(report: dict) -> dict:
    return next(s for s in report["sections"] if s["id"] == "tests")


def _verdicts(section: dict) -> dict[str, str]:
    return {t["nodeid"]: t["verdict"] for t in section["data"]["tests"]}


def test_a_whole_pick_proves_the_fix_and_equals_plain_pytest(calc, run_cli, tmp_path):
    repo, shas = calc
    code, report = _compare(run_cli, repo, "backport/whole", tmp_path / "r")
    section = _tests(report)
    assert _verdicts(section) == {
        "tests/test_ops.py::test_hi": "proves-fix",
        "tests/test_ops.py::test_order": "proves-fix",
        "tests/test_ops.py::test_lo": "passes-both",
    }
    assert code == 0
    rows = {t["nodeid"]: t for t in section["data"]["tests"]}
    # changed node ids first, marked
    assert [t["changed"] for t in section["data"]["tests"]] == [True, True, False]
    files, py = ["tests/test_ops.py"], sys.executable
    truth = {
        "without_fix": plain_pytest(repo, "release/1.x", files, [(files[0], "backport/whole")], py),
        "head": plain_pytest(repo, "backport/whole", files, python=py),
        "source": plain_pytest(repo, shas["squash"], files, python=py),
        "source_parent": plain_pytest(
            repo, shas["main_other"], files, [(files[0], shas["squash"])], py
        ),
    }
    for column, outcomes in truth.items():
        assert outcomes, column
        for nodeid, outcome in outcomes.items():
            assert rows[nodeid]["outcomes"][column] == outcome, (column, nodeid)
    assert "1 proves" not in section["summary"] and "2 prove the fix" in section["summary"]
    controls = {c["name"]: c for c in section["controls"]}
    assert controls["module path proof"]["ok"] is True
    assert "1 of 1 fix module(s)" in str(controls["module path proof"])


def test_a_pick_of_the_test_without_the_fix_is_blocked_naming_the_test(calc, run_cli, tmp_path):
    repo, _ = calc
    code, report = _compare(run_cli, repo, "backport/test-only", tmp_path / "r")
    assert code == 1
    section = _tests(report)
    verdicts = _verdicts(section)
    assert verdicts["tests/test_ops.py::test_hi"] == "fails-head"
    p1 = [f for f in section["findings"] if f["severity"] == "P1"]
    assert any("tests/test_ops.py::test_hi" in f["title"] for f in p1)


def test_a_partial_pick_is_blocked_with_the_missing_commit_named(calc, run_cli, tmp_path):
    repo, shas = calc
    code, report = _compare(
        run_cli, repo, "backport/partial", tmp_path / "r", "--source-branch", "pr/7"
    )
    assert code == 1
    section = _tests(report)
    assert _verdicts(section)["tests/test_ops.py::test_order"] == "source-test-fails-head"
    gap = [f for f in section["findings"] if f["kind"] == "test-gap-pinned"]
    assert gap and shas["c2"][:10] in gap[0]["title"]
    pin = section["data"]["pins"][0]
    assert pin["commit"] == shas["c2"] and pin["applies"] is True
    assert "tests/test_ops.py::test_order" in pin["turns_green"]
    assert "tests/test_ops.py::test_order" in pin["pinned_by"]
    actions = " ".join(c["action"] for c in report["causes"])
    assert f"cherry-pick -x {shas['c2'][:8]}" in actions


def test_a_warm_compare_runs_no_column_again(calc, run_cli, tmp_path):
    repo, _ = calc
    _, first = _compare(run_cli, repo, "backport/whole", tmp_path / "a")
    _, second = _compare(run_cli, repo, "backport/whole", tmp_path / "b")
    controls = {c["name"]: c for c in _tests(second)["controls"]}
    assert str(controls["section cache"]).count("from cache: ") == 1
    assert "measured" not in str(controls["section cache"])
    assert _tests(first)["data"]["tests"] == _tests(second)["data"]["tests"]


def test_no_tests_turns_the_section_off(calc, run_cli, tmp_path):
    repo, _ = calc
    _, report = _compare(run_cli, repo, "backport/whole", tmp_path / "r", "--no-tests")
    assert not [s for s in report["sections"] if s["id"] == "tests"]
    assert any("--no-tests" in n for n in report["not_verified"])


def test_the_rest_of_the_review_lanes_hunks_and_a_removed_string(calc, run_cli, tmp_path):
    repo, _ = calc
    code, report = _compare(run_cli, repo, "backport/rewords", tmp_path / "r")
    assert code == 1
    section = _tests(report)
    data = section["data"]
    # the one code hunk of the fix is needed by both proving tests; the message hunk by none
    needed = {h["file"]: h["failing"] for h in data["hunks"]}
    assert needed["src/calc/ops.py"] == [
        "tests/test_ops.py::test_hi",
        "tests/test_ops.py::test_order",
    ]
    assert needed["src/calc/messages.py"] == []
    # the reworded message is still matched by a test, and the source keeps it: P1
    strings = {x["string"]: x for x in data["removed_strings"]}
    assert strings["value was out of range"]["references"] == ["tests/test_messages.py:5"]
    assert strings["value was out of range"]["source_keeps"] is True
    p1 = [f for f in section["findings"] if f["kind"] == "removed-string-referenced"]
    assert p1 and p1[0]["severity"] == "P1" and "tests/test_messages.py:5" in p1[0]["title"]
    # the workflow's lane selects the proving tests
    assert (
        data["lanes"]["tests/test_ops.py::test_hi"] == ["unit · run"]
        or data["lanes"]["tests/test_ops.py::test_hi"]
    )
    assert not [f for f in section["findings"] if f["kind"] == "proving-test-in-no-lane"]


def test_a_pick_of_a_merged_prs_first_commit_names_the_commit_it_lacks(run_cli, tmp_path):
    """A PR merged with a merge commit: its first commit (the test) picked with -x, its second
    (the fix) not. Fidelity calls the pick identical to its source; the tests section takes the
    merge's other commits as commits the pick lacks and names the one that turns the test green."""
    need_index()
    from harness.testing.repos import RepoBuilder

    b = RepoBuilder(tmp_path / "repo")
    b.commit(
        "init",
        {
            "pyproject.toml": fix_repo.PYPROJECT,
            "src/calc/__init__.py": "",
            "src/calc/ops.py": fix_repo.OPS_BUG,
            "tests/test_ops.py": fix_repo.TEST_BASE,
        },
    )
    b.branch("release")
    b.branch("pr/8")
    b.checkout("pr/8")
    test = b.commit("Test clamping to hi", {"tests/test_ops.py": fix_repo.TEST_C1})
    fix = b.commit("Clamp to hi", {"src/calc/ops.py": fix_repo.OPS_C1})
    b.checkout("main")
    b.merge("pr/8", "Merge pull request #8 from pr/8")
    b.checkout("release")
    b.branch("backport")
    b.checkout("backport")
    b.cherry_pick(test, "-x")
    code, out, err = run_cli(
        "tests", "release..backport", "--source", "main", "--repo", str(b.path), "--format", "json"
    )
    assert code == 1, err
    doc = json.loads(out)
    section = doc["sections"][0]
    assert [p["commit"] for p in section["data"]["pins"]] == [fix]
    gap = [f for f in section["findings"] if f["kind"] == "test-gap-pinned"]
    assert gap and "tests/test_ops.py::test_hi" in gap[0]["title"] and fix[:10] in gap[0]["title"]
    assert any(f"cherry-pick -x {fix[:8]}" in c["action"] for c in doc["causes"])


def _calc(
    tmp_path: Path,
    tests: str = fix_repo.TEST_BASE,
    *,
    at: str = "tests/test_ops.py",
    pyproject: str = fix_repo.PYPROJECT,
    extra: dict[str, str] | None = None,
) -> RepoBuilder:
    """The calc project at its bug (its tests ``tests`` at ``at``), ``release`` branched there."""
    b = RepoBuilder(tmp_path / "repo")
    b.commit(
        "init",
        {
            "pyproject.toml": pyproject,
            "src/calc/__init__.py": "",
            "src/calc/ops.py": fix_repo.OPS_BUG,
            at: tests,
            **(extra or {}),
        },
    )
    b.branch("release")
    return b


def _backport(b: RepoBuilder, fix: str, files: dict[str, str] | None = None) -> None:
    """``backport`` from ``release``: ``fix`` cherry-picked (-x), or ``files`` committed with its
    trailer (a pick that differs from its source)."""
    b.checkout("release")
    b.branch("backport")
    b.checkout("backport")
    if files is None:
        b.cherry_pick(fix, "-x")
    else:
        b.commit(f"[release] Clamp to hi (#9)\n\n(cherry picked from commit {fix})", files)


def _fix(
    b: RepoBuilder, tests: str = fix_repo.TEST_BASE, extra: dict[str, str] | None = None
) -> str:
    """The fix on main: ops clamped to hi, and ``tests`` with the test that proves it (and
    ``extra`` files)."""
    return b.commit(
        "Clamp to hi (#9)",
        {
            "src/calc/ops.py": fix_repo.OPS_C1,
            "tests/test_ops.py": tests + "\n\ndef test_hi():\n    assert clamp(50, 0, 9) == 9\n",
            **(extra or {}),
        },
    )


def _run_tests(run_cli, b: RepoBuilder) -> tuple[int, dict, str]:
    """``harness tests release..backport --source main``: exit code, the section, stderr."""
    code, out, err = run_cli(
        "tests", "release..backport", "--source", "main", "--repo", str(b.path), "--format", "json"
    )
    assert out, err
    return code, json.loads(out)["sections"][0], err


def test_a_fix_whose_only_test_is_skipped_here_says_so(run_cli, tmp_path):
    """pytest 8.0.x's backport of #12024: the fix's one new test runs on Windows only. Every column
    skips it; the section says the changed test was skipped at HEAD (with pytest's own reason, as
    ``pytest -rs`` prints it) instead of calling it a test that passes without the fix."""
    need_index()
    skipped = (
        "import sys\n\nimport pytest\n\n"
        + fix_repo.TEST_BASE
        + '\n\n@pytest.mark.skipif(sys.platform != "win32", reason="only on Windows")\n'
        + "def test_hi():\n    assert clamp(50, 0, 9) == 9\n"
        + "\n\ndef test_room(tmp_path):\n    pytest.skip(f'no room in {tmp_path}/x nor in {tmp_path}/y')\n"
    )
    b = _calc(tmp_path)
    fix = b.commit(
        "Clamp to hi on Windows (#9)",
        {"src/calc/ops.py": fix_repo.OPS_C1, "tests/test_ops.py": skipped},
    )
    _backport(b, fix)
    code, section, err = _run_tests(run_cli, b)
    assert code == 0, err
    rows = {t["nodeid"]: t for t in section["data"]["tests"]}
    new = rows["tests/test_ops.py::test_hi"]
    assert new["verdict"] == "skipped" and new["changed"]
    assert set(new["outcomes"].values()) == {"skipped"}
    # plain pytest in the same tree: its -rs line gives the reason the report keeps
    tree = tmp_path / "plain"
    plain_checkout(b.path, "backport", tree)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-rs", "-p", "no:cacheprovider", "tests/test_ops.py"],
        cwd=tree,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(tree / "src"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        timeout=300,
    )
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("SKIPPED [1]"))
    assert line.endswith(": " + new["skip_reason"]) and new["skip_reason"] == "only on Windows"
    said = {
        f["title"].split()[3]: f for f in section["findings"] if f["kind"] == "changed-test-skipped"
    }
    assert sorted(said) == ["tests/test_ops.py::test_hi", "tests/test_ops.py::test_room"]
    assert "only on Windows" in said["tests/test_ops.py::test_hi"]["detail"]
    none = next(f for f in section["findings"] if f["kind"] == "no-test-proves-fix")
    assert none["detail"] == "of 2 changed test(s): 2 skipped (at HEAD: not run here)"
    assert "2 changed skipped at head" in section["summary"]
    # a reason naming the run's own folder names a placeholder: the same run, the same bytes
    room = rows["tests/test_ops.py::test_room"]["skip_reason"]
    assert room.startswith("no room in <tmp>/") and room.endswith("/y"), room
    assert "harness-" not in room and room.count("<tmp>/") == 2
    assert "skip_reason" not in rows["tests/test_ops.py::test_lo"]


def test_a_source_test_file_that_cannot_load_at_head_is_one_finding(run_cli, tmp_path):
    """urllib3 1.26.x's pick of #3435: the source's test_https.py imports a helper module main has
    and the release lacks, so beside HEAD it does not load; the pick carries its own version of
    the file, which runs. Before, each of its 227 tests was a P1 source-test-fails-head (the gate
    blocked on one import); now the file is one info finding and its tests are judged by the
    pick's version: the fix's test proves it."""
    need_index()
    b = _calc(tmp_path)
    b.commit("Add a formatting helper", {"src/calc/fmt.py": "def show(x):\n    return str(x)\n"})
    fix = b.commit(
        "Clamp to hi (#9)",
        {
            "src/calc/ops.py": fix_repo.OPS_C1,
            "tests/test_ops.py": "from calc.fmt import show  # noqa: F401\n" + fix_repo.TEST_C1,
        },
    )
    _backport(b, fix, {"src/calc/ops.py": fix_repo.OPS_C1, "tests/test_ops.py": fix_repo.TEST_C1})
    code, section, err = _run_tests(run_cli, b)
    assert code == 0, err
    assert _verdicts(section) == {
        "tests/test_ops.py::test_hi": "proves-fix",
        "tests/test_ops.py::test_lo": "passes-both",
    }
    rows = {t["nodeid"]: t for t in section["data"]["tests"]}
    assert rows["tests/test_ops.py::test_hi"]["outcomes"]["head_source_tests"] == "error"
    said = [f for f in section["findings"] if f["kind"] == "source-tests-not-loading"]
    assert len(said) == 1 and "tests/test_ops.py" in said[0]["title"]
    assert "No module named 'calc.fmt'" in said[0]["detail"]
    assert not [f for f in section["findings"] if f["severity"] == "P1"]


@pytest.mark.parametrize("tox", [False, True])
def test_proving_tests_in_no_lane_is_said_only_where_every_ci_run_was_read(run_cli, tmp_path, tox):
    """aiohttp 3.12: its one marker lane is `pytest -m dev_mode`, its main runs go through make and
    a plain pytest. Its proving tests are in no lane read, which does not make them unrun: the
    summary says "none of the lanes read", and no finding; where every run is a lane, "no lane"
    and the P2 finding."""
    need_index()
    steps = "      - run: python -m pytest -m slow tests\n" + (
        "      - run: tox -e py\n" if tox else ""
    )
    workflow = (
        "name: ci\non: [push]\njobs:\n  unit:\n    runs-on: ubuntu-latest\n    steps:\n" + steps
    )
    b = _calc(tmp_path, extra={".github/workflows/ci.yml": workflow})
    fix = b.commit(
        "Clamp to hi (#9)",
        {"src/calc/ops.py": fix_repo.OPS_C1, "tests/test_ops.py": fix_repo.TEST_C1},
    )
    _backport(b, fix)
    code, section, err = _run_tests(run_cli, b)
    assert _verdicts(section)["tests/test_ops.py::test_hi"] == "proves-fix", err
    found = [f for f in section["findings"] if f["kind"] == "proving-test-in-no-lane"]
    if tox:
        assert "lanes: proving test(s) in none of the lanes read" in section["summary"]
        assert not found and code == 0
    else:
        assert section["summary"].endswith("lanes: proving test(s) in no lane")
        assert found and found[0]["severity"] == "P2"


def test_a_source_test_file_the_pick_carries_at_another_path_is_not_run_beside_head(
    run_cli, tmp_path
):
    """ipython 8.x's pick of #14898: main moved the tests to tests/test_completer.py, 8.x keeps
    IPython/core/tests/test_completer.py, and the pick adds the same test there (fidelity pairs the
    files, "renamed"). Before, main's whole file ran beside HEAD as a test the pick lacks, and a
    test of main's other features failed there: a P1. Now the pick's file runs, the source's is
    named as not run, and the fix's test proves it."""
    need_index()
    pyproject = fix_repo.PYPROJECT.replace(
        '\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n', ""
    )
    main_only = "\n\ndef test_fmt():\n    from calc.fmt import show\n\n    assert show(1) == '1'\n"
    hi = "\n\ndef test_hi():\n    assert clamp(50, 0, 9) == 9\n"
    b = _calc(tmp_path, at="src/calc/tests/test_ops.py", pyproject=pyproject)
    b.remove("src/calc/tests/test_ops.py")
    b.commit(
        "Move the tests out of the package; show()",
        {
            "tests/test_ops.py": fix_repo.TEST_BASE + main_only,
            "src/calc/fmt.py": "def show(x):\n    return str(x)\n",
        },
    )
    fix = b.commit(
        "Clamp to hi (#9)",
        {
            "src/calc/ops.py": fix_repo.OPS_C1,
            "tests/test_ops.py": fix_repo.TEST_BASE + main_only + hi,
        },
    )
    _backport(
        b,
        fix,
        {"src/calc/ops.py": fix_repo.OPS_C1, "src/calc/tests/test_ops.py": fix_repo.TEST_BASE + hi},
    )
    code, section, err = _run_tests(run_cli, b)
    assert code == 0, err
    assert [f["path"] for f in section["data"]["files"]] == ["src/calc/tests/test_ops.py"]
    assert _verdicts(section) == {
        "src/calc/tests/test_ops.py::test_hi": "proves-fix",
        "src/calc/tests/test_ops.py::test_lo": "passes-both",
    }
    assert any(
        n.startswith(
            "the source's tests/test_ops.py not run: the pick carries its change as "
            "src/calc/tests/test_ops.py"
        )
        for n in section["not_verified"]
    )


def test_hunks_are_not_called_unneeded_where_no_test_passes_at_head(run_cli, tmp_path):
    """ipython 8.x with today's pytest: its test file loads nowhere, so no test passes at HEAD. A
    hunk reverted then fails no test, which says nothing: before, each hunk was "no test of the
    pick needs it — reverting it alone leaves every test passing"."""
    need_index()
    broken = "import harness_no_such_module_xyz  # noqa: F401\n" + fix_repo.TEST_BASE
    b = _calc(tmp_path, broken)
    fix = b.commit(
        "Clamp to hi (#9)",
        {
            "src/calc/ops.py": fix_repo.OPS_C1,
            "tests/test_ops.py": broken + "\n\ndef test_hi():\n    assert clamp(50, 0, 9) == 9\n",
        },
    )
    _backport(b, fix)
    code, section, err = _run_tests(run_cli, b)
    assert set(_verdicts(section).values()) == {"env-error"}, err
    assert section["data"]["hunks"]  # the hunk was reverted and run
    assert not [f for f in section["findings"] if f["kind"] == "hunk-not-needed"]
    assert "hunks: not measured (no test passes at head)" in section["summary"]


def test_a_source_test_the_picks_change_does_not_touch_failing_at_head_is_p2(run_cli, tmp_path):
    """tornado 6.4.2: master's httputil_test.py, beside 6.4, holds tests of master's header
    validation (landed between the cookie fix's parent and the fix): they fail at HEAD, though
    the pick carries the fix's own change identically and its test proves it. Such a failure is
    P2 (the gate's default passes it), not P1; the test the fix touched still decides."""
    need_index()
    code, section = _partial_or_other(run_cli, tmp_path, partial=False)
    verdicts = _verdicts(section)
    assert verdicts["tests/test_ops.py::test_hi"] == "proves-fix"
    assert verdicts["tests/test_ops.py::test_fmt"] == "source-test-fails-head"
    said = next(f for f in section["findings"] if "test_fmt" in f["title"])
    assert said["severity"] == "P2" and "does not touch this test" in said["detail"]
    assert code == 0  # P2 does not block the default gate


def test_a_source_test_of_what_a_partial_pick_lacks_stays_p1(run_cli, tmp_path):
    """The same shape, but the pick carries only part of the fix's test change (and of its code):
    the source's test it left out fails at HEAD, and the file is not the source's change: P1."""
    need_index()
    code, section = _partial_or_other(run_cli, tmp_path, partial=True)
    assert _verdicts(section)["tests/test_ops.py::test_order"] == "source-test-fails-head"
    said = next(f for f in section["findings"] if "test_order" in f["title"])
    assert said["severity"] == "P1" and "does not touch" not in said["detail"]
    assert code == 1


def _partial_or_other(run_cli, tmp_path: Path, *, partial: bool) -> tuple[int, dict]:
    """main: show() with its test (#8), then the fix (#9: clamp to hi and refuse lo > hi, with
    tests); the release picks #9 whole (its file as #9 changed it), or only its first half."""
    main_only = "\n\ndef test_fmt():\n    from calc.fmt import show\n\n    assert show(1) == '1'\n"
    b = _calc(tmp_path)
    b.commit(
        "show() (#8)",
        {
            "src/calc/fmt.py": "def show(x):\n    return str(x)\n",
            "tests/test_ops.py": fix_repo.TEST_BASE + main_only,
        },
    )
    whole = fix_repo.TEST_C2.replace(fix_repo.TEST_BASE, fix_repo.TEST_BASE + main_only)
    fix = b.commit(
        "Clamp to hi, refuse lo > hi (#9)",
        {"src/calc/ops.py": fix_repo.OPS_C2, "tests/test_ops.py": whole},
    )
    picked = (
        {"src/calc/ops.py": fix_repo.OPS_C1, "tests/test_ops.py": fix_repo.TEST_C1}
        if partial
        else {"src/calc/ops.py": fix_repo.OPS_C2, "tests/test_ops.py": fix_repo.TEST_C2}
    )
    _backport(b, fix, picked)
    code, section, err = _run_tests(run_cli, b)
    assert code in (0, 1), err
    return code, section


def test_a_skip_then_a_teardown_error_is_an_error_without_a_skip_reason(run_cli, tmp_path):
    """pytest reports the call skipped and the teardown failed: the outcome is error (as plain
    pytest's -rA says ERROR), and the row keeps no skip reason."""
    need_index()
    test = (
        "import pytest\n\n" + fix_repo.TEST_BASE + "\n\n@pytest.fixture\ndef broken():\n"
        "    yield\n    raise RuntimeError('teardown')\n\n\n"
        "def test_hi(broken):\n    pytest.skip('not here')\n"
    )
    b = _calc(tmp_path)
    fix = b.commit(
        "Clamp to hi (#9)", {"src/calc/ops.py": fix_repo.OPS_C1, "tests/test_ops.py": test}
    )
    _backport(b, fix)
    _, section, err = _run_tests(run_cli, b)
    rows = {t["nodeid"]: t for t in section["data"]["tests"]}
    hi = rows["tests/test_ops.py::test_hi"]
    assert hi["outcomes"]["head"] == "error" and "skip_reason" not in hi, err


def test_a_source_test_file_that_imports_what_the_fix_adds_stays_p1(run_cli, tmp_path):
    """The source's test file imports a name the fix adds to calc.ops and the pick leaves out:
    that it does not load at HEAD is the gap itself, not another commit's test. Each of its tests
    stays a P1 source-test-fails-head; no "does not load" info in its place."""
    need_index()
    refuse = "\n\ndef refuse(lo, hi):\n    return lo > hi\n"
    source_test = (
        "from calc.ops import clamp, refuse\n"
        + fix_repo.TEST_C1.split("\n", 1)[1]
        + "\n\ndef test_refuse():\n    assert refuse(9, 0)\n"
    )
    b = _calc(tmp_path)
    fix = b.commit(
        "Clamp to hi, refuse lo > hi (#9)",
        {"src/calc/ops.py": fix_repo.OPS_C1 + refuse, "tests/test_ops.py": source_test},
    )
    _backport(b, fix, {"src/calc/ops.py": fix_repo.OPS_C1, "tests/test_ops.py": fix_repo.TEST_C1})
    code, section, err = _run_tests(run_cli, b)
    assert code == 1, err
    assert _verdicts(section)["tests/test_ops.py::test_refuse"] == "source-test-fails-head"
    assert not [f for f in section["findings"] if f["kind"] == "source-tests-not-loading"]
    refused = next(f for f in section["findings"] if "test_refuse" in f["title"])
    assert refused["severity"] == "P1"


def test_a_moved_test_file_the_pick_carries_only_part_of_still_runs(run_cli, tmp_path):
    """As ipython 8.x's, but the pick adds only one of the two tests the fix adds to the moved
    file: not the same change, so the source's file is not taken as carried. It runs beside
    HEAD, and the test the pick left out fails there (P1)."""
    need_index()
    pyproject = fix_repo.PYPROJECT.replace(
        '\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n', ""
    )
    b = _calc(tmp_path, at="src/calc/tests/test_ops.py", pyproject=pyproject)
    b.remove("src/calc/tests/test_ops.py")
    b.commit("Move the tests out of the package", {"tests/test_ops.py": fix_repo.TEST_BASE})
    fix = b.commit(
        "Clamp to hi, refuse lo > hi (#9)",
        {"src/calc/ops.py": fix_repo.OPS_C2, "tests/test_ops.py": fix_repo.TEST_C2},
    )
    _backport(
        b, fix, {"src/calc/ops.py": fix_repo.OPS_C1, "src/calc/tests/test_ops.py": fix_repo.TEST_C1}
    )
    code, section, err = _run_tests(run_cli, b)
    assert "tests/test_ops.py" in [f["path"] for f in section["data"]["files"]], err
    assert _verdicts(section)["tests/test_ops.py::test_order"] == "source-test-fails-head"
    assert code == 1
    assert not [n for n in section["not_verified"] if "the pick carries its change" in n]


def test_a_pbr_project_gets_its_requirements_and_its_version(run_cli, tmp_path):
    """python-openstackclient on stable/2025.1: pbr builds it, so its dependencies are
    requirements.txt (pyproject.toml holds only tool settings) and its version comes from git
    (``pbr.version`` at import). Before, only test-requirements.txt was installed and the tree had no
    git metadata: every test an env-error. Now requirements.txt is installed and PBR_VERSION
    is set, as pbr's own scheme has it (the next patch release's ``.devN``, no local part)."""
    need_index()
    tests = (
        "import os\n\nimport iniconfig  # (only requirements.txt names it)\n\n"
        + fix_repo.TEST_BASE
        + '\n\ndef test_version():\n    assert os.environ["PBR_VERSION"] == "1.4.1.dev1"\n'
        + "    assert iniconfig.IniConfig\n"
    )
    b = _calc(
        tmp_path,
        tests,
        pyproject="[tool.ruff]\nline-length = 79\n",
        extra={
            "setup.cfg": "[metadata]\nname = calc\n\n[files]\npackages = calc\n",
            "setup.py": "import setuptools\n\nsetuptools.setup(setup_requires=['pbr'], pbr=True)\n",
            "requirements.txt": "iniconfig>=1 # MIT\n",
        },
    )
    b.repo.git.tag("1.4.0")
    _backport(b, _fix(b, tests))
    code, section, err = _run_tests(run_cli, b)
    assert code == 0, err
    assert _verdicts(section) == {
        "tests/test_ops.py::test_hi": "proves-fix",
        "tests/test_ops.py::test_lo": "passes-both",
        "tests/test_ops.py::test_version": "passes-both",
    }
    env = section["data"]["environment"]
    assert "requirements.txt (pbr: the project's dependencies)" in env, env


def test_the_source_columns_run_in_the_environment_the_sources_packaging_asks_for(
    run_cli, tmp_path
):
    """urllib3 1.26.x's pick of #3435: main's conftest imports hypercorn, which main's dev
    requirements name and 1.26.x's do not. In HEAD's environment the source's columns could not
    load a test ("not evidence"); they now run in an environment of the source's own packaging,
    and the report says which."""
    need_index()
    b = _calc(tmp_path)
    b.commit(
        "Tests use six (#8)",
        {
            "pyproject.toml": fix_repo.PYPROJECT.replace('["pytest"]', '["pytest", "six"]'),
            "tests/conftest.py": "import six  # noqa: F401 (main's test helpers need it)\n",
        },
    )
    _backport(b, _fix(b))
    code, section, err = _run_tests(run_cli, b)
    assert code == 0, err
    hi = next(t for t in section["data"]["tests"] if t["nodeid"] == "tests/test_ops.py::test_hi")
    assert hi["verdict"] == "proves-fix"
    assert hi["outcomes"] == {
        "without_fix": "failed",
        "head": "passed",
        "source_parent": "failed",
        "source": "passed",
    }
    said = [n for n in section["not_verified"] if n.startswith("environment of the source columns")]
    assert len(said) == 1 and "from the source's pyproject.toml" in said[0], said
    assert "1 requirement(s)" in section["data"]["environment"]  # HEAD's: pytest alone


def test_a_source_whose_packaging_names_nothing_runs_in_heads_environment(run_cli, tmp_path):
    """A source with no packaging file the spec reads would get an environment of pytest alone:
    HEAD's serves its columns better, and no second environment is built."""
    need_index()
    b = _calc(tmp_path, pyproject=fix_repo.PYPROJECT.replace('["pytest"]', '["pytest", "six"]'))
    b.repo.git.rm("-q", "pyproject.toml")
    b.commit("Packaging moves elsewhere (#8)")
    _backport(b, _fix(b))
    code, section, err = _run_tests(run_cli, b)
    assert code == 0, err
    assert not [n for n in section["not_verified"] if "environment of the source columns" in n]
    hi = next(t for t in section["data"]["tests"] if t["nodeid"] == "tests/test_ops.py::test_hi")
    assert hi["outcomes"]["source"] == "passed" and hi["verdict"] == "proves-fix"


_PACKAGING_BY = {
    "packaging": fix_repo.PYPROJECT.replace('["pytest"]', '["pytest", "six"]'),
    "bump": fix_repo.PYPROJECT.replace('["pytest"]', '["pytest>=7"]'),
}


@pytest.mark.parametrize("by", ["other", "fix", "packaging", "bump"])
def test_a_source_test_asking_for_a_fixture_head_lacks(run_cli, tmp_path, by):
    """poetry 1.8's pick of #9888: main's test_info.py asks for ``set_project_context``, a fixture
    of main's conftest that 1.8 lacks: every source test errored at HEAD, 24 P1. A fixture the
    sources did not add is the file not running beside HEAD (one info finding, tests judged by the
    pick's version); one the fix adds (here in a plugin module, which does not travel with the
    tests) and the pick lacks stays the gap it is, and so does any where the fix changes what is
    installed (a plugin it adds brings fixtures no line of it defines); a version bump adds none
    (poetry's #9888 raised pkginfo's lower bound)."""
    added_by_the_fix = by == "fix"
    need_index()
    plugin = "import pytest\n"
    fixture = plugin + "\n\n@pytest.fixture\ndef big():\n    return 10**6\n"
    big = "\n\ndef test_big(big):\n    assert clamp(big, 0, 9) == 9\n"
    hi = "\n\ndef test_hi():\n    assert clamp(50, 0, 9) == 9\n"
    b = _calc(
        tmp_path,
        extra={
            "tests/conftest.py": 'pytest_plugins = ["calc.testing"]\n',
            "src/calc/testing.py": plugin,
        },
    )
    if not added_by_the_fix:
        b.commit("A fixture for large values (#8)", {"src/calc/testing.py": fixture})
    extra = {"src/calc/testing.py": fixture} if added_by_the_fix else {}
    extra.update({"pyproject.toml": _PACKAGING_BY[by]} if by in _PACKAGING_BY else {})
    fix = _fix(b, fix_repo.TEST_BASE + big, extra)
    pick = {"src/calc/ops.py": fix_repo.OPS_C1, "tests/test_ops.py": fix_repo.TEST_BASE + hi}
    _backport(b, fix, pick)
    code, section, err = _run_tests(run_cli, b)
    verdicts = _verdicts(section)
    assert verdicts["tests/test_ops.py::test_hi"] == "proves-fix"
    said = [f for f in section["findings"] if f["kind"] == "source-tests-not-loading"]
    if by in ("fix", "packaging"):  # the pick lacks what its source's test needs: the gap
        assert verdicts["tests/test_ops.py::test_big"] == "source-test-fails-head"
        assert not said and code == 1, err
        return
    assert code == 0, err
    assert verdicts["tests/test_ops.py::test_big"] == "not-run"
    (one,) = said
    assert "does not run at HEAD" in one["title"]
    assert one["detail"].startswith("at HEAD: fixture 'big' not found; 1 test(s) only the source's")
    noisy = ("tests-not-run", "source-test-fails-head")
    assert not [f for f in section["findings"] if f["kind"] in noisy]


def test_the_names_a_sources_added_lines_define():
    from harness.checks.fix_tests.verdicts import defined_names

    added = [
        [b"@pytest.fixture", b"def plain(tmp_path):", b"    return 1"],
        [b"@pytest.fixture(", b'    name="wrapped",', b"    scope=dict(a=1)['a'],", b")"],
        [b"    async def later ( x ):", b"undefined_call(name='not_a_fixture')"],
    ]
    assert defined_names(added) == {"plain", "wrapped", "later"}
