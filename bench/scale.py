"""Benchmark: a 40-mutation table on ``local``, on a local Ray with 1 worker, and with 2 workers.

Builds a repository with a package of M functions and a real pytest suite whose tests take
noticeable time (each row's selection sleeps SLEEP seconds in all, on top of pytest's start-up),
then runs the mutation table (M mutations + row "none", every row measured: the cache is off) in
the same run:
  local     ``run_mutations`` on the local executor, one row at a time (one thread)
  ray 1     the same with ``--executor ray`` on a local Ray started with 1 CPU (one worker)
  ray 2     the same on a local Ray started with 2 CPUs (two workers)
Each Ray is started before its clock starts and shut down after it (only the Ray this process
started), so no Ray process outlives the benchmark. Prints the times, the ratios
ray 2 / ray 1 (target <= 0.65) and ray 1 / local (target <= 1.2), and that the verdicts agree.
Usage: python bench/scale.py [MUTATIONS=40] [SLEEP=0.4]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.checks.tests_as_evidence.mutation import Mutation, MutationRun, run_mutations  # noqa: E402
from harness.columns.edits import Edit  # noqa: E402
from harness.executors import Executor  # noqa: E402
from harness.git.repo import GitRepo  # noqa: E402
from harness.infra.cache import Cache  # noqa: E402

TESTS = 8  # tests in the suite; each sleeps SLEEP / TESTS


def make_repo(root: Path, n_funcs: int, sleep: float) -> None:
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "ops.py").write_text(
        "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(n_funcs))
    )
    body = ["import time", "", "from pkg import ops", ""]
    for t in range(TESTS):
        checks = "".join(f"    assert ops.f{i}({i}) == {2 * i}\n" for i in range(t, n_funcs, TESTS))
        body += [f"def test_{t}():", f"    time.sleep({sleep / TESTS:.4f})", checks]
    (root / "tests" / "test_ops.py").write_text("\n".join(body))
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b",
    }
    for argv in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "bench"]):
        subprocess.run(argv, cwd=root, env=env, check=True)


def mutations(n: int) -> list[Mutation]:
    return [
        Mutation(
            f"m{i}",
            [
                Edit(
                    kind="replace",
                    path="pkg/ops.py",
                    old=f"return x + {i}\n",
                    new=f"return x - {i}\n",
                )
            ],
            expect="killed" if i == 1 else None,
        )
        for i in range(n)
    ]


def timed(
    repo: GitRepo, muts: list[Mutation], executor: Executor | None
) -> tuple[float, MutationRun]:
    start = time.monotonic()
    run = run_mutations(
        repo, "HEAD", muts, ["tests"], cache=Cache(enabled=False), executor=executor
    )
    return time.monotonic() - start, run


def on_ray(repo: GitRepo, muts: list[Mutation], workers: int) -> tuple[float, MutationRun, int]:
    import ray

    from harness.executors.ray_executor import RayExecutor, start_local

    start_local(workers, 200)  # loopback only; started before the clock
    try:
        ex = RayExecutor()
        seconds, run = timed(repo, muts, ex)
        return seconds, run, ex.submitted
    finally:
        ray.shutdown()  # the Ray this process started, and its workers


def verdicts(run: MutationRun) -> list[tuple[str, list[str], str]]:
    return [(r.name, sorted(r.outcome.failing), r.outcome.problem) for r in run.rows]


def main() -> int:
    n_mut = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    sleep = float(sys.argv[2]) if len(sys.argv) > 2 else 0.4
    muts = mutations(n_mut)
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        root = Path(tmp) / "repo"
        make_repo(root, n_mut, sleep)
        os.environ["HARNESS_WORK_DIR"] = str(Path(tmp) / "work")
        repo = GitRepo(root)
        timed(repo, muts[:1], None)  # warm the interpreter's caches and the work root
        t_local, local = timed(repo, muts, None)
        t_one, one, sub_one = on_ray(repo, muts, 1)
        t_two, two, sub_two = on_ray(repo, muts, 2)
    rows = n_mut + 1
    same = verdicts(local) == verdicts(one) == verdicts(two)
    print(f"table: {n_mut} mutations + row 'none' = {rows} pytest runs, {sleep:g}s of tests each")
    print(f"local (one thread):   {t_local:7.1f}s   {t_local / rows:.2f}s per row")
    print(f"ray, 1 worker:        {t_one:7.1f}s   {sub_one} tasks")
    print(f"ray, 2 workers:       {t_two:7.1f}s   {sub_two} tasks")
    r2 = t_two / t_one
    r1 = t_one / t_local
    print(f"ray 2 / ray 1:        {r2:.2f}x   (target <= 0.65) {'ok' if r2 <= 0.65 else 'MISSED'}")
    print(f"ray 1 / local:        {r1:.2f}x   (target <= 1.20) {'ok' if r1 <= 1.2 else 'MISSED'}")
    print(f"verdicts equal: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
