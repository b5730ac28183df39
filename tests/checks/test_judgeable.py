"""Histories that cannot be judged are never passed: shallow cut-offs, missing source branches and empty
ranges exit 2 with one line naming the fix; a BASE off HEAD's history is stated once in the header."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness.testing.repos import bare_snapshot


def _history(builder):
    for i in range(3):  # release has history a depth-2 clone cuts off
        builder.commit(f"base {i}", {"a.py": "x = 1\n", "base.txt": f"{i}\n"})
    builder.branch("release")
    for i in range(3):
        builder.commit(f"main {i}", {"a.py": f"x = {i + 2}\n", f"m{i}.py": "y = 1\n"})
    fix = builder.commit("fix on main", {"b.py": "fix()\n"})
    builder.checkout("release")
    builder.branch("backport")
    builder.checkout("backport")
    builder.cherry_pick(fix, "-x")
    builder.checkout("main")
    return fix


def _shallow(builder, tmp_path: Path) -> Path:
    dest = tmp_path / "shallow"
    subprocess.run(
        [
            "git",
            "clone",
            "-q",
            "--no-local",
            "--depth",
            "2",
            "--no-single-branch",
            f"file://{builder.path}",
            str(dest),
        ],
        check=True,
    )
    return dest


VERBS = [
    ("shape", ["origin/release..origin/backport"]),
    ("fidelity", ["origin/release..origin/backport", "--source", "origin/main"]),
    ("sweep", ["origin/release..origin/backport"]),
    ("trace", ["fix()", "--refs", "origin/backport", "--range", "origin/release..origin/backport"]),
]


@pytest.mark.parametrize("verb,args", VERBS)
def test_shallow_repository_is_refused_with_the_fix(builder, run_cli, tmp_path, verb, args):
    _history(builder)
    shallow = _shallow(builder, tmp_path)
    before = bare_snapshot(shallow / ".git")
    out = tmp_path / "r.json"
    code, stdout, err = run_cli(verb, "--repo", str(shallow), *args, "--output", str(out))
    assert code == 2 and stdout == "" and len(err.strip().splitlines()) == 1, err
    assert (
        "shallow repository" in err and "git fetch --unshallow" in err and "fetch-depth: 0" in err
    )
    assert not out.exists() and bare_snapshot(shallow / ".git") == before


def test_a_ref_missing_from_a_shallow_clone_names_the_fix(builder, run_cli, tmp_path):
    _history(builder)
    single = tmp_path / "single"
    subprocess.run(
        ["git", "clone", "-q", "--no-local", "--depth", "1", f"file://{builder.path}", str(single)],
        check=True,
    )  # what actions/checkout does by default: one branch, one commit
    code, _, err = run_cli("shape", "--repo", str(single), "origin/release..HEAD")
    assert (
        code == 2
        and "unknown ref 'origin/release'" in err
        and "fetch-depth: 0" in err
        and err.count("\n") == 1
    )
    code, _, err = run_cli("shape", "--repo", str(builder.path), "nope..main")
    assert code == 2 and "shallow" not in err  # the control: a full repository gets no shallow hint


def test_shallow_compare_is_refused_before_any_section(builder, run_cli, tmp_path):
    _history(builder)
    shallow = _shallow(builder, tmp_path)
    out = tmp_path / "rep"
    code, _, err = run_cli(
        "compare",
        "origin/release",
        "origin/backport",
        "--repo",
        str(shallow),
        "--source",
        "origin/main",
        "--output",
        str(out),
        "--format",
        "none",
    )
    assert (
        code == 2 and "git fetch --unshallow" in err and err.count("\n") == 1 and not out.exists()
    )


def test_full_history_of_the_same_refs_is_judged(builder, run_cli, tmp_path):
    """The controls: the same range in a full clone passes, and so does a shallow clone whose cut-off lies
    outside what the range reaches (the refusal is about a cut history, not the word 'shallow')."""
    _history(builder)
    full = tmp_path / "full"
    subprocess.run(
        ["git", "clone", "-q", "--no-local", f"file://{builder.path}", str(full)], check=True
    )
    code, out, err = run_cli(
        "shape", "--repo", str(full), "origin/release..origin/backport", "--format", "json"
    )
    assert code == 0 and len(json.loads(out)["sections"][0]["data"]["rows"]) == 1, err
    deep = tmp_path / "deep"
    subprocess.run(
        [
            "git",
            "clone",
            "-q",
            "--no-local",
            "--depth",
            "4",
            "--no-single-branch",
            f"file://{builder.path}",
            str(deep),
        ],
        check=True,
    )  # main is cut, release/backport are whole
    assert (deep / ".git" / "shallow").exists()
    code, out, err = run_cli(
        "shape", "--repo", str(deep), "origin/release..origin/backport", "--format", "json"
    )
    assert code == 0, err
    code, _, err = run_cli(
        "fidelity",
        "--repo",
        str(deep),
        "origin/release..origin/backport",
        "--source",
        "origin/main",
    )
    assert code == 2 and "shallow repository" in err


def test_missing_source_branch_names_it_and_the_fix(builder, run_cli, tmp_path):
    _history(builder)
    out = tmp_path / "r.json"
    code, stdout, err = run_cli(
        "fidelity",
        "--repo",
        str(builder.path),
        "release..backport",
        "--source",
        "origin/main",
        "--output",
        str(out),
    )
    assert code == 2 and stdout == "" and err.count("\n") == 1
    assert "--source 'origin/main'" in err and "fetch-depth: 0" in err and not out.exists()
    code, _, err = run_cli(
        "compare",
        "release",
        "backport",
        "--repo",
        str(builder.path),
        "--source",
        "main",
        "--source-branch",
        "pr/42",
        "--output",
        str(tmp_path / "rep"),
        "--format",
        "none",
    )
    assert code == 2 and "--source-branch 'pr/42'" in err and "git fetch origin pr/42" in err
    assert not (tmp_path / "rep").exists()


@pytest.mark.parametrize(
    "verb,spec",
    [
        ("shape", "backport..release"),
        ("fidelity", "main..main"),
        ("sweep", "backport..release"),
        ("trace", "backport..release"),
    ],
)
def test_empty_range_is_exit_2_never_pass(builder, run_cli, tmp_path, verb, spec):
    _history(builder)
    args = {
        "fidelity": [spec, "--source", "main"],
        "trace": ["fix()", "--refs", "main", "--range", spec],
    }
    out = tmp_path / "r.md"
    code, stdout, err = run_cli(
        verb,
        "--repo",
        str(builder.path),
        *args.get(verb, [spec]),
        "--output",
        str(out),
        "--fail-on",
        "never",
    )
    assert code == 2 and stdout == "" and f"no commits in {spec}" in err and err.count("\n") == 1
    assert not out.exists()


def test_empty_compare_and_merge_only_picks(builder, run_cli, tmp_path):
    _history(builder)
    code, _, err = run_cli(
        "compare",
        "--no-fidelity",
        "main",
        "release",
        "--repo",
        str(builder.path),
        "--output",
        str(tmp_path / "a"),
        "--format",
        "none",
        "--fail-on",
        "never",
    )
    assert code == 2 and "no commits in main..release" in err and not (tmp_path / "a").exists()
    builder.checkout("release")
    builder.branch("merges")
    builder.checkout("merges")
    builder.repo.git.merge("-q", "--no-ff", "-m", "merge backport", "backport")
    builder.checkout("main")
    # Without --source the merge is a commit to describe; with it, fidelity would judge 0 picks.
    code, _, err = run_cli(
        "shape", "--repo", str(builder.path), "backport..merges", "--format", "json"
    )
    assert code == 0, err
    code, _, err = run_cli(
        "fidelity", "--repo", str(builder.path), "backport..merges", "--source", "main"
    )
    assert code == 2 and "no picks in backport..merges" in err


def test_base_off_heads_history_is_stated_once_in_the_header(builder, run_cli, tmp_path):
    _history(builder)
    builder.checkout("release")
    builder.commit("release moved on", {"r.py": "z = 1\n"})
    builder.checkout("main")
    mb = builder.rev("release~1")
    out = tmp_path / "rep"
    code, _, err = run_cli(
        "compare",
        "release",
        "backport",
        "--repo",
        str(builder.path),
        "--source",
        "main",
        "--output",
        str(out),
        "--format",
        "none",
        "--fail-on",
        "never",
    )
    assert code == 0, err
    doc = json.loads((out / "report.json").read_text())
    assert (
        doc["inputs"]["merge base"].startswith(mb[:12])
        and "is not an ancestor of backport" in doc["inputs"]["merge base"]
    )
    md = (out / "report.md").read_text()
    assert md.count("is not an ancestor") == 1
    code, outj, _ = run_cli(
        "shape", "--repo", str(builder.path), "release..backport", "--format", "json"
    )
    assert "merge base" in json.loads(outj)["inputs"]
    code, outj, _ = run_cli(
        "shape", "--repo", str(builder.path), "release~1..backport", "--format", "json"
    )
    assert (
        "merge base" not in json.loads(outj)["inputs"]
    )  # the control: an ancestor base says nothing


def test_drift_in_a_shallow_clone_names_the_fix(builder, run_cli, tmp_path):
    """drift takes two refs, not a range: where a shallow clone hides their merge base, it says the
    clone is shallow rather than "no common history"."""
    _history(builder)
    shallow = _shallow(builder, tmp_path)
    # (depth 2: main's last two commits and release's tip reach no common commit)
    code, _, err = run_cli("drift", "--repo", str(shallow), "origin/main", "origin/release")
    assert code == 2 and "shallow repository" in err and "fetch-depth: 0" in err, err
