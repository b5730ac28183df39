"""Benchmark: cost of one mutation row against a bare pytest run of the same selection.

Builds a repository with a small package and N tests, then measures in the same run:
  bare      ``pytest -q tests`` in an exported copy (the floor any mutation row pays)
  rows      ``harness.checks.tests_as_evidence.mutation.run_mutations`` with M mutations (+ the row "none")
and prints the overhead per row as a ratio of the bare run. Usage: python bench/mutation.py [TESTS] [MUTATIONS]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.checks.tests_as_evidence.mutation import Mutation, mutation_section, run_mutations  # noqa: E402
from harness.columns.edits import Edit  # noqa: E402
from harness.git.repo import GitRepo  # noqa: E402
from harness.git.tree import export_tree  # noqa: E402


def make_repo(root: Path, n_tests: int, n_funcs: int) -> None:
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "ops.py").write_text(
        "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(n_funcs))
    )
    body = ["from pkg import ops", ""]
    for t in range(n_tests):
        i = t % n_funcs
        body += [f"def test_{t}():", f"    assert ops.f{i}({t}) == {t + i}", ""]
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


def main() -> int:
    n_tests = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    n_mut = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    n_funcs = max(n_mut, 8)
    with tempfile.TemporaryDirectory(prefix="bench-mutation-") as tmp:
        root = Path(tmp) / "repo"
        make_repo(root, n_tests, n_funcs)
        os.environ["HARNESS_WORK_DIR"] = str(Path(tmp) / "work")
        repo = GitRepo(root)
        export_tree(repo, "HEAD", Path(tmp) / "bare")
        bare_argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
        subprocess.run(bare_argv, cwd=Path(tmp) / "bare", capture_output=True)  # warm caches
        times = []
        for _ in range(2):
            start = time.monotonic()
            subprocess.run(bare_argv, cwd=Path(tmp) / "bare", capture_output=True, check=True)
            times.append(time.monotonic() - start)
        t_bare = min(times)
        mutations = [
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
            for i in range(n_mut)
        ]
        start = time.monotonic()
        run = run_mutations(repo, "HEAD", mutations, ["tests"])
        t_cold = time.monotonic() - start
        start = time.monotonic()
        run_mutations(repo, "HEAD", mutations, ["tests"])
        t_warm = time.monotonic() - start
        section = mutation_section(run)
    rows = n_mut + 1
    assert section.data["evidence"], "liveness control did not hold"
    print(f"selection: {n_tests} tests; {n_mut} mutations + row 'none' = {rows} pytest runs")
    print(f"bare pytest run:                 {t_bare:.2f}s")
    print(
        f"per row, cold trees:             {t_cold / rows:.2f}s = {t_cold / rows / t_bare:.2f}x bare"
    )
    print(
        f"per row, warm (trees reused):    {t_warm / rows:.2f}s = {t_warm / rows / t_bare:.2f}x bare"
    )
    print(f"overhead per row (warm - bare):  {t_warm / rows - t_bare:+.2f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
