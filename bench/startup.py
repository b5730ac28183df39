"""Start-up cost: `harness --help` (console script and `python -m harness`), `harness` alone,
`harness compare --help` and the time to a verb's first git call, each timed in interleaved pairs
with a bare start of the same interpreter (`python -c pass`), so load on the machine hits both
sides of a pair alike. Printed per row: the median wall times, min/median/max of the per-pair
ratios of wall time and of CPU time (user + system: what load on the machine disturbs least), the
modules the row imports beyond the bare start, and the target (issue 42: `harness --help`
within 2x the bare start; issue 13: the first git call under 250 ms). Printed, never asserted.
The harness's bytecode is compiled once before the clock starts, as an installed package has it;
`--as-is` times the runs in the environment as it is (this image sets PYTHONDONTWRITEBYTECODE:
there, every run of a source checkout compiles the harness modules it imports).

    python bench/startup.py [--runs N] [--as-is]
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fidelity import bytecode_env  # noqa: E402

FIRST_GIT = (
    "import harness.cli, harness.commands.{verb}; from harness.git import GitRepo; "
    "GitRepo('.').resolve('HEAD')"
)
BARE = [sys.executable, "-c", "pass"]
HELP_RATIO = 2.0  # issue 42: `harness --help` within 2x the bare interpreter start
FIRST_GIT_S = 0.250  # issue 13


def once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU time (user + system) of one run of ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # (the child is reaped: counted here)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


Timing = tuple[float, float]


def pairs(argv: list[str], runs: int, env: dict[str, str]) -> tuple[list[Timing], list[Timing]]:
    """``runs`` interleaved (bare, argv) timings, the order flipped every other pair."""
    bare, cmd = [], []
    once(BARE, env)  # (bytecode written, files in the page cache: no pair pays for that)
    once(argv, env)
    for i in range(runs):
        if i % 2:
            cmd.append(once(argv, env))
            bare.append(once(BARE, env))
        else:
            bare.append(once(BARE, env))
            cmd.append(once(argv, env))
    return bare, cmd


def imported(argv: list[str]) -> int:
    """How many modules ``argv`` imports (``-X importtime`` lines); for the console script, the
    interpreter it names runs the script's file."""
    if argv[0] != sys.executable:
        argv = [sys.executable, *argv]
    proc = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]],
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.stderr.count("import time:") - 1  # (the header line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=7, help="interleaved pairs per row (at least 5)")
    ap.add_argument(
        "--as-is", action="store_true", help="no bytecode compiled first: the environment as it is"
    )
    opts = ap.parse_args()
    runs = max(5, opts.runs)
    with tempfile.TemporaryDirectory(prefix="harness-bench-startup-") as tmp:
        env = dict(os.environ) if opts.as_is else bytecode_env(Path(tmp))
        print(
            "bytecode: "
            + ("as the environment has it" if opts.as_is else "compiled once, before the runs")
        )
        table(runs, env)


def table(runs: int, env: dict[str, str]) -> None:
    script = os.path.join(os.path.dirname(sys.executable), "harness")
    rows: list[tuple[str, list[str], str]] = []
    if os.path.exists(script):
        rows.append(("harness --help", [script, "--help"], "help"))
    rows += [
        ("python -m harness --help", [sys.executable, "-m", "harness", "--help"], "help"),
        ("python -m harness", [sys.executable, "-m", "harness"], ""),
        ("harness compare --help", [sys.executable, "-m", "harness", "compare", "--help"], ""),
    ]
    rows += [
        (f"{v}: first git call", [sys.executable, "-c", FIRST_GIT.format(verb=v)], "git")
        for v in ("fidelity", "compare", "shape", "lanes")
    ]
    floor = imported(BARE)
    print(f"{runs} interleaved pairs with `python -c pass` ({floor} modules) per row")
    print(
        f"{'':26s} {'median':>6s} {'bare':>5s}  {'wall ratio min/med/max':>22s}  "
        f"{'cpu ratio min/med/max':>21s}  {'+modules':>8s}  target"
    )
    for name, argv, kind in rows:
        bare, cmd = pairs(argv, runs, env)
        ratios = sorted(c[0] / b[0] for b, c in zip(bare, cmd, strict=True))
        cpu = sorted(c[1] / b[1] for b, c in zip(bare, cmd, strict=True))
        med = statistics.median(c[0] for c in cmd)
        ratio = statistics.median(ratios)
        target = ""
        if kind == "help":
            target = f"<= {HELP_RATIO:.1f}x {'met' if ratio <= HELP_RATIO else 'NOT met'}"
        elif kind == "git":
            target = f"< {FIRST_GIT_S * 1000:.0f} ms {'met' if med < FIRST_GIT_S else 'NOT met'}"
        print(
            f"{name:26s} {med * 1000:4.0f}ms {statistics.median(b[0] for b in bare) * 1000:3.0f}ms  "
            f"{ratios[0]:8.2f}/{ratio:5.2f}/{ratios[-1]:5.2f}x  "
            f"{cpu[0]:7.2f}/{statistics.median(cpu):5.2f}/{cpu[-1]:5.2f}x  "
            f"{imported(argv) - floor:8d}  {target}"
        )


if __name__ == "__main__":
    main()
