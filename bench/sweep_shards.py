"""Benchmark: a mutmut sweep of about 200 mutants as one run vs split into shards on Ray workers.

Builds a repository whose change touches F functions (each gives mutmut a handful of mutants) with
tests that kill most of them, then measures in the same run:
  one       ``run_sweep`` on the local executor, one mutmut run with one child (one worker)
  one -jN   the same with ``--max-children N`` (mutmut's own parallelism on this one machine)
  sharded   ``run_sweep`` with ``--executor ray`` and N shards on a local Ray with N CPUs
and prints both times, the ratio, and that the verdicts are equal.
Usage: python bench/sweep_shards.py [FUNCTIONS=40] [WORKERS=2]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.checks.tests_as_evidence.sweep import run_sweep  # noqa: E402
from harness.executors.ray_executor import RayExecutor  # noqa: E402
from harness.git.repo import GitRepo  # noqa: E402


def _commit(root: Path, msg: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b",
    }
    subprocess.run(["git", "add", "-A"], cwd=root, env=env, check=True)
    subprocess.run(["git", "commit", "-qm", msg], cwd=root, env=env, check=True)


def make_repo(root: Path, n_funcs: int) -> None:
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "ops.py").write_text(
        "".join(f"def f{i}(x, y):\n    return x\n\n\n" for i in range(n_funcs))
    )
    (root / "tests" / "test_ops.py").write_text(
        "\n".join(
            ["import time", "from pkg import ops", ""]
            + [
                f"def test_{i}():\n    time.sleep(0.02)\n    assert ops.f{i}(7, 3) == {7 + 3 * 2 - (i % 5)}\n"
                for i in range(n_funcs)
            ]
        )
    )
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    _commit(root, "base")
    (root / "pkg" / "ops.py").write_text(
        "".join(f"def f{i}(x, y):\n    return x + y * 2 - {i % 5}\n\n\n" for i in range(n_funcs))
    )
    _commit(root, "head")


def main() -> int:
    n_funcs = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as tmp:
        root = Path(tmp) / "repo"
        make_repo(root, n_funcs)
        repo = GitRepo(root)
        start = time.monotonic()
        one = run_sweep(repo, "HEAD~1", "HEAD", tests=["tests"], max_children=1)
        t_one = time.monotonic() - start
        start = time.monotonic()
        run_sweep(repo, "HEAD~1", "HEAD", tests=["tests"], max_children=workers)
        t_children = time.monotonic() - start
        import ray

        from harness.executors.ray_executor import start_local

        start_local(workers, 200)  # loopback only
        try:
            ex = RayExecutor()
            start = time.monotonic()
            sharded = run_sweep(
                repo, "HEAD~1", "HEAD", tests=["tests"], max_children=1, executor=ex, shards=workers
            )
            t_sharded = time.monotonic() - start
        finally:
            ray.shutdown()
    same = [(m.name, m.status) for m in one.mutants] == [
        (m.name, m.status) for m in sharded.mutants
    ]
    print(f"mutants: {len(one.mutants)} ({sum(m.status == 'killed' for m in one.mutants)} killed)")
    print(f"one mutmut run (local):        {t_one:7.1f}s")
    print(
        f"one mutmut run, {workers} children:   {t_children:7.1f}s   ratio {t_one / t_children:.2f}x"
    )
    print(
        f"{workers} shards on {workers} Ray workers:   {t_sharded:7.1f}s   ratio {t_one / t_sharded:.2f}x"
    )
    print(f"verdicts equal: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
