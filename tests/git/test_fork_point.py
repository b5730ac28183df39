"""fork_point and count_commits read one ``rev-list --parents`` walk of the range; the fork point
is what ``rev-list --first-parent`` gives, on histories with merges in both directions."""

from __future__ import annotations

import itertools
import subprocess

from harness.git import GitRepo
from harness.git.history import count_commits, fork_point


def _by_first_parent(path, base: str, head: str) -> str:
    """The old computation: the oldest commit of ``--first-parent base..head``, its first parent."""
    out = subprocess.run(
        ["git", "-C", str(path), "rev-list", "--first-parent", "--parents", head, f"^{base}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    oldest = out[-1].split() if out else []
    return oldest[1] if len(oldest) > 1 else base


def test_fork_point_is_the_first_parent_walks_answer(builder) -> None:
    shas = [builder.commit("root", {"a": "0\n"})]
    builder.branch("release")
    shas.append(builder.commit("main 1", {"a": "1\n"}))
    builder.checkout("release")
    shas.append(builder.commit("release 1", {"r": "1\n"}))
    shas.append(builder.merge("main", "Merge branch 'main' into release"))  # main merged back
    shas.append(builder.commit("release 2", {"r": "2\n"}))
    builder.checkout("main")
    shas.append(builder.commit("main 2", {"a": "2\n"}))
    shas.append(builder.merge("release", "Merge branch 'release'"))  # release merged into main
    shas.append(builder.commit("main 3", {"a": "3\n"}))
    builder.checkout("release")
    shas.append(builder.commit("release 3", {"r": "3\n"}))
    repo = GitRepo(builder.path)
    for base, head in itertools.permutations(shas, 2):
        assert fork_point(repo, base, head) == _by_first_parent(builder.path, base, head)
    walked = subprocess.run(
        ["git", "-C", str(builder.path), "rev-list", "--count", shas[-1], f"^{shas[0]}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert count_commits(repo, shas[0], shas[-1]) == (int(walked), int(walked) - 1)
