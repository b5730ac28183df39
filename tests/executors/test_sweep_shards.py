"""``harness sweep`` split into shards: mutmut's mutant names in N lists, one mutmut run per shard,
merged as mutmut's own exit codes: the same verdicts as one run, locally and on a real Ray cluster."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from harness.checks.tests_as_evidence.sweep import run_sweep, sweep_section
from harness.checks.tests_as_evidence.sweep_shards import generate_names, split_names
from harness.executors.local import LocalExecutor
from harness.git.repo import GitRepo
from harness.testing.sweep_repo import BASE, HEAD, TESTS

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("mutmut") is None, reason="mutmut 3 not installed"
)


def _verdicts(result) -> list:  # type: ignore[no-untyped-def]
    return [(m.name, m.status, m.line, m.on_changed_line) for m in result.mutants]


@pytest.fixture
def swept_repo(builder) -> tuple[GitRepo, str]:  # type: ignore[no-untyped-def]
    base = builder.commit(
        "base", {"pkg/__init__.py": "", "pkg/calc.py": BASE, "tests/test_calc.py": TESTS}
    )
    builder.commit("head", {"pkg/calc.py": HEAD})
    return GitRepo(builder.path), base


def test_split_names_round_robin() -> None:
    names = [f"m.x_f__mutmut_{i}" for i in range(1, 8)]
    assert split_names(names, 3) == [names[0::3], names[1::3], names[2::3]]
    assert split_names(names[:2], 5) == [[names[0]], [names[1]]]
    assert split_names([], 4) == [[]]


def test_shards_give_the_verdicts_of_one_run(
    swept_repo: tuple[GitRepo, str], tmp_path: Path
) -> None:
    repo, base = swept_repo
    one = run_sweep(repo, base, "HEAD", tests=["tests"], max_children=1, timeout=600)
    three = run_sweep(
        repo,
        base,
        "HEAD",
        tests=["tests"],
        max_children=1,
        timeout=600,
        executor=LocalExecutor(),
        shards=3,
    )
    assert one.clean_ok and three.clean_ok and three.forced_fail_ok and three.exit_code == 0
    assert _verdicts(one) and _verdicts(three) == _verdicts(one)
    assert {m.status for m in three.mutants} >= {
        "killed",
        "survived",
    }  # really merged from the shards
    assert "not checked" not in {m.status for m in three.mutants}
    a, b = sweep_section(one), sweep_section(three)
    assert a.data == b.data and [t.rows for t in a.tables] == [t.rows for t in b.tables]


def test_names_come_from_mutmut_and_cover_only_the_changed_functions(
    swept_repo: tuple[GitRepo, str], tmp_path: Path
) -> None:
    repo, base = swept_repo
    one = run_sweep(repo, base, "HEAD", tests=["tests"], max_children=1, timeout=600)
    from harness.checks.tests_as_evidence.sweep_results import find_changed_functions
    from harness.checks.tests_as_evidence.sweep_shards import mutmut_config, write_mutmut_config
    from harness.git.tree import export_tree

    tree = tmp_path / "t"
    export_tree(repo, repo.resolve("HEAD"), tree)
    fns, _ = find_changed_functions(repo, repo.resolve(base), repo.resolve("HEAD"), tree)
    write_mutmut_config(tree, mutmut_config(fns, ["tests"], None, []))
    names = generate_names(tree, sys.executable, fns)
    assert names == [m.name for m in one.mutants] and not (tree / "mutants").exists()


@pytest.mark.skipif(
    importlib.util.find_spec("ray") is None,
    reason="ray is not installed (pip install 'harness[ray]')",
)
def test_shards_on_ray_give_the_local_verdicts(
    ray_cluster: str, swept_repo: tuple[GitRepo, str]
) -> None:
    from harness.executors.ray_executor import RayExecutor

    repo, base = swept_repo
    one = run_sweep(repo, base, "HEAD", tests=["tests"], max_children=1, timeout=600)
    ex = RayExecutor(ray_cluster)
    remote = run_sweep(
        repo, base, "HEAD", tests=["tests"], max_children=1, timeout=600, executor=ex
    )
    assert ex.submitted == 2  # default: one shard per CPU of the cluster
    assert _verdicts(remote) == _verdicts(one)
    assert sweep_section(remote).data == sweep_section(one).data
