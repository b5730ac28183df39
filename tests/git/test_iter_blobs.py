"""iter_blobs: one cat-file process, answers in request order as git writes them; a caller that
stops early leaves no git process behind, and more than a pipe's worth of requests cannot hang."""

from __future__ import annotations

import shutil
import threading

import pytest

from harness.git import GitRepo
from harness.git.repo import GitError


def test_answers_in_order_with_missing_and_unaskable_specs(builder) -> None:
    builder.commit("c", {"a.txt": "alpha\n", "dir/b.txt": "beta\n", "empty.txt": ""})
    repo = GitRepo(builder.path)
    specs = [
        "HEAD:a.txt",
        "HEAD:nope",
        "HEAD:dir",
        "bad\nspec",
        "",
        "HEAD:dir/b.txt",
        "HEAD:empty.txt",
    ]
    got = list(repo.iter_blobs(specs))
    assert got == [b"alpha\n", None, None, None, None, b"beta\n", b""]
    assert repo.read_blobs(specs) == got


def test_a_caller_that_stops_early_leaves_no_process(builder, monkeypatch) -> None:
    big = "".join(f"line {i}\n" for i in range(200_000))  # ~2.5 MB: git blocks writing it
    builder.commit("c", {"big.txt": big, "small.txt": "s\n"})
    repo = GitRepo(builder.path)
    started = []
    popen = repo.popen
    monkeypatch.setattr(repo, "popen", lambda args: started.append(popen(args)) or started[-1])
    # More requests than a pipe holds: git is blocked writing answers, our writer is blocked
    # writing requests; closing must still return.
    blobs = repo.iter_blobs(["HEAD:small.txt"] + ["HEAD:big.txt"] * 60_000)
    assert next(blobs) == b"s\n"
    closer = threading.Thread(target=blobs.close, daemon=True)
    closer.start()
    closer.join(30)
    assert not closer.is_alive()
    (proc,) = started
    assert proc.poll() is not None  # stopped and reaped


def test_many_requests_do_not_deadlock(builder) -> None:
    builder.commit("c", {"a.txt": "x" * 5000 + "\n"})
    repo = GitRepo(builder.path)
    specs = ["HEAD:a.txt"] * 4000  # requests and answers both far beyond a pipe buffer
    assert sum(len(b or b"") for b in repo.iter_blobs(specs)) == 4000 * 5001


def test_git_failing_is_an_error_not_a_short_answer(builder) -> None:
    builder.commit("c", {"a.txt": "a\n"})
    repo = GitRepo(builder.path)
    shutil.rmtree(repo.git_dir / "objects")  # git no longer sees a repository here
    with pytest.raises(GitError):
        list(repo.iter_blobs(["HEAD:a.txt"]))
