"""A git process's stdout read back from a file (``capture_file``), not a pipe: the same bytes,
however large, and on a platform without in-memory files."""

from __future__ import annotations

import os
import subprocess

import harness.git.repo as repo_module
from harness.git import GitRepo
from harness.infra import workarea


def test_run_gives_what_a_pipe_gives(builder) -> None:
    for i in range(30):
        builder.commit(f"c{i} " + "x" * 3000, {f"f{i}.txt": f"{i}\n"})
    repo = GitRepo(builder.path)
    args = ["log", "-z", "--format=%H%x00%s%x00%b", "--name-only", "HEAD"]
    piped = subprocess.run(repo._argv(args), capture_output=True, env=repo._env(), check=True)
    assert repo.run(args) == piped.stdout and len(piped.stdout) > 90_000


def test_a_file_on_disk_where_memory_files_are_refused(builder, monkeypatch, tmp_path) -> None:
    builder.commit("one", {"a.txt": "1\n"})
    repo = GitRepo(builder.path)
    expected = repo.run(["log", "--format=%H %s"])

    def refused(*_: object) -> int:
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(os, "memfd_create", refused, raising=False)
    monkeypatch.setenv("HARNESS_WORK_DIR", str(tmp_path / "work"))
    assert repo.run(["log", "--format=%H %s"]) == expected
    fd = repo_module.capture_file()
    try:
        # The file is in this run's private folder, and already unlinked: nothing to leave behind.
        if os.path.isdir("/proc/self/fd"):
            where = os.readlink(f"/proc/self/fd/{fd}")
            assert where.startswith(str(tmp_path / "work")) and where.endswith("(deleted)")
        os.write(fd, b"abc" * 50_000)
        assert repo_module.read_file(fd) == b"abc" * 50_000
    finally:
        os.close(fd)
        workarea.end_run()
