"""Git plumbing for ref evidence on real repositories: trial merge, grep at refs, pickaxe, names."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.errors import UsageError
from harness.git.evidence import (
    changed_paths,
    count_merges,
    grep_at,
    grep_counts,
    ls_tree,
    name_revs,
    pickaxe,
    trial_merge,
)
from harness.git.picks import entries_at
from harness.git.repo import GitRepo


def _object_files(git_dir: Path) -> list[str]:
    return sorted(
        str(p.relative_to(git_dir)) for p in (git_dir / "objects").rglob("*") if p.is_file()
    )


@pytest.fixture
def forked(builder):
    """main: f = a/B/c; side (from the first commit): f = a/X/c plus g."""
    builder.commit("one", {"f": "a\nb\nc\n"})
    builder.branch("side")
    builder.commit("two", {"f": "a\nB\nc\n"})
    builder.checkout("side")
    builder.commit("three", {"f": "a\nX\nc\n", "g": "new\n"})
    builder.checkout("main")
    return builder


def test_trial_merge_reports_conflicts_and_writes_no_objects(forked):
    repo = GitRepo(forked.path)
    before, snap = _object_files(forked.path / ".git"), forked.snapshot()
    result = trial_merge(repo, forked.rev("side"), forked.rev("main"))
    assert not result.clean and [c.path for c in result.conflicts] == ["f"]
    assert result.conflicts[0].kinds and sorted(result.conflicts[0].stages) == [1, 2, 3]
    assert _object_files(forked.path / ".git") == before
    assert forked.snapshot() == snap


def test_trial_merge_clean_gives_a_tree(forked):
    repo = GitRepo(forked.path)
    forked.checkout("side")
    base = forked.rev("main~1")
    result = trial_merge(repo, forked.rev("side"), base)
    assert result.clean and result.conflicts == []
    assert result.tree == repo.resolve("side", "tree")


def test_trial_merge_of_unrelated_histories_is_an_error_not_a_crash(builder, tmp_path):
    builder.commit("one", {"f": "x\n"})
    builder.repo.git.checkout("-q", "--orphan", "other")
    builder.commit("orphan", {"h": "y\n"})
    repo = GitRepo(builder.path)
    result = trial_merge(repo, builder.rev("main"), builder.rev("other"))
    assert result.error and not result.clean


def test_grep_at_many_refs_in_one_call(forked):
    repo = GitRepo(forked.path)
    main, side = forked.rev("main"), forked.rev("side")
    found = grep_at(repo, "X", [main, side, side])
    assert found[main] == [] and [(h.path, h.line) for h in found[side]] == [("f", 2)]
    assert grep_counts(repo, "a", [main, side]) == {main: 1, side: 1}
    assert grep_at(repo, "new", [side], under="g")[side][0].path == "g"
    assert grep_at(repo, "new", [side], under="f")[side] == []


def test_grep_handles_non_utf8_and_option_like_needles(builder):
    builder.commit("latin", {"l.txt": b"caf\xe9 --count\n", "u.txt": "café\n"})
    repo = GitRepo(builder.path)
    head = builder.rev("HEAD")
    hits = grep_at(repo, "--count", [head])[head]
    assert [(h.path, h.line) for h in hits] == [("l.txt", 1)] and hits[0].text == b"caf\xe9 --count"
    assert [h.path for h in grep_at(repo, "café", [head])[head]] == ["u.txt"]
    with pytest.raises(UsageError):
        grep_at(repo, "two\nlines", [head])
    with pytest.raises(UsageError):
        grep_at(repo, "", [head])


def test_pickaxe_names_adding_and_removing_commits(builder):
    first = builder.commit("base", {"a.py": "x = 1\n"})
    add = builder.commit("add", {"a.py": "x = 1\nNEEDLE = 2\n"})
    builder.commit("unrelated", {"b.py": "y = 1\n"})
    rm = builder.commit("remove", {"a.py": "x = 1\n"})
    repo = GitRepo(builder.path)
    assert [c.sha for c in pickaxe(repo, "NEEDLE", first, rm)] == [add, rm]
    assert count_merges(repo, first, rm) == 0


def test_tree_listing_names_and_changed_paths(forked):
    repo = GitRepo(forked.path)
    side = forked.rev("side")
    assert [e.path for e in ls_tree(repo, side)] == ["f", "g"]
    assert ls_tree(repo, side, "nope") == []
    assert name_revs(repo, [side])[side] == "side"
    assert changed_paths(repo, forked.rev("main"), side) == [("M", "f"), ("A", "g")]


def test_works_on_a_bare_repository(forked, tmp_path):
    bare = forked.bare_clone(tmp_path / "bare.git")
    repo = GitRepo(bare)
    assert repo.bare
    before = _object_files(Path(bare))
    assert not trial_merge(repo, repo.resolve("side"), repo.resolve("main")).clean
    assert _object_files(Path(bare)) == before
    assert grep_counts(repo, "X", [repo.resolve("side")]) == {repo.resolve("side"): 1}
    assert os.path.isdir(bare)


def test_entries_at_matches_ls_tree(builder):
    """``entries_at`` names the same object as ``ls-tree`` for blobs, trees, links, odd paths, a
    submodule's commit that is not in the repository, and leaves absent paths out."""
    builder.commit("one", {"f": "x\n", "d/g": "y\n", "sp ace": "z\n"})
    os.symlink("f", builder.path / "link")
    builder.commit("two", {"f": "x2\n"})
    gitlink = "1" * 40  # a submodule's commit this repository does not hold
    builder.repo.git.update_index("--add", "--cacheinfo", f"160000,{gitlink},sub")
    builder.repo.git.commit("-q", "-m", "three")  # (``commit`` would add the work tree again)
    repo = GitRepo(builder.path)
    head = builder.rev("HEAD")
    wanted = [
        (f"{head}^", "f"),
        (head, "f"),
        (head, "d"),
        (head, "d/g"),
        (head, "link"),
        (head, "sp ace"),
        (head, "sub"),
        (head, "absent"),
        (f"{head}^", "sub"),
        (head, "new\nline"),
    ]
    got = entries_at(repo, wanted)
    for rev, path in wanted:
        listed = repo.run_text(["ls-tree", "-z", "--full-tree", rev, "--", f":(literal){path}"])
        want = listed.split("\t")[0].split()[2] if listed else None
        assert got.get((rev, path)) == want, (rev, path)
    assert got[(head, "sub")] == gitlink
    assert (head, "absent") not in got and (f"{head}^", "sub") not in got
