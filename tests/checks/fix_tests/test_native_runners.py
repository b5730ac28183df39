"""The tests section's native runners on real toolchains: ``cargo test`` on a crate and ``go test
-json`` on a module, each with a fix picked onto a release branch (skipped, with the reason, where
the toolchain is not installed)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.testing.repos import RepoBuilder

CARGO = '[package]\nname = "clampy"\nversion = "0.1.0"\nedition = "2021"\n'
RS_BUG = "pub fn clamp(x: i64, lo: i64, hi: i64) -> i64 {\n    let _ = hi;\n    x.max(lo)\n}\n"
RS_FIX = "pub fn clamp(x: i64, lo: i64, hi: i64) -> i64 {\n    x.max(lo).min(hi)\n}\n"
RS_LO = "use clampy::clamp;\n\n#[test]\nfn lo() {\n    assert_eq!(clamp(-5, 0, 9), 0);\n}\n"
RS_HI = RS_LO + "\n#[test]\nfn hi() {\n    assert_eq!(clamp(50, 0, 9), 9);\n}\n"

GO_MOD = "module example.com/clampy\n\ngo 1.18\n"
GO_BUG = "package clampy\n\nfunc Clamp(x, lo, hi int) int {\n\tif x < lo {\n\t\treturn lo\n\t}\n\treturn x\n}\n"
GO_FIX = GO_BUG.replace("\treturn x\n}", "\tif x > hi {\n\t\treturn hi\n\t}\n\treturn x\n}")
GO_LO = (
    'package clampy\n\nimport "testing"\n\n'
    "func TestLo(t *testing.T) {\n\tif Clamp(-5, 0, 9) != 0 {\n\t\tt.Fatal()\n\t}\n}\n"
)
GO_HI = (
    GO_LO + "\nfunc TestHi(t *testing.T) {\n\tif Clamp(50, 0, 9) != 9 {\n\t\tt.Fatal()\n\t}\n}\n"
)


def _backport(path: Path, base: dict[str, str], fix: dict[str, str]) -> None:
    b = RepoBuilder(path)
    b.commit("init", dict(base))
    b.branch("release")
    main = b.commit("Fix clamp (#3)", dict(fix))
    b.checkout("release")
    b.branch("backport")
    b.checkout("backport")
    b.commit(f"[release] Fix clamp (#3)\n\n(cherry picked from commit {main})", dict(fix))


def _verdicts(run_cli, repo: Path) -> dict[str, str]:
    code, out, err = run_cli(
        "tests", "release..backport", "--source", "main", "--repo", str(repo), "--format", "json"
    )
    assert code == 0, err
    return {t["nodeid"]: t["verdict"] for t in json.loads(out)["sections"][0]["data"]["tests"]}


def test_cargo_test_proves_the_fix(run_cli, tmp_path):
    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed here")
    repo = tmp_path / "crate"
    _backport(
        repo,
        {"Cargo.toml": CARGO, "src/lib.rs": RS_BUG, "tests/it.rs": RS_LO},
        {"src/lib.rs": RS_FIX, "tests/it.rs": RS_HI},
    )
    assert _verdicts(run_cli, repo) == {
        "tests/it.rs::hi": "proves-fix",
        "tests/it.rs::lo": "passes-both",
    }


def test_go_test_json_proves_the_fix(run_cli, tmp_path):
    if shutil.which("go") is None:
        pytest.skip("go is not installed here")
    repo = tmp_path / "module"
    _backport(
        repo,
        {"go.mod": GO_MOD, "clamp.go": GO_BUG, "clamp_test.go": GO_LO},
        {"clamp.go": GO_FIX, "clamp_test.go": GO_HI},
    )
    assert _verdicts(run_cli, repo) == {
        "clamp_test.go::TestHi": "proves-fix",
        "clamp_test.go::TestLo": "passes-both",
    }


def _skipped(run_cli, repo: Path) -> tuple[dict[str, dict], list[dict]]:
    """One ``harness tests`` run: its rows by node id and its changed-test-skipped findings."""
    code, out, err = run_cli(
        "tests", "release..backport", "--source", "main", "--repo", str(repo), "--format", "json"
    )
    assert code == 0, err
    section = json.loads(out)["sections"][0]
    rows = {t["nodeid"]: t for t in section["data"]["tests"]}
    said = [f for f in section["findings"] if f["kind"] == "changed-test-skipped"]
    return rows, said


def test_cargo_an_ignored_test_of_the_fix_is_said_with_its_reason(run_cli, tmp_path):
    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed here")
    repo = tmp_path / "crate"
    ignored = RS_HI.replace("#[test]\nfn hi", '#[test]\n#[ignore = "only on Windows"]\nfn hi')
    ignored += '\n#[test]\n#[should_panic]\nfn boom() {\n    panic!("boom");\n}\n'
    _backport(
        repo,
        {"Cargo.toml": CARGO, "src/lib.rs": RS_BUG, "tests/it.rs": RS_LO},
        {"src/lib.rs": RS_FIX, "tests/it.rs": ignored},
    )
    rows, said = _skipped(run_cli, repo)
    row = rows["tests/it.rs::hi"]
    assert row["verdict"] == "skipped" and row["skip_reason"] == "only on Windows"
    assert len(said) == 1 and "only on Windows" in said[0]["detail"]
    # libtest writes a should_panic test as "test boom - should panic ... ok": read too
    assert rows["tests/it.rs::boom"]["outcomes"]["head"] == "passed"


def test_go_a_skipped_test_of_the_fix_is_said_with_its_reason(run_cli, tmp_path):
    if shutil.which("go") is None:
        pytest.skip("go is not installed here")
    repo = tmp_path / "module"
    skipped = GO_HI.replace(
        "func TestHi(t *testing.T) {\n",
        'func TestHi(t *testing.T) {\n\tt.Log("connecting to " + t.TempDir())\n'
        '\tt.Skip("only on Windows")\n',
    )
    skipped += "\nfunc TestBare(t *testing.T) {\n\tt.Skip()\n}\n"
    _backport(
        repo,
        {"go.mod": GO_MOD, "clamp.go": GO_BUG, "clamp_test.go": GO_LO},
        {"clamp.go": GO_FIX, "clamp_test.go": skipped},
    )
    rows, said = _skipped(run_cli, repo)
    row = rows["clamp_test.go::TestHi"]
    # the skip's own words, not the log line before it (which names a folder of this run)
    assert row["verdict"] == "skipped" and row["skip_reason"] == "only on Windows"
    assert [f for f in said if "TestHi" in f["title"]][0]["detail"].endswith("only on Windows")
    bare = rows["clamp_test.go::TestBare"]
    assert bare["verdict"] == "skipped" and bare["skip_reason"] == "skipped"


def test_go_output_lines_that_are_json_but_no_event_are_left_alone():
    """A test may print a line that parses as JSON without being one of go's events (a list, a
    string): before, reading it raised AttributeError and ended the harness's run."""
    from harness.checks.fix_tests.runners.base import Cell
    from harness.checks.fix_tests.runners.go_runner import _read

    events = [
        "[1, 2]",
        '"not an event"',
        json.dumps({"Action": "output", "Test": "TestA", "Output": "    a_test.go:3: why\n"}),
        json.dumps({"Action": "skip", "Test": "TestA"}),
    ]
    cell = Cell()
    assert _read("\n".join(events) + "\n", {"TestA": "a_test.go"}, cell) == ""
    assert (
        cell.outcomes == {"a_test.go::TestA": "skipped"} and cell.skips["a_test.go::TestA"] == "why"
    )
