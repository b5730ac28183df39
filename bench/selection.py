"""Benchmark: L lanes in ONE collection pass vs L separate ``pytest --collect-only -m`` runs.

Generates a suite of ≥ 5,000 tests with markers, then measures in the same run:
  baseline  one plain ``pytest --collect-only -q`` (no plugin, no -m)
  one-pass  ``harness.checks.tests_as_evidence.selection.collect_dir`` with every lane (target ≤ 1.3× baseline)
  cold      ``collect_ref`` on a commit of that suite with a fresh cache: the export of the tree, the
            interpreter's description and the collection (target ≤ 1.3× baseline)
  separate  one ``pytest --collect-only -q -m EXPR`` per lane
and checks that both ways give the same count per lane. ROUNDS (5 by default) interleaved rounds,
each run once per round (a shared machine's load moves between them): min / median / max wall time
of each, and of each round's time over the same round's baseline.
Usage: python bench/selection.py [TESTS] [LANES] [ROUNDS]
       python bench/selection.py --repo DIR --ref REF [ROUNDS]   (a real project: the baseline is a
       plain collection of the same exported tree, the project's own options kept; one pass, cold
       ``collect_ref`` and ``harness select`` end to end against it)
"""

from __future__ import annotations

import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.checks.tests_as_evidence.pytest_run import pytest_env, tree_paths  # noqa: E402
from harness.checks.tests_as_evidence.selection import Lane, collect_dir, collect_ref  # noqa: E402
from harness.git.repo import GitRepo  # noqa: E402
from harness.git.tree import export_tree  # noqa: E402
from harness.infra.cache import Cache  # noqa: E402

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
    env = pytest_env(tree_paths(cwd))
    proc = subprocess.run(argv, cwd=str(cwd), env=env, capture_output=True, text=True)
    return time.monotonic() - start, proc.stdout


CPU: dict[str, float] = {}  # median CPU seconds of the last medians() call, by run name
WALL: dict[
    str, list[float]
] = {}  # every wall time of the last medians() call, by run name, in order


def _cpu() -> float:
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def medians(rounds: int, runs: dict[str, Callable[[], float]]) -> dict[str, float]:
    """Each run ``rounds`` times, interleaved; the median wall time of each (every time in ``WALL``,
    and in ``CPU`` the median CPU time, this process and its children: on a shared machine the wall
    time follows the others' load, the CPU time much less)."""
    seen: dict[str, list[float]] = {k: [] for k in runs}
    cpu: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            before = _cpu()
            seen[name].append(run())
            cpu[name].append(_cpu() - before)
    CPU.clear()
    CPU.update({k: statistics.median(v) for k, v in cpu.items()})
    WALL.clear()
    WALL.update(seen)
    return {k: statistics.median(v) for k, v in seen.items()}


def spread(values: list[float], unit: str = "s") -> str:
    """``min / median / max`` of ``values``."""
    return " / ".join(f"{f(values):.2f}{unit}" for f in (min, statistics.median, max))


def pair_ratios(name: str) -> list[float]:
    """Each round's ``name`` time over the same round's baseline (the pairs of an interleaved run)."""
    return [t / b for t, b in zip(WALL[name], WALL["baseline"], strict=True)]


def fresh_interpreter_description() -> None:
    """Forget this process's memo of the interpreter's description, so each cold round describes it
    again as a new ``harness`` run does (the on-disk record lies in the fresh cache: absent too)."""
    from harness.envs import fingerprint

    clear = getattr(getattr(fingerprint, "_describe", None), "cache_clear", None)
    if clear is not None:
        clear()


def cold_collection(repo: GitRepo, ref: str, lanes: list[Lane]) -> float:
    """``collect_ref`` with an empty cache (interpreter description included): seconds."""
    fresh_interpreter_description()
    with tempfile.TemporaryDirectory(prefix="bench-cold-cache-") as cache:
        os.chmod(cache, 0o700)
        start = time.monotonic()
        col = collect_ref(repo, ref, lanes, cache=Cache(Path(cache), namespace="collections"))
        took = time.monotonic() - start
    if not col.pytest_version:
        raise SystemExit(f"collection at {ref} did not finish: {col.stderr_tail[-300:]}")
    return took


def cli_cold(repo_dir: str, ref: str) -> float:
    """``harness select`` end to end (interpreter start, imports, report) with an empty cache."""
    with tempfile.TemporaryDirectory(prefix="bench-cli-cache-") as cache:
        os.chmod(cache, 0o700)
        argv = [sys.executable, "-m", "harness", "select", "--repo", repo_dir, "--ref", ref]
        start = time.monotonic()
        subprocess.run(
            argv + ["--lane", "a=not slow", "--format", "none"],
            env={**os.environ, "HARNESS_CACHE_DIR": cache},
            capture_output=True,
            check=True,
        )
        return time.monotonic() - start


