"""`harness sweep`: a real mutmut 3 run restricted to the functions a change touches."""

from __future__ import annotations

import importlib.util

import pytest

from harness.checks.tests_as_evidence.sweep import run_sweep, sweep_section
from harness.checks.tests_as_evidence.sweep_results import functions_touched
from harness.git.mutation import changed_lines
from harness.git.repo import GitRepo
from harness.testing.sweep_repo import BASE, HEAD, TESTS


def test_changed_lines_and_functions(builder):
    base = builder.commit("base", {"pkg/__init__.py": "", "pkg/calc.py": BASE})
    head = builder.commit("head", {"pkg/calc.py": HEAD, "tests/test_calc.py": TESTS})
    lines = changed_lines(GitRepo(builder.path), base, head)
    assert lines["pkg/calc.py"] == {4, 5, 15, 16, 17, 18, 19}
    assert set(lines) == {"pkg/calc.py", "tests/test_calc.py"}
    fns = functions_touched("pkg/calc.py", HEAD, lines["pkg/calc.py"])
    assert [(f.qualname, f.mangled, f.lines) for f in fns] == [
        ("clamp", "x_clamp", [4, 5]),
        ("Box.area", "xǁBoxǁarea", [15]),
        ("scale", "x_scale", [18, 19]),
    ]


@pytest.mark.skipif(importlib.util.find_spec("mutmut") is None, reason="mutmut 3 not installed")
def test_sweep_counts_per_changed_function(builder, tmp_path):
    base = builder.commit(
        "base", {"pkg/__init__.py": "", "pkg/calc.py": BASE, "tests/test_calc.py": TESTS}
    )
    builder.commit("head", {"pkg/calc.py": HEAD})
    before = builder.snapshot()
    result = run_sweep(
        GitRepo(builder.path), base, "HEAD", tests=["tests"], max_children=2, timeout=600
    )
    assert result.clean_ok and result.forced_fail_ok, result.output_tail
    assert result.exit_code == 0
    names = ["clamp", "Box.area", "scale"]
    assert [f.qualname for f in result.functions] == names  # untouched is not swept
    assert all(m.function in names for m in result.mutants)
    by_fn = {fn: [m for m in result.mutants if m.function == fn] for fn in names}
    # test_area_runs asserts nothing: every mutant of Box.area survives, on the changed line 15.
    assert by_fn["Box.area"] and all(m.status == "survived" for m in by_fn["Box.area"])
    assert all(m.line == 15 and m.on_changed_line for m in by_fn["Box.area"])
    # clamp's mutants are equivalent (< vs <=): they survive; only line 4 is a changed line.
    assert {(m.line, m.on_changed_line) for m in by_fn["clamp"]} == {(2, False), (4, True)}
    # scale is checked by test_scale: its mutants die.
    assert by_fn["scale"] and all(m.status == "killed" for m in by_fn["scale"])
    section = sweep_section(result)
    assert section.controls[1].ok is True  # forced fail
    assert any(f.kind == "mutant-survives" and "Box.area" in f.title for f in section.findings)
    assert not (builder.path / "mutants").exists()
    assert builder.snapshot() == before


def test_no_changed_function_is_reported_not_run(builder):
    base = builder.commit("base", {"pkg/__init__.py": "", "pkg/calc.py": BASE})
    builder.commit("constant", {"pkg/calc.py": "LIMIT = 3\n" + BASE})
    result = run_sweep(GitRepo(builder.path), base, "HEAD")
    assert result.functions == [] and result.exit_code is None
    assert result.skipped_files == [("pkg/calc.py", "changes outside any function")]
    section = sweep_section(result)
    assert "0 changed function(s)" in section.summary


SHADOW_BASE = """\
def shout(text):
    return text.upper()
"""
SHADOW_HEAD = """\
def shout(text):
    return text.upper() + "!"
"""
SHADOW_TESTS = """\
from click import shout


def test_shout():
    assert shout("hey") == "HEY!"
"""


@pytest.mark.skipif(importlib.util.find_spec("mutmut") is None, reason="mutmut 3 not installed")
def test_src_layout_package_that_mutmut_itself_imports(builder):
    # mutmut imports click before it runs pytest: a project named click in src/ used to be tested
    # as the installed click (clean run failing, no mutant killed)
    assert importlib.util.find_spec("click") is not None  # mutmut depends on it
    base = builder.commit(
        "base",
        {
            "src/click/__init__.py": "from click.core import shout\n",
            "src/click/core.py": SHADOW_BASE,
            "tests/test_shout.py": SHADOW_TESTS,
        },
    )
    builder.commit("head", {"src/click/core.py": SHADOW_HEAD})
    result = run_sweep(
        GitRepo(builder.path), base, "HEAD", tests=["tests"], max_children=1, timeout=600
    )
    assert result.clean_ok and result.forced_fail_ok, result.output_tail
    assert result.module_proofs == {
        "src/click/core.py": {
            "status": "in tree",
            "module": "click.core",
            "file": "mutants/src/click/core.py",
        }
    }
    assert result.mutants and all(m.status == "killed" for m in result.mutants)
    section = sweep_section(result)
    proof = next(c for c in section.controls if c.name == "module path proof")
    assert proof.ok is True and "NOT EVIDENCE" not in section.summary


def test_a_shadowed_module_makes_the_sweep_not_evidence():
    from harness.checks.tests_as_evidence.sweep_results import ChangedFunction, Mutant, SweepResult
    from harness.checks.tests_as_evidence.sweep_shards import ShardResult
    from harness.envs.proof import merge

    fn = ChangedFunction("src/click/core.py", "shout", 1, 2, [2])
    in_tree = {"status": "in tree", "module": "click.core", "file": "mutants/src/click/core.py"}
    shadowed = {
        "status": "shadowed",
        "module": "click.core",
        "file": "/site-packages/click/core.py",
    }
    # any shard that imported the installed copy outweighs the others
    shards = [
        ShardResult(0, "", proofs={fn.path: in_tree}),
        ShardResult(0, "", proofs={fn.path: shadowed}),
    ]
    assert merge(s.proofs for s in shards) == {fn.path: shadowed}
    result = SweepResult("b", "h", "t", [fn], clean_ok=True, forced_fail_ok=True, exit_code=0)
    result.mutants = [Mutant("m1", fn.path, "shout", "survived", 2, "-a\n+b", True)]
    result.module_proofs = {fn.path: shadowed}
    section = sweep_section(result)
    assert "NOT EVIDENCE" in section.summary
    assert [f.kind for f in section.findings if f.severity == "P1"] == ["sweep-shadowed"]
    proof = next(c for c in section.controls if c.name == "module path proof")
    assert proof.ok is False and "/site-packages/click/core.py" in proof.result
    result.module_proofs = {fn.path: in_tree}
    section = sweep_section(result)
    assert "NOT EVIDENCE" not in section.summary
    assert next(c for c in section.controls if c.name == "module path proof").ok is True
