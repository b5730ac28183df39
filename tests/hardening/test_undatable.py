"""Commits git cannot date — no email, no date, a negative or 20-digit timestamp, a bad zone —
written as raw objects (``git hash-object --literally``). Before, ``int('')`` or ``time.gmtime`` of
a 20-digit number stopped fidelity, shape and drift with exit 3 and made ``compare`` write "a
section crashed"; now such a commit is read (dated 1970-01-01) and ``shape`` says it is undated."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness.git import GitRepo

IDENTS = {
    "negative": "A U Thor <a@example.com> -5 +0000",
    "twenty-digits": "A U Thor <a@example.com> 99999999999999999999 +0000",
    "no-email": "A U Thor 1700000000 +0000",
    "no-date": "A U Thor <a@example.com>",
}


def _raw_commit(builder, tree: str, parent: str, author: str, subject: str) -> str:
    text = (
        f"tree {tree}\nparent {parent}\nauthor {author}\n"
        f"committer C O Mitter <c@example.com> 1700000900 +0000\n\n{subject}\n"
    )
    return subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--literally", "--stdin"],
        cwd=builder.path, input=text.encode(), capture_output=True, check=True,
    ).stdout.decode().strip()  # fmt: skip


@pytest.fixture(params=sorted(IDENTS))
def undated(request, builder):
    """main: base, fix. release: base, then a pick of fix whose author line is ``IDENTS[param]``."""
    builder.commit("base", {"f.txt": "base\n"})
    base = builder.rev("HEAD")
    builder.branch("release")
    fix = builder.commit("Fix the thing (#3)", {"f.txt": "fixed\n"})
    tree = builder.rev(f"{fix}^{{tree}}")
    pick = _raw_commit(builder, tree, base, IDENTS[request.param], "Fix the thing (#3)")
    builder.repo.git.update_ref("refs/heads/release", pick)
    return builder, base, pick


def test_the_git_layer_reads_an_undatable_commit(undated) -> None:
    builder, base, pick = undated
    (commit,) = GitRepo(builder.path).commits([pick], no_walk=True)
    assert commit.sha == pick and commit.subject == "Fix the thing (#3)"
    assert 0 <= commit.author_time <= 253402300799  # something time.gmtime can show
    assert commit.dated is False


@pytest.mark.parametrize("verb", ["fidelity", "shape", "drift", "trace", "compare"])
def test_every_verb_reads_it(undated, run_cli, tmp_path: Path, verb: str) -> None:
    builder, base, pick = undated
    before = builder.snapshot()
    rng = f"{base}..release"
    args = {
        "fidelity": [rng, "--source", "main"],
        "shape": [rng],
        "drift": [base, "release"],
        "trace": ["fixed", "--refs", "release", "--range", rng],
        "compare": [base, "release", "--source", "main"],
    }[verb]
    out = tmp_path / "out"
    dest = ["--output-dir", str(out)] if verb == "compare" else ["--output", str(out / "r.json")]
    if verb != "compare":
        out.mkdir()
    code, _, err = run_cli(
        verb, *args, "--repo", str(builder.path), "--format", "json", *dest, "--fail-on", "never"
    )
    assert code == 0, err
    text = (out / ("report.json" if verb == "compare" else "r.json")).read_text()
    assert "harness-error" not in text and "crashed" not in text
    report = json.loads(text)
    if verb in ("shape", "compare"):
        kinds = {f["kind"] for s in report["sections"] for f in s.get("findings", [])}
        assert "shape-undated" in kinds, kinds
    assert builder.snapshot() == before


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("1700000000", 1700000000),
        ("0", 0),
        ("", None),
        ("-5", None),
        ("99999999999999999999", None),
        ("253402300800", None),  # one second past 9999-12-31
        ("253402300799", 253402300799),
        ("12ab", None),
    ],
)
def test_git_time_reads_what_time_functions_can_show(field: str, expected: int | None) -> None:
    from harness.git.records import git_time

    assert git_time(field) == expected
