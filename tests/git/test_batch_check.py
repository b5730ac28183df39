"""``GitRepo.batch_check``: the formats the harness asks are answered by one ``cat-file
--batch-check`` process kept for the run, line for line what a process of that format answers."""

from __future__ import annotations

import subprocess
import sys
import threading
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


def test_long_missing_specs_never_fill_both_pipes(builder, specs):
    """git echoes a missing spec: 300 specs of 1 KB each would fill both pipes if asked at once."""
    repo = GitRepo(builder.path)
    fmt = "%(objectname) %(objecttype) %(objectsize)"
    long = [f"HEAD:{'d' * 1000}/{i}" for i in range(300)] + ["HEAD:a.py", f"HEAD:{'e' * 5000}"]
    done: list[list[str]] = []
    worker = threading.Thread(target=lambda: done.append(repo.batch_check(long, fmt)), daemon=True)
    worker.start()
    worker.join(60)
    assert done, "batch_check hung"
    assert done[0] == _plain(builder.path, long, fmt)
    repo.close()


def test_a_failed_merge_base_is_not_kept(builder, specs):
    repo = GitRepo(builder.path)
    head, nothing = builder.rev("HEAD"), "1" * 40
    assert repo.merge_base(head, nothing) is None  # git fails: no such commit
    assert (head, nothing) not in repo.bases
    assert repo.merge_base(head, head) == head and repo.bases[(head, head)] == head


_LEAVING = r"""
import sys
from harness.git import GitRepo
from harness.git import kept
repo = GitRepo(sys.argv[1])
assert repo.batch_check(["HEAD"], "%(objectname) %(objecttype)")[0].endswith(" commit")
proc = repo._checker
kept.leaving()
repo.close()  # given the end of its input, not waited for
print(proc.returncode, proc.wait(timeout=30))
"""


def test_a_process_leaving_gives_its_batch_processes_their_input_s_end_without_waiting(builder):
    """Once the command line's verb is over (``kept.leaving``), a kept batch process is not waited
    for: its input ends and it exits on its own (exit 0), which the run's end need not wait for."""
    builder.commit("one", {"a.py": "x = 1\n"})
    out = subprocess.run(
        [sys.executable, "-c", _LEAVING, str(builder.path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["None", "0"]


def test_only_the_command_line_s_own_process_leaves(builder, run_cli):
    """``main(argv)`` in a caller's process leaves its git processes waited for, as before."""
    from harness.git import kept

    builder.commit("one", {"a.py": "x = 1\n"})
    builder.commit("two", {"a.py": "x = 2\n"})
    code, _, err = run_cli("shape", "HEAD~1..HEAD", "--repo", str(builder.path))
    assert code == 0, err
    assert kept._leaving is False


def test_git_version_asked_ahead_is_the_one_asked_in_place(builder, monkeypatch):
    """``ask_git_version`` starts ``git version`` early; ``git_version`` reads that answer: the
    same text as asking in place (the index's stamp names it), one process either way."""
    from harness.git import history

    builder.commit("one", {"a.py": "x = 1\n"})
    repo = GitRepo(builder.path)
    monkeypatch.setattr(history, "_VERSION", {})
    monkeypatch.setattr(history, "_ASKED", [])
    in_place = history.git_version(repo)
    assert in_place == repo.run_text(["version"]).strip() and in_place.startswith("git version")
    monkeypatch.setattr(history, "_VERSION", {})
    history.ask_git_version(repo)
    assert len(history._ASKED) == 1
    history.ask_git_version(repo)  # (asked once)
    assert len(history._ASKED) == 1
    assert history.git_version(repo) == in_place and history._ASKED == []
