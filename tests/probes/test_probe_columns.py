from __future__ import annotations

import os
import subprocess

from harness.columns.edits import Edit
from harness.columns.trees import Column, materialize
from harness.git.repo import GitRepo
from harness.infra.stale_trees import clean_stale


def _repo(builder):
    builder.commit("one", {"m.py": "X = 1\n"})
    return GitRepo(builder.path)


def test_materialize_isolated_and_reused(builder, tmp_path):
    repo = _repo(builder)
    snap = builder.snapshot()
    col = Column("c", "main", [Edit("replace", "m.py", old="X = 1", new="X = 2")], "control")
    root = tmp_path / "root"
    with materialize(repo, col, root) as m:
        assert (m.path / "m.py").read_text() == "X = 2\n" and not m.reused
        first = m.path
        assert (root / f"{m.key}.lock").read_text() == str(os.getpid())
        assert m.proofs[0].blob_user_before == m.proofs[0].blob_before
    assert m.proofs[0].blob_user_after == m.proofs[0].blob_before  # the user's copy is untouched
    assert not (root / f"{m.key}.lock").exists()
    with materialize(repo, col, root) as m2:
        assert m2.reused and m2.path == first and m2.proofs[0].blob_after == m.proofs[0].blob_after
        (m2.path / "new.txt").write_text("x")
        assert m2.changes() == ["new.txt"]
    assert not first.exists()  # written into: not kept
    assert builder.snapshot() == snap
    assert (builder.path / "m.py").read_text() == "X = 1\n"


def test_same_content_twice_gets_a_private_copy(builder, tmp_path):
    repo = _repo(builder)
    with (
        materialize(repo, Column("a", "main"), tmp_path) as a,
        materialize(repo, Column("b", "main"), tmp_path) as b,
    ):
        assert a.path != b.path and (b.path / "m.py").exists()
        private = b.path
    assert not private.exists() and a.path.exists()


def test_stale_trees_of_killed_runs_are_cleaned(builder, tmp_path):
    repo = _repo(builder)
    dead = subprocess.Popen(["true"])
    dead.wait()
    with materialize(repo, Column("a", "main"), tmp_path) as m:
        key = m.key
    (tmp_path / f"{key}.lock").write_text(str(dead.pid))  # as if a killed run still held it
    (tmp_path / f"{key}.tmp-{dead.pid}-0").mkdir()
    (tmp_path / "mine").mkdir()  # not the harness's: kept
    removed = clean_stale(tmp_path)
    assert key in removed and f"{key}.tmp-{dead.pid}-0" in removed and (tmp_path / "mine").is_dir()
    assert not (tmp_path / key).exists() and not (tmp_path / f"{key}.tmp-{dead.pid}-0").exists()


def test_bare_repository(builder, tmp_path):
    _repo(builder)
    bare = GitRepo(builder.bare_clone(tmp_path / "b.git"))
    col = Column("c", "main", [Edit("replace", "m.py", old="1", new="3")], "control")
    with materialize(bare, col, tmp_path / "r") as m:
        assert (m.path / "m.py").read_text() == "X = 3\n"
    assert m.proofs[0].blob_user_after == m.proofs[0].blob_before
