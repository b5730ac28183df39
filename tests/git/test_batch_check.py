"""``GitRepo.batch_check``: the formats the harness asks are answered by one ``cat-file
--batch-check`` process kept for the run, line for line what a process of that format answers."""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from harness.git import GitRepo
from harness.git.repo import _CHECK_FORMATS


def _plain(path, specs: list[str], fmt: str) -> list[str]:
    """What one ``git cat-file --batch-check=<fmt>`` process answers for ``specs``."""
    out = subprocess.run(
        ["git", "-C", str(path), "cat-file", f"--batch-check={fmt}"],
        input="".join(s + "\n" for s in specs).encode("utf-8", "surrogateescape"),
        capture_output=True,
        check=True,
    ).stdout
    return out.decode("utf-8", "surrogateescape").split("\n")[: len(specs)]


@pytest.fixture
def specs(builder) -> list[str]:
    builder.commit("one", {"a.py": "x = 1\n", "dir/with space.txt": "s\n", "b.bin": b"\x00\x01"})
    builder.commit("two", {"a.py": "x = 2\n"})
    return [
        "HEAD^{commit}",
        "HEAD^{tree}",
        "HEAD:a.py",
        "HEAD~1:a.py",
        "HEAD:dir/with space.txt",
        "HEAD:no such file",
        "0" * 40,  # a well-formed id of nothing
        "0" * 40 + " blob 12",  # a missing spec that looks like an answer
        "HEAD:b.bin",
        "not-a-ref^{commit}",
    ]


@pytest.mark.parametrize("fmt", sorted(_CHECK_FORMATS))
def test_each_format_answers_what_its_own_process_answers(builder, specs, fmt):
    repo = GitRepo(builder.path)
    many = specs * 70  # past one exchange of 256 specs
    assert repo.batch_check(many, fmt) == _plain(builder.path, many, fmt)
    assert repo.batch_check(["bad\nspec", *specs], fmt) == ["", *_plain(builder.path, specs, fmt)]
    assert repo._checker is not None and repo._checker.poll() is None  # one process, kept
    repo.close()
    assert repo._checker is None


def test_threads_share_the_kept_process(builder, specs):
    repo = GitRepo(builder.path)
    fmt = "%(objectname) %(objecttype) %(objectsize)"
    want = _plain(builder.path, specs, fmt)
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda _: repo.batch_check(specs, fmt), range(40)))
    assert all(g == want for g in got)
    first = repo._checker
    repo._checker.kill()  # a process that died is started again
    repo._checker.wait()
    assert repo.batch_check(specs, fmt) == want and repo._checker is not first
    repo.close()
