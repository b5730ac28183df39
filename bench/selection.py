"""Benchmark: L lanes in ONE collection pass vs L separate ``pytest --collect-only -m`` runs.

Generates a suite of ≥ 5,000 tests with markers, then measures in the same run:
  baseline  one plain ``pytest --collect-only -q`` (no plugin, no -m)
  one-pass  ``harness.checks.tests_as_evidence.selection.collect_dir`` with every lane (target ≤ 1.3× baseline)
  separate  one ``pytest --collect-only -q -m EXPR`` per lane
and checks that both ways give the same count per lane. Usage: python bench/selection.py [TESTS] [LANES]
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.checks.tests_as_evidence.pytest_run import pytest_env  # noqa: E402
from harness.checks.tests_as_evidence.selection import Lane, collect_dir  # noqa: E402

MARKERS = ["slow", "gpu", "net", "integration", "flaky"]
LANE_EXPRS = [
    "not slow and not gpu",
    "gpu",
    "slow",
    "integration and not net",
    "net or flaky",
    "not integration",
    "slow and gpu",
    "not (slow or gpu or net)",
]


def make_suite(root: Path, n_tests: int, per_file: int = 50) -> None:
    (root / "tests").mkdir(parents=True)
    (root / "pytest.ini").write_text(
        "[pytest]\nmarkers =\n" + "".join(f"    {m}: {m}\n" for m in MARKERS)
    )
    for f in range(n_tests // per_file):
        lines = ["import pytest", ""]
        for t in range(per_file):
            k = f * per_file + t
            marks = [m for i, m in enumerate(MARKERS) if (k >> i) % 3 == 0]
            lines += [f"@pytest.mark.{m}" for m in marks]
            lines += [f"def test_{t}():", "    pass", ""]
        (root / "tests" / f"test_gen_{f:04d}.py").write_text("\n".join(lines))


def timed(argv: list[str], cwd: Path) -> tuple[float, str]:
    start = time.monotonic()
    proc = subprocess.run(argv, cwd=str(cwd), env=pytest_env(), capture_output=True, text=True)
    return time.monotonic() - start, proc.stdout


def selected(out: str) -> int:
    m = re.search(r"(\d+)/(\d+) tests? collected", out) or re.search(r"(\d+) tests? collected", out)
    if not m:
        raise SystemExit(f"cannot read a count from pytest's output: {out[-300:]}")
    return int(m.group(1))


def main() -> int:
    n_tests = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    n_lanes = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    lanes = [Lane(f"lane{i}", LANE_EXPRS[i % len(LANE_EXPRS)]) for i in range(n_lanes)]
    with tempfile.TemporaryDirectory(prefix="bench-selection-") as tmp:
        root = Path(tmp)
        make_suite(root, n_tests)
        base = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
        timed(base, root)  # warm the file system cache
        t_base, out = timed(base, root)
        total = selected(out)
        start = time.monotonic()
        col = collect_dir(root, lanes)
        t_one = time.monotonic() - start
        t_sep = 0.0
        for lane in lanes:
            dt, out = timed(base + ["-m", lane.expr], root)
            t_sep += dt
            if selected(out) != col.counts[lane.name]:
                raise SystemExit(
                    f"{lane.name}: -m gives {selected(out)}, one pass gives {col.counts[lane.name]}"
                )
    assert col.total == total, (col.total, total)
    print(f"suite: {total} tests, {n_lanes} lanes; counts agree with separate -m runs")
    print(f"baseline (one plain collection): {t_base:.2f}s")
    print(
        f"one pass, all lanes:             {t_one:.2f}s  = {t_one / t_base:.2f}x baseline (target <= 1.30x)"
    )
    print(
        f"{n_lanes} separate -m collections:     {t_sep:.2f}s  = {t_sep / t_base:.2f}x baseline, "
        f"{t_sep / t_one:.2f}x the one pass"
    )
    return 0 if t_one / t_base <= 1.3 else 1


if __name__ == "__main__":
    raise SystemExit(main())
