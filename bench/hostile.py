"""The hostile-input corpus out of process: every case of tests/hardening/test_hostile_inputs.py run
as a real ``python -m harness`` (its own signal handlers, exit path and interpreter shutdown), each
judged on the promise — exit 2, one line on stderr, nothing on stdout, nothing written (working
folder, input folder, repository folders, work area's run folders), the repository unchanged.
Prints the figure that docs/security.md records; never asserts.

    python bench/hostile.py [--jobs N] [--only SUBSTRING]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "hardening" / "test_hostile_inputs.py"


def _corpus():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("hostile_corpus", CORPUS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _listing(root: Path) -> list[tuple[str, int]]:
    if not root.exists():
        return []
    return sorted(
        (str(p.relative_to(root)), p.stat().st_size if p.is_file() else -1) for p in root.rglob("*")
    )


def judge(
    corpus, world: dict, scratch: Path, case: tuple[str, list[str], str, dict[str, str]]
) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """('kept' | why not, the case's name)."""
    name, argv, says, extra = case
    home = scratch / name[:80]
    cwd = home / "cwd"
    cwd.mkdir(parents=True)
    work = home / "work"
    env = {
        **os.environ,
        "HARNESS_WORK_DIR": str(work),
        "HARNESS_CACHE_DIR": str(home / "cache"),
        "XDG_CACHE_HOME": str(home / "xdg"),
        "HARNESS_PROGRESS": "plain",
    }
    for key, value in extra.items():
        env[key] = value.replace("{repo}", str(world["repo"]))
    args = [a.replace("{repo}", str(world["repo"])).replace("{in}", str(world["in"])) for a in argv]
    before = (world["builder"].snapshot(), _listing(world["in"]), _listing(world["repo"]))
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "harness", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    except subprocess.TimeoutExpired:
        return "ran past 120 s", name
    except OSError as exc:  # an argument over the kernel's limit (the 60000-deep --params)
        return f"skipped: {exc.strerror}", name
    after = (world["builder"].snapshot(), _listing(world["in"]), _listing(world["repo"]))
    if proc.returncode != 2:
        return f"exit {proc.returncode}", name
    if proc.stderr.count("\n") != 1 or not proc.stderr.endswith("\n"):
        return f"{proc.stderr.count(chr(10))} stderr lines", name
    if "Traceback" in proc.stderr or says not in proc.stderr:
        return "unexpected message", name
    if proc.stdout:
        return "wrote to stdout", name
    if list(cwd.iterdir()) or (home / "xdg").exists():
        return "wrote into the working folder or the cache", name
    runs = work / "runs"
    if runs.exists() and list(runs.iterdir()):
        return "left a run folder", name
    if after != before:
        return "changed the repository or the inputs", name
    return "kept", name


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    # More than one job: the cases share the repository, whose snapshot (``git status`` refreshes
    # the index) then changes under a neighbour and is blamed on it.
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--only", default="")
    opts = ap.parse_args()
    corpus = _corpus()
    cases = [c for c in corpus.CASES if opts.only in c[0]]
    with tempfile.TemporaryDirectory(prefix="harness-hostile-") as tmp:
        world = corpus.build_world(Path(tmp) / "world")
        scratch = Path(tmp) / "cases"
        start = time.perf_counter()
        with ThreadPoolExecutor(opts.jobs) as pool:
            verdicts = list(pool.map(lambda c: judge(corpus, world, scratch, c), cases))
        took = time.perf_counter() - start
    skipped = [(why, name) for why, name in verdicts if why.startswith("skipped")]
    broken = [(why, name) for why, name in verdicts if why != "kept" and (why, name) not in skipped]
    for why, name in skipped:
        print(f"SKIPPED {name}: {why[len('skipped: ') :]} (runs in the suite, in process)")
    for why, name in broken:
        print(f"BROKEN {name}: {why}")
    verbs = sorted({c[1][0] for c in cases})
    ran = len(cases) - len(skipped)
    print(
        f"{ran} hostile cases over {len(verbs)} verbs, out of process: "
        f"{ran - len(broken)} kept the promise, {len(broken)} broke it "
        f"({len(skipped)} skipped, {took:.0f} s)"
    )


if __name__ == "__main__":
    main()
