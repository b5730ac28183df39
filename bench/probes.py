"""Probe engine benchmark: 4 columns × 8 rows, parallel vs sequential and warm vs cold, as ratios.

    python bench/probes.py [--row-seconds 0.05]

Builds a throwaway repository (4 refs, each a decoder variant), runs one python probe whose rows
each take ``--row-seconds`` (sleep, like a probe waiting on an engine) plus the real subprocess and
tree costs. Every ratio is measured against a baseline taken in the same run.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.checks.probe_table import probe_sections  # noqa: E402
from harness.git.repo import GitRepo  # noqa: E402
from harness.infra.cache import Cache  # noqa: E402
from harness.inputs.scenario import load_scenario  # noqa: E402
from harness.testing.repos import RepoBuilder  # noqa: E402

MOD = "import time\n\ndef f(n, pause):\n    time.sleep(pause)\n    return n * {k}\n"


def build(tmp: Path, row_seconds: float) -> tuple[GitRepo, object]:
    b = RepoBuilder(tmp / "repo")
    for k in range(4):
        b.commit(f"v{k}", {"m.py": MOD.format(k=k), "pad/data.txt": "x\n" * 2000})
        b.branch(f"v{k}")
    sc = tmp / "bench.yaml"
    refs = ", ".join(f"c{k}: v{k}" for k in range(4))
    sc.write_text(
        f"refs: {{{refs}}}\nprobes:\n  - id: p\n    kind: python\n    function: 'm:f'\n"
        f"    rows: {{n: [0, 1, 2, 3, 4, 5, 6, 7], pause: [{row_seconds}]}}\n"
    )
    return GitRepo(b.path), load_scenario(sc)


def timed(fn) -> float:  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--row-seconds", type=float, default=0.05)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="harness-bench-") as d:
        tmp = Path(d)
        os.environ["HARNESS_WORK_DIR"] = str(tmp / "trees")
        repo, scenario = build(tmp, args.row_seconds)
        off = Cache(tmp / "none", enabled=False)
        probe_sections(repo, scenario, cache=off)  # warm the interpreter fingerprint and OS caches
        seq = timed(lambda: probe_sections(repo, scenario, jobs=1, cache=off))
        par = timed(lambda: probe_sections(repo, scenario, jobs=4, cache=off))
        cache_root = tmp / "cache"
        cold = timed(lambda: probe_sections(repo, scenario, cache=Cache(cache_root)))
        warm_cache = Cache(cache_root)
        warm = timed(lambda: probe_sections(repo, scenario, cache=warm_cache))
    print(f"4 columns × 8 rows, {args.row_seconds:g}s per row, {os.cpu_count()} CPUs")
    print(f"sequential {seq:.2f}s · parallel {par:.2f}s · parallel/sequential = {par / seq:.2f}")
    print(
        f"cold {cold:.2f}s · warm {warm:.3f}s · warm/cold = {warm / cold:.3f} "
        f"({warm_cache.hits} hits, {warm_cache.misses} misses)"
    )
    ok = warm / cold <= 0.10
    print("warm ≤ 10% of cold:", "yes" if ok else "NO")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
