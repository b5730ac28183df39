"""Start-up cost: `harness --help` and the time to a verb's first git call, as ratios against a
bare interpreter start measured in the same run (issue 13 targets: --help < 150 ms, first git call
< 250 ms; printed, never asserted).

    python bench/startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

FIRST_GIT = (
    "import harness.cli, harness.commands.{verb}; from harness.git import GitRepo; "
    "GitRepo('.').resolve('HEAD')"
)


def timed(argv: list[str], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=7)
    runs = ap.parse_args().runs
    bare = timed([sys.executable, "-c", "pass"], runs)
    print(f"bare interpreter start: {bare * 1000:.0f} ms (median of {runs})")
    rows = [("harness --help", [sys.executable, "-m", "harness", "--help"], 0.150)]
    rows += [
        (f"{v}: first git call", [sys.executable, "-c", FIRST_GIT.format(verb=v)], 0.250)
        for v in ("fidelity", "compare", "shape", "lanes")
    ]
    for name, argv, target in rows:
        t = timed(argv, runs)
        print(
            f"{name:28s} {t * 1000:6.0f} ms  {t / bare:5.1f}x bare  target {target * 1000:.0f} ms "
            f"{'met' if t <= target else 'NOT met'}"
        )


if __name__ == "__main__":
    main()