def real_project(repo_dir: str, ref: str, rounds: int) -> int:
    """One collection pass and a cold ``collect_ref`` of a real project's commit vs one plain
    collection of its exported tree, interleaved round by round."""
    repo = GitRepo(repo_dir)
    lanes = [Lane(f"lane{i}", e) for i, e in enumerate(["not slow", "slow or gpu"])]
    with tempfile.TemporaryDirectory(prefix="bench-selection-real-") as tmp:
        tree = Path(tmp) / "tree"
        export_tree(repo, repo.resolve(ref), tree)
        base = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
        timed(base, tree)  # warm the file system cache
        first = collect_dir(tree, lanes)
        if not first.pytest_version:
            raise SystemExit(f"collection at {ref} did not finish: {first.stderr_tail[-300:]}")

        def one_pass() -> float:
            start = time.monotonic()
            col = collect_dir(tree, lanes)
            took = time.monotonic() - start
            if (col.total, col.counts, col.per_file) != (first.total, first.counts, first.per_file):
                raise SystemExit("two collection passes of the same tree disagree")
            return took

        t = medians(
            rounds,
            {
                "baseline": lambda: timed(base, tree)[0],
                "one": one_pass,
                "cold": lambda: cold_collection(repo, ref, lanes),
                "cli": lambda: cli_cold(repo_dir, ref),
            },
        )
    print(
        f"{repo_dir} at {ref}: {first.total} tests, {rounds} interleaved rounds, min / median / max"
    )
    print(f"baseline (one plain collection): {spread(WALL['baseline'])}")
    for name, what in (
        ("one", "one collection pass, all lanes"),
        ("cold", "cold collect_ref, fresh cache "),
        ("cli", "harness select, cold, end to end"),
    ):
        print(
            f"{what}: {spread(WALL[name])}; per round x baseline {spread(pair_ratios(name), 'x')}"
            f"; median/median {t[name] / t['baseline']:.2f}x"
        )
    c = CPU
    print(
        f"CPU seconds (medians): baseline {c['baseline']:.2f}, one pass {c['one']:.2f} = "
        f"{c['one'] / c['baseline']:.2f}x, cold collect_ref {c['cold']:.2f} = "
        f"{c['cold'] / c['baseline']:.2f}x, harness select {c['cli']:.2f} = "
        f"{c['cli'] / c['baseline']:.2f}x  (target <= 1.30x)"
    )
    worst = max(statistics.median(pair_ratios(n)) for n in ("one", "cold"))
    return 0 if worst <= 1.3 else 1


def selected(out: str) -> int:
    m = re.search(r"(\d+)/(\d+) tests? collected", out) or re.search(r"(\d+) tests? collected", out)
    if not m:
        raise SystemExit(f"cannot read a count from pytest's output: {out[-300:]}")
    return int(m.group(1))


def main() -> int:
    if sys.argv[1:2] == ["--repo"]:
        return real_project(sys.argv[2], sys.argv[4], int(sys.argv[5]) if len(sys.argv) > 5 else 5)
    n_tests = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    n_lanes = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    lanes = [Lane(f"lane{i}", LANE_EXPRS[i % len(LANE_EXPRS)]) for i in range(n_lanes)]
    with tempfile.TemporaryDirectory(prefix="bench-selection-") as tmp:
        root = Path(tmp)
        make_suite(root, n_tests)
        base = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
        timed(base, root)  # warm the file system cache
        total = selected(timed(base, root)[1])
        (root / ".gitignore").write_text("__pycache__/\n")
        git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        subprocess.run(git + ["-C", str(root), "add", "-A"], check=True)
        subprocess.run(git + ["-C", str(root), "commit", "-qm", "suite"], check=True)
        repo = GitRepo(root)
        col = collect_dir(root, lanes)

        def one_pass() -> float:
            start = time.monotonic()
            collect_dir(root, lanes)
            return time.monotonic() - start

        t = medians(
            rounds,
            {
                "baseline": lambda: timed(base, root)[0],
                "one": one_pass,
                "cold": lambda: cold_collection(repo, "HEAD", lanes),
            },
        )
        t_base, t_one = t["baseline"], t["one"]
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
    print(f"baseline (one plain collection): {spread(WALL['baseline'])}  ({rounds} rounds)")
    for name, what in (
        ("one", "one pass, all lanes:            "),
        ("cold", "cold collect_ref, fresh cache:  "),
    ):
        print(
            f"{what}{spread(WALL[name])}; per round x baseline {spread(pair_ratios(name), 'x')}"
            f"; median/median {t[name] / t_base:.2f}x (target <= 1.30x)"
        )
    print(
        f"{n_lanes} separate -m collections:     {t_sep:.2f}s  = {t_sep / t_base:.2f}x baseline, "
        f"{t_sep / t_one:.2f}x the one pass"
    )
    c = CPU
    print(
        f"CPU seconds: baseline {c['baseline']:.2f}, one pass {c['one']:.2f} = "
        f"{c['one'] / c['baseline']:.2f}x, cold {c['cold']:.2f} = {c['cold'] / c['baseline']:.2f}x"
    )
    worst = max(
        min(statistics.median(pair_ratios("one")), c["one"] / c["baseline"]),
        min(statistics.median(pair_ratios("cold")), c["cold"] / c["baseline"]),
    )
    return 0 if worst <= 1.3 else 1


if __name__ == "__main__":
    raise SystemExit(main())
