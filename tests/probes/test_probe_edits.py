from __future__ import annotations

import pytest

from harness.columns.edits import Edit, apply_edits, edit_from_mapping
from harness.errors import UsageError
from harness.git.repo import GitRepo
from harness.git.tree import export_tree
from harness.testing.repos import git_blob_sha

SRC = "def f():\n    x = 1\n    if x:\n        y = 2\n    return x\n"


@pytest.fixture
def tree(builder, tmp_path):
    builder.commit("one", {"m.py": SRC, "dup.txt": "a a\n"})
    repo = GitRepo(builder.path)
    dest = tmp_path / "t"
    export_tree(repo, "HEAD", dest)
    return repo, dest


def test_replace_once_with_git_blob_proof(tree):
    repo, dest = tree
    (proof,) = apply_edits(repo, dest, [Edit("replace", "m.py", old="x = 1", new="x = 0")])
    after = (dest / "m.py").read_bytes()
    assert b"x = 0" in after
    assert proof.blob_before == git_blob_sha(repo, SRC.encode())
    assert proof.blob_after == git_blob_sha(repo, after)


@pytest.mark.parametrize("old,count", [("a", 2), ("zzz", 0)])
def test_replace_must_match_exactly_once(tree, old, count):
    repo, dest = tree
    with pytest.raises(UsageError, match=rf"S:3: replace in dup.txt: .*found {count}"):
        apply_edits(repo, dest, [Edit("replace", "dup.txt", old=old, new="b", where="S:3: ")])


def test_move_takes_target_indentation(tree):
    repo, dest = tree
    apply_edits(repo, dest, [Edit("move", "m.py", line="y = 2", above="x = 1")])
    assert (
        dest / "m.py"
    ).read_text() == "def f():\n    y = 2\n    x = 1\n    if x:\n    return x\n"


def test_patch_and_apply_commit(builder, tmp_path):
    builder.commit("one", {"a.txt": "1\n2\n3\n"})
    builder.branch("side")
    builder.checkout("side")
    fix = builder.commit("fix", {"a.txt": "1\nTWO\n3\n"})
    builder.checkout("main")
    repo = GitRepo(builder.path)
    dest = tmp_path / "t"
    export_tree(repo, "main", dest)
    (proof,) = apply_edits(repo, dest, [Edit("apply-commit", commit=fix)])
    assert (dest / "a.txt").read_text() == "1\nTWO\n3\n" and proof.path == "a.txt" and proof.landed
    diff = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n 1\n-TWO\n+two\n 3\n"
    (p2,) = apply_edits(repo, dest, [Edit("patch", diff=diff)])
    assert (dest / "a.txt").read_text() == "1\ntwo\n3\n" and p2.blob_before == proof.blob_after
    with pytest.raises(UsageError, match="does not apply"):
        apply_edits(repo, dest, [Edit("patch", diff=diff)])
    assert (builder.path / "a.txt").read_text() == "1\n2\n3\n"


def test_edit_from_mapping_forms():
    assert edit_from_mapping({"move": "a", "above": "b", "path": "p"}) == Edit(
        "move", "p", line="a", above="b"
    )
    assert edit_from_mapping({"kind": "replace", "path": "p", "old": "x", "new": "y"}).new == "y"
    with pytest.raises(UsageError, match="F:1: replace edit: unknown key 'colour'"):
        edit_from_mapping({"replace": "x", "new": "y", "path": "p", "colour": 1}, "F:1: ")
    with pytest.raises(UsageError, match="'path'"):
        edit_from_mapping({"move": "x", "above": "y"})
