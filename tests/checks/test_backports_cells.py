"""`harness backports`: cells a release manager can act on (#47), each on a repository built here
and settled against a real ``git cherry-pick`` in a throwaway clone where it matters.

- reached only when the change itself is in place (its diff reverse-applies at the release tip,
  or the file is its after-image); lines found elsewhere in the file never count;
- a merge's row is where the commits it brought are, and no regression for a picked merge;
- one row per change (one patch id, Change-Id or PR), named by the commit on ``--source``;
- words: ``--release`` equal to the source is exit 2, a repeated one is listed once.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from harness.checks.backports import backports_check
from harness.git import GitRepo
from harness.testing.repos import RepoBuilder


def _tests(extra: str = "", two: str | None = None) -> str:
    """A test module: two tests reading a process's output, the second without join()."""
    second = (
        two
        if two is not None
        else (
            "def test_two():\n"
            "    p = spawn('two')\n"
            "    if IS_PYPY:\n"
            "        pytest.skip('flaky on pypy')\n"
            "    out = p.read()\n"
            "    assert out == 'two'\n"
        )
    )
    return (
        "import pytest\n\n" + extra + "def test_one():\n"
        "    p = spawn('one')\n"
        "    p.join()\n"
        "    p.wait(timeout=5)\n"
        "    out = p.read()\n"
        "    assert out == 'one'\n\n\n" + second
    )


FIXED_TWO = (
    "def test_two():\n"
    "    p = spawn('two')\n"
    "    p.join()\n"
    "    p.wait(timeout=5)\n"
    "    out = p.read()\n"
    "    assert out == 'two'\n"
)


def _cherry_pick_applies(repo: Path, tmp: Path, commit: str, onto: str) -> bool:
    """The truth: a real ``git cherry-pick --no-commit`` in a throwaway clone."""
    clone = tmp / f"clone-{commit[:8]}-{onto}"
    subprocess.run(["git", "clone", "-q", "--shared", str(repo), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", f"origin/{onto}"], check=True)
    proc = subprocess.run(
        ["git", "-C", str(clone), "cherry-pick", "--no-commit", commit], capture_output=True
    )
    return proc.returncode == 0


def test_lines_found_elsewhere_are_not_reached(tmp_path: Path) -> None:
    """A two-line fix of test_two (join() and wait() before reading, the pypy guard dropped):
    its added lines are test_one's, and the release added a third test with them too. The change
    is not on the release: missing, and a cherry-pick applies (as git's own does)."""
    b = RepoBuilder(tmp_path / "repo")
    b.commit("base", {"tests/test_proc.py": _tests(), "README": "r\n"})
    b.branch("rel")
    fix = b.commit("Fix flaky test_two", {"tests/test_proc.py": _tests(two=FIXED_TWO)})
    b.checkout("rel")
    third = "def test_three():\n    p = spawn('3')\n    p.join()\n    p.wait(timeout=5)\n\n\n"
    b.commit("Add test_three", {"tests/test_proc.py": _tests(extra=third)})
    b.checkout("main")
    got = backports_check(GitRepo(b.path), "main", ["rel"])
    cell = got.result.cell(fix, "rel")
    assert (cell.state, cell.applies, cell.how) == ("missing", True, None), cell
    assert _cherry_pick_applies(b.path, tmp_path, fix, "rel")


def test_change_in_place_is_reached_with_how(tmp_path: Path) -> None:
    """The same fix carried by an unrelated release commit (vendoring a toolkit), the file
    otherwise different (a test added above it): reached (in place), as a real cherry-pick agrees
    (it brings nothing). A release that merged the fix: reached (merged)."""
    b = RepoBuilder(tmp_path / "repo")
    b.commit("base", {"tests/test_proc.py": _tests(), "a.py": "a = 1\n", "b.py": "b = 1\n"})
    b.branch("rel")
    b.branch("topic")
    fix = b.commit("Fix flaky test_two", {"tests/test_proc.py": _tests(two=FIXED_TWO)})
    b.checkout("topic")
    merged = b.commit("Fix b", {"b.py": "b = 2\n"})
    b.checkout("main")
    b.merge("topic", "Merge branch 'topic'")
    b.checkout("rel")
    head = "def test_zero():\n    assert True\n\n\n"
    vendored = "".join(f"vendored_{i} = load('{i}')\n" for i in range(80))
    b.commit(
        "Vendor the toolkit",
        {"vendor/t.py": vendored, "tests/test_proc.py": _tests(extra=head, two=FIXED_TWO)},
    )
    b.merge("topic", "Merge branch 'topic' into rel")
    b.checkout("main")
    got = backports_check(GitRepo(b.path), "main", ["rel"])
    cells = {s: got.result.cell(s, "rel") for s in (fix, merged)}
    assert {s: (c.state, c.how) for s, c in cells.items()} == {
        fix: ("reached", "in place"),
        merged: ("reached", "merged"),
    }
    shown = " ".join(str(x) for row in got.section.tables[0].rows for x in row)
    assert "reached (in place)" in shown and "reached (merged)" in shown
    # The truth: a cherry-pick of the fix onto the release changes nothing.
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--shared", str(b.path), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", "origin/rel"], check=True)
    subprocess.run(["git", "-C", str(clone), "cherry-pick", "--no-commit", fix], check=False)
    diff = subprocess.run(["git", "-C", str(clone), "diff", "HEAD"], capture_output=True)
    assert diff.stdout == b""


def _sec(check: str = "if len(name) > 64:\n        raise ValueError(name)\n") -> str:
    return (
        "def parse_header(name, value):\n    "
        + check.lstrip()
        + "    return name, value\n\n\n"
        + "".join(f"def helper{i}(x):\n    return x + {i}\n\n\n" for i in range(8))
    )


def test_a_merge_is_picked_where_its_commits_are(tmp_path: Path) -> None:
    """A security fix merged into main as a merge commit: the older release picked the merge
    (-m 1 -x), the newer one its only commit, adapted (trailer naming the commit). The merge's row
    is picked on both, and there is no regression finding."""
    b = RepoBuilder(tmp_path / "repo")
    b.commit("base", {"sec.py": _sec("pass\n"), "README": "r\n"})
    b.branch("rel1")
    b.commit("Docs", {"README": "r2\n"})
    b.branch("rel2")
    b.branch("fork-fix")
    b.checkout("fork-fix")
    inner = b.commit("Fix the header check", {"sec.py": _sec()})
    b.checkout("main")
    merge = b.merge("fork-fix", "Merge commit from fork")
    b.checkout("rel1")
    older = b.cherry_pick(merge, "-m", "1", "-x")
    b.checkout("rel2")
    adapted = _sec("if len(name) > 64:\n        raise HeaderError(name)\n")
    newer = b.commit(
        f"Fix the header check\n\n(cherry picked from commit {inner})", {"sec.py": adapted}
    )
    b.checkout("main")
    got = backports_check(GitRepo(b.path), "main", ["rel1", "rel2"])
    on1, on2 = got.result.cell(merge, "rel1"), got.result.cell(merge, "rel2")
    assert (on1.state, on1.pick) == ("picked", older)
    assert (on2.state, on2.pick) == ("picked", newer), on2
    assert not [f for f in got.section.findings if f.kind == "backport-regression"]
