"""The tests section's wall time against the same four pytest runs made by hand (issue 39, item 6).

Builds the test project of harness/testing/fix_repo.py, builds its environment once (reported
apart), then times, side by side in one run: the four plain pytest runs of the columns made by
hand in a ready environment (harness/testing/pytest_truth.py, sequential, as a reviewer would), a
cold ``harness tests`` (empty section cache, the ready environment through ``--python``) and a warm
one. Prints each figure and the ratios: cold / plain per interleaved pair as min/median/max (goal
≤ 1.5) and warm in seconds (goal ≤ 5).

    python bench/tests_section.py [--repeat 5] [--head backport/whole]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fidelity import bytecode_env  # noqa: E402

from harness.testing import fix_repo  # noqa: E402
from harness.testing.pytest_truth import plain_pytest  # noqa: E402

FILES = ["tests/test_ops.py"]


_PHASE = re.compile(
    r"tests: (\d+ file\(s\) in \d+ columns|reruns, missing commits, hunks and lanes): "
    r"done in ([\d.]+)s"
)


def _harness(
    repo: Path, head: str, python: str, cache: Path, work: Path
) -> tuple[float, dict[str, float]]:
    """Wall time of one ``harness tests`` run, and its phases as its progress lines give them."""
    env = {
        **bytecode_env(cache.parent),
        "HARNESS_CACHE_DIR": str(cache),
        "HARNESS_WORK_DIR": str(work),
    }
    argv = [sys.executable, "-m", "harness", "tests", f"release/1.x..{head}", "--source", "main"]
    argv += ["--repo", str(repo), "--python", python, "--format", "none"]
    start = time.monotonic()
    proc = subprocess.run(argv, env=env, check=False, capture_output=True, text=True)
    took = time.monotonic() - start
    phases = {
        ("columns" if "columns" in m.group(1) else "review"): float(m.group(2))
        for m in _PHASE.finditer(proc.stderr)
    }
    return took, phases


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--head", default="backport/whole")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo = root / "repo"
        shas = fix_repo.build(repo)
        # The environment: built once by the harness (its own cost, reported apart).
        cache, work = root / "cache", root / "work"
        start = time.monotonic()
        env = {**os.environ, "HARNESS_CACHE_DIR": str(cache), "HARNESS_WORK_DIR": str(work)}
        subprocess.run(
            [
                sys.executable,
                "-m",
                "harness",
                "tests",
                f"release/1.x..{args.head}",
                "--source",
                "main",
                "--repo",
                str(repo),
                "--format",
                "none",
            ],
            env=env,
            check=False,
            capture_output=True,
        )
        build = time.monotonic() - start
        python = str(next((cache / "envs").glob("*/bin/python")))
        bytecode_env(root)  # the harness's bytecode compiled before the clock starts
        plain: list[float] = []
        cold: list[float] = []
        warm: list[float] = []
        columns: list[float] = []
        review: list[float] = []
        for i in range(args.repeat):
            t = time.monotonic()
            plain_pytest(repo, "release/1.x", FILES, [(FILES[0], args.head)], python)
            plain_pytest(repo, args.head, FILES, python=python)
            plain_pytest(repo, shas["main_other"], FILES, [(FILES[0], shas["squash"])], python)
            plain_pytest(repo, shas["squash"], FILES, python=python)
            plain.append(time.monotonic() - t)
            fresh = root / f"cold-{i}"
            took, phases = _harness(repo, args.head, python, fresh, work)
            cold.append(took)
            columns.append(phases.get("columns", 0.0))
            review.append(phases.get("review", 0.0))
            warm.append(_harness(repo, args.head, python, fresh, work)[0])
    p, c, w, cols, rev = (statistics.median(x) for x in (plain, cold, warm, columns, review))
    print(f"environment build (first run, apart): {build:.2f} s")
    print(f"four plain pytest runs by hand: median {p:.2f} s  {[round(x, 2) for x in plain]}")
    print(f"harness tests, cold:            median {c:.2f} s  {[round(x, 2) for x in cold]}")
    print(f"harness tests, warm:            median {w:.2f} s  {[round(x, 2) for x in warm]}")
    print(f"  of which the columns (issue 39's four runs): {cols:.2f} s = {cols / p:.2f}x plain")
    print(f"  of which reruns, missing commits, hunks, lanes (issue 46): {rev:.2f} s")
    pairs = sorted(cd / pl for cd, pl in zip(cold, plain, strict=True))
    print(
        f"cold / plain, per pair: min {pairs[0]:.2f}x  median {statistics.median(pairs):.2f}x  "
        f"max {pairs[-1]:.2f}x  (goal <= 1.5, {len(pairs)} pairs)   warm: {w:.2f} s (goal <= 5)"
    )


if __name__ == "__main__":
    main()
