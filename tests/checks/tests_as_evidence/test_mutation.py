"""`harness mutate`: mutation rows, liveness and gap pinning on real pytest suites in built repos."""

from __future__ import annotations

import json

import pytest

from harness.checks.tests_as_evidence.mutation import (
    Mutation,
    gap_mutations,
    mutation_section,
    run_mutations,
)
from harness.columns.edits import Edit
from harness.git.repo import GitRepo
from harness.testing.repos import git_blob_sha

CALC = """\
def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


def add(a, b):
    return a + b


def double(x):
    return x * 2
"""

TESTS = """\
from pkg.calc import add, clamp


def test_clamp_low():
    assert clamp(-5, 0, 10) == 0


def test_clamp_mid():
    assert clamp(5, 0, 10) == 5


def test_add():
    assert add(2, 3) == 5
"""


@pytest.fixture
def suite(builder, tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_WORK_DIR", str(tmp_path / "work"))
    builder.commit(
        "calc",
        {
            "pkg/__init__.py": "",
            "pkg/calc.py": CALC,
            "tests/test_calc.py": TESTS,
            "pytest.ini": "[pytest]\naddopts = -x --strict-markers\n",
        },
    )
    return builder


def _kill_and_survive() -> list[Mutation]:
    return [
        Mutation(
            "flip-low",
            [Edit(kind="replace", path="pkg/calc.py", old="if x < lo:", new="if x > lo:")],
            expect="killed",
        ),
        Mutation(
            "upper-bound",
            [Edit(kind="replace", path="pkg/calc.py", old="if x > hi:", new="if x >= hi:")],
        ),
    ]


def test_kill_survive_and_sha_proofs(suite):
    repo = GitRepo(suite.path)
    before = suite.snapshot()
    run = run_mutations(repo, "HEAD", _kill_and_survive(), ["tests/test_calc.py"])
    assert [r.name for r in run.rows] == ["none", "flip-low", "upper-bound"]
    base, flip, upper = run.rows
    assert base.outcome.count("passed") == 3 and not base.outcome.failing
    assert flip.outcome.failing == {
        "tests/test_calc.py::test_clamp_low",
        "tests/test_calc.py::test_clamp_mid",
    }
    assert upper.outcome.count("passed") == 3 and not upper.outcome.failing
    proof = flip.proofs[0]
    original = (suite.path / "pkg/calc.py").read_bytes()
    assert proof.blob_before == git_blob_sha(repo, original)
    assert proof.blob_after == git_blob_sha(repo, original.replace(b"if x < lo:", b"if x > lo:"))
    assert proof.blob_user_after == proof.blob_before  # the user's copy afterwards: nothing leaked
    assert flip.outcome.module_proofs["pkg/calc.py"]["status"] == "in tree"

    section = mutation_section(run)
    verdicts = {row[0]: row[2] for row in section.tables[0].rows}
    assert verdicts == {"none": "baseline", "flip-low": "killed", "upper-bound": "survived"}
    assert section.data["evidence"] is True
    assert not [f for f in section.findings if f.severity == "P1"]
    assert suite.snapshot() == before


def test_liveness_failure_marks_table_not_evidence(suite, run_cli, tmp_path):
    mutations = tmp_path / "m.yaml"
    mutations.write_text(
        "mutations:\n"
        "  - name: double-untested\n"
        "    expect: killed\n"
        "    replace: 'return x * 2'\n"
        "    with: 'return x * 3'\n"
        "    path: pkg/calc.py\n"
    )
    out = tmp_path / "r.json"
    before = suite.snapshot()
    code, _, err = run_cli(
        "mutate",
        "--repo",
        str(suite.path),
        "--tests",
        "tests/test_calc.py",
        "--mutation",
        str(mutations),
        "--format",
        "json",
        "--output",
        str(out),
    )
    assert code == 1, err  # a P1 finding blocks
    section = json.loads(out.read_text())["sections"][0]
    assert section["data"]["evidence"] is False
    assert "NOT EVIDENCE" in section["tables"][0]["control"]
    kinds = {f["kind"]: f for f in section["findings"]}
    assert kinds["liveness-failed"]["severity"] == "P1"
    assert "cannot fail" in kinds["liveness-failed"]["title"]
    assert suite.snapshot() == before


def test_gap_pinned_and_not_pinned(suite):
    suite.branch("upstream")
    suite.checkout("upstream")
    pinned = suite.commit(
        "add: off by one", {"pkg/calc.py": CALC.replace("return a + b", "return a + b + 1")}
    )
    # Its child rewrites a line that exists only upstream: on main it does not apply.
    other = suite.commit(
        "double only", {"pkg/calc.py": CALC.replace("return x * 2", "return x * 4")}
    )
    suite.checkout("main")
    # A commit main has and HEAD~1 lacks: it touches only code no test runs.
    unpinned = suite.commit(
        "double: triple", {"pkg/calc.py": CALC.replace("return x * 2", "return x * 3")}
    )
    repo = GitRepo(suite.path)
    before = suite.snapshot()
    run = run_mutations(repo, "HEAD~1", gap_mutations(repo, [pinned, unpinned]), ["tests"])
    section = mutation_section(run)
    verdicts = {row[0].split()[1]: row[2] for row in section.tables[0].rows[1:]}
    assert verdicts == {pinned[:10]: "pinned", unpinned[:10]: "NOT PINNED"}
    not_pinned = [f for f in section.findings if f.kind == "gap-not-pinned"]
    assert len(not_pinned) == 1
    assert "no test in this selection pins this gap" in not_pinned[0].title
    assert "3 passed, 0 failed" in not_pinned[0].detail
    assert suite.snapshot() == before
    # A commit that does not apply becomes a row with its problem, not a crash.
    run2 = run_mutations(repo, "HEAD", gap_mutations(repo, [other]), ["tests"])
    assert run2.rows[1].outcome.problem.startswith("does not apply")


def test_bad_input_is_usage_error(suite, run_cli, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("- name: x\n  expect: maybe\n  replace: a\n  with: b\n  path: pkg/calc.py\n")
    out = tmp_path / "never.md"
    cases = [
        (["--tests", "tests"], "no mutations"),
        (["--mutation", str(bad)], "expect"),
        (["--replace", "pkg/calc.py", "nope", "x"], "exactly once"),
        (["--gap", "no-such-ref"], "unknown ref"),
    ]
    for extra, said in cases:
        code, stdout, err = run_cli(
            "mutate", "--repo", str(suite.path), *extra, "--output", str(out)
        )
        assert code == 2 and said in err, (extra, err)
        assert err.count("\n") == 1 and stdout == "" and not out.exists(), extra
