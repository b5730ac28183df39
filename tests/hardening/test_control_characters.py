"""Subjects, bodies, author names and paths of the reviewed repository may hold any character but
NUL. Every git record the harness reads is framed by NULs (harness/git/records.py): a subject with
\\x01 or \\x1f once split a record and crashed fidelity with an internal error (exit 3)."""

from __future__ import annotations

import json

import pytest

from harness.git import GitRepo
from harness.git.evidence import grep_counts
from harness.git.picks import bodies, history, paths_per_commit
from harness.git.records import log_format, records

ODD = "\x01\x1e\x1f"  # the separators the old parsers split on


@pytest.fixture
def odd_repo(builder):
    builder.commit("base", {"f.txt": "base\n"})
    builder.branch("release")
    fix = builder.commit(
        f"Fix {ODD} the thing (#3)\n\nBody {ODD} with\x01separators\n\nFixes: 1234567",
        {f"we{ODD}ird.txt": "x\n", "f.txt": "fixed\n", "two\nlines.txt": "fixed too\n"},
        author=f"Odd {ODD} Name <odd@example.com>",
    )
    builder.checkout("release")
    base = builder.rev("HEAD")
    builder.cherry_pick(fix, "-x")
    return builder, base, fix


def test_the_git_readers_keep_every_field(odd_repo) -> None:
    builder, base, fix = odd_repo
    repo = GitRepo(builder.path)
    (entry,) = history(repo, ["main"], [base], paths=True)
    assert (entry.sha, entry.subject) == (fix, f"Fix {ODD} the thing (#3)")
    names = {f"we{ODD}ird.txt", "f.txt", "two\nlines.txt"}
    assert set(entry.paths or ()) == names
    assert set(paths_per_commit(repo, [fix])[fix]) == names
    assert grep_counts(repo, "fixed", [fix]) == {fix: 2}  # one of the files is named "two\nlines"
    assert bodies(repo, ["main"], [base], grep=["fixes:"])[fix].startswith(f"Body {ODD} with\x01")
    (commit,) = repo.commits([fix], no_walk=True)
    assert (commit.author_name, commit.subject) == (f"Odd {ODD} Name", f"Fix {ODD} the thing (#3)")


def test_records_frame_by_nul_only() -> None:
    # Two commits: an empty subject, then one with a file list (git puts a newline before it).
    text = "\0aaa\0\0\0bbb\0x\x01y\0\nfile\x1f1\0file2\0"
    assert list(records(text, 2)) == [
        (["aaa", ""], []),
        (["bbb", "x\x01y"], ["file\x1f1", "file2"]),
    ]
    assert log_format("%H", "%s") == "--format=%x00%H%x00%s"


@pytest.mark.parametrize(
    ("verb", "expected"),
    [
        ("fidelity", "Fix \\u0001\\u001e\\u001f the thing"),  # the subject, whole and escaped
        ("shape", "Odd \\u0001\\u001e\\u001f Name"),  # the author
        ("trace", "Fix \\u0001\\u001e\\u001f the thing"),  # the commit that added the string
    ],
)
def test_each_verb_reads_such_a_history(odd_repo, run_cli, tmp_path, verb, expected) -> None:
    builder, base, _ = odd_repo
    out = tmp_path / "r.json"
    rng = f"{base}..release"
    args = {
        "fidelity": [rng, "--source", "main"],
        "shape": [rng],
        "trace": ["fixed", "--refs", "release", "--range", rng],
    }[verb]
    code, _, err = run_cli(
        verb, *args, "--repo", str(builder.path), "--format", "json", "--output", str(out),
        "--fail-on", "never",
    )  # fmt: skip
    assert code == 0, err
    text = out.read_text()
    assert expected in text
    json.loads(text)
