"""`harness compare` on the demo repository, cold (empty cache, no trees) and warm, as a ratio.

    python bench/compare.py [--runs 3]
    python bench/compare.py --repo DIR --range BASE..HEAD --source REF [--runs 5]

The second form times ``compare BASE..HEAD --source REF --no-tests`` on a fetched repository (only
read: compare never writes to the repository it reviews), e.g. pytest's ``main..8.0.x``. The
harness run is ``python -m harness`` from the current folder: run the bench from outside a checkout
(``cd /tmp && python …/bench/compare.py``) for ``PYTHONPATH`` to choose the code measured.

Cold: a fresh cache and tree folder each run. Warm: the same command again with both kept. The
ratio warm/cold is the issue-13 target (<= 10 %); times are medians of ``--runs`` runs, printed,
never asserted. Peak memory (max RSS of the harness process) is printed for both.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, int]:
    """Wall seconds and the child's peak RSS (KiB) of one harness run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run(
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    took = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"bench: {' '.join(cmd)} exited {proc.returncode}: {proc.stderr[-500:]}")
    return took, max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--repo", help="a fetched repository instead of the demo")
    ap.add_argument("--range", help="BASE..HEAD of --repo")
    ap.add_argument("--source", help="the branch the picks came from (--repo)")
    args = ap.parse_args()
    runs = args.runs
    if args.repo and not (args.range and args.source):
        sys.exit("bench: --repo needs --range and --source")
    with tempfile.TemporaryDirectory(prefix="bench-compare-") as tmp:
        t = Path(tmp)
        sys.path.insert(0, str(ROOT))
        what = f"{args.range} of {args.repo}" if args.repo else "the demo"
        if args.repo:
            cmd = [sys.executable, "-m", "harness", "compare", args.range, "--repo", args.repo]
            cmd += ["--source", args.source, "--no-tests", "--output-dir", str(t / "out")]
            cmd += ["--format", "none"]
        else:
            cmd = _demo_command(t)
        cold, warm, rss = [], [], []
        for i in range(runs):
            env = {
                **os.environ,
                "HARNESS_CACHE_DIR": str(t / f"cache{i}"),
                "HARNESS_WORK_DIR": str(t / f"trees{i}"),
                # Bytecode is cached as on a user's machine (some CI images turn it off), in a
                # folder of this run: "cold" means no harness cache and no trees.
                "PYTHONPYCACHEPREFIX": str(t / "pycache"),
            }
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            took, peak = run(cmd, env)
            cold.append(took)
            rss.append(peak)
            took, peak = run(cmd, env)
            warm.append(took)
        c, w = statistics.median(cold), statistics.median(warm)
        print(f"compare on {what}: cold {c:.2f} s, warm {w:.2f} s (medians of {runs})")
        target = "" if args.repo else f"  (target <= 0.10: {'met' if w / c <= 0.10 else 'NOT met'})"
        print(f"warm/cold = {w / c:.3f}{target}")  # (the target is the demo's, issue 13)
        print(f"peak RSS of one run: {max(rss) / 1024:.0f} MiB")


def _demo_command(t: Path) -> list[str]:
    """compare of the demo repository (built in ``t``) with its scenario."""
    from harness import demo

    repo = t / "repo"
    demo.build(repo)
    scenario = ROOT / "scenarios" / "demo.yaml"
    return [
        sys.executable,
        "-m",
        "harness",
        "compare",
        demo.REFS["base"],
        demo.REFS["head"],
        "--repo",
        str(repo),
        "--source",
        demo.REFS["source"],
        "--source-branch",
        demo.REFS["source_branch"],
        "--scenario",
        str(scenario),
        "--output-dir",
        str(t / "out"),
        "--format",
        "none",
    ]


if __name__ == "__main__":
    main()
