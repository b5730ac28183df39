"""Benchmark: `harness fidelity` with the history index, warm and after one new pick, against the
cold run of the same range in the same run.

    python bench/index.py [--repeat 5]          # the named real ranges and the generated 20k/300
    python bench/index.py --only pytest         # one of them (pytest, ipython, 20k)

Each repository is cloned (``git clone --mirror``) into a temporary folder first: the fetched
mirrors are never written. In the clone, one new pick is made with plumbing: a recent source
commit whose files are the same at its parent and at HEAD has its blobs written over HEAD's tree
(a temporary index file), committed on HEAD without a trailer (so it is found by content), at
``refs/heads/bench-pick``. Sides, each run ``--repeat`` times, interleaved, medians compared:

  no index   ``--no-cache``: what every run cost before the index
  cold       an empty cache: the index is built and written
  warm       the same range again on the cache the cold run left
  new pick   BASE..bench-pick on a copy of that warm cache: one pick more to judge
  history kept  the same range, its whole answer dropped: history, greps, diffs and the per-pick
             memos from the index

The harness writes its index from a process forked once the report is out: the bench adopts it
(Linux's child subreaper), waits for it after each timed run (untimed: the user does not wait for
it) and counts its CPU time with the run's; its median wall time after the run is printed.

Prints the ratios warm/cold (goal <= 0.1) and new pick/cold (goal <= 0.2), cold/no index (what
building the index costs), and that the JSON reports are the same bytes (command line aside)
with and without the index. Not part of the pytest run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fidelity import (  # noqa: E402
    adopt_writers,
    baseline,
    bytecode_env,
    generate,
    mirror_repo,
    real_range,
    reap_writers,
)

TARGETS = {
    "pytest": ("pytest-dev/pytest", "main..8.0.x", "main"),
    "ipython": ("ipython/ipython", "merge-base:main:8.x..8.x", "main"),
}


def _git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(repo), *args],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    ).stdout


def add_pick(repo: Path, head: str, source: str, tmp: Path) -> str:
    """Commit, on ``head``, a copy of the newest source commit (of the last 400, not a merge) whose
    files are unchanged between its parent and ``head`` (else a commit adding a file of its own);
    returns the new commit."""
    candidates = _git(repo, "rev-list", "--no-merges", "--max-count=400", source, f"^{head}")
    for sha in candidates.split():
        files = [
            f
            for f in _git(repo, "diff-tree", "--no-commit-id", "--name-only", "-r", sha).split("\n")
            if f
        ]
        if not files or len(files) > 5:
            continue
        same = subprocess.run(
            ["git", "--git-dir", str(repo), "diff", "--quiet", f"{sha}^", head, "--", *files]
        )
        if same.returncode != 0:
            continue
        env = {"GIT_INDEX_FILE": str(tmp / "bench-index")}
        _git(repo, "read-tree", head, env=env)
        for line in _git(repo, "ls-tree", "-r", sha, "--", *files).splitlines():
            meta, path = line.split("\t", 1)
            mode, _, blob = meta.split()
            _git(repo, "update-index", "--add", "--cacheinfo", f"{mode},{blob},{path}", env=env)
        for path in files:  # a file the source deleted
            if not _git(repo, "ls-tree", sha, "--", path).strip():
                _git(repo, "update-index", "--force-remove", path, env=env)
        tree = _git(repo, "write-tree", env=env).strip()
        subject = _git(repo, "log", "-1", "--format=%s", sha).strip()
        new = _git(
            repo,
            "commit-tree",
            tree,
            "-p",
            head,
            "-m",
            f"[backport] {subject}",
            env={
                "GIT_AUTHOR_DATE": _git(
                    repo, "log", "-1", "--format=%ad", "--date=raw", sha
                ).strip(),
                "GIT_COMMITTER_DATE": "2030-01-01T00:00:00Z",
            },
        ).strip()
        _git(repo, "update-ref", "refs/heads/bench-pick", new)
        return new
    # None applies cleanly (a generated history reuses every file): a commit of its own, which
    # the content search looks for on the whole history and finds no source for.
    env = {"GIT_INDEX_FILE": str(tmp / "bench-index")}
    _git(repo, "read-tree", head, env=env)
    blob = subprocess.run(
        ["git", "--git-dir", str(repo), "hash-object", "-w", "--stdin"],
        input="a line of its own\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    _git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},bench_new.txt", env=env)
    tree = _git(repo, "write-tree", env=env).strip()
    new = _git(repo, "commit-tree", tree, "-p", head, "-m", "Add a file of its own").strip()
    _git(repo, "update-ref", "refs/heads/bench-pick", new)
    return new


CPU: dict[str, list[float]] = {}  # side → CPU seconds (user + sys) of each run, git included
TAIL: dict[str, list[float]] = {}  # side → seconds its index writer went on after the run ended


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(
    repo: Path,
    rng: str,
    source: str,
    cache: Path | None,
    out: Path,
    env: dict[str, str],
    side: str = "",
) -> float:
    cmd = [
        sys.executable,
        "-m",
        "harness",
        "fidelity",
        rng,
        "--source",
        source,
        "--repo",
        str(repo),
    ]
    cmd += ["--format", "json", "--output", str(out), "--fail-on", "never"]
    if cache is None:
        cmd.append("--no-cache")
    else:
        env = {**env, "HARNESS_CACHE_DIR": str(cache)}
    t0, c0 = time.perf_counter(), _child_cpu()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    took = time.perf_counter() - t0
    # The index's detached writer (adopted: ``adopt_writers``) ends before the next timed run; its
    # CPU time is the run's, its wall time after the run is not waited for by the user.
    TAIL.setdefault(side, []).append(reap_writers())
    CPU.setdefault(side, []).append(_child_cpu() - c0)
    if proc.returncode != 0:
        raise SystemExit(f"harness failed ({proc.returncode}): {proc.stderr.decode().strip()}")
    return took


def _body(path: Path) -> str:
    doc = json.loads(path.read_text())
    doc.pop("command", None)
    doc.pop("generated", None)
    doc.pop("date", None)
    return json.dumps(doc, sort_keys=True)


def _spread(xs: list[float]) -> str:
    return f"{min(xs):.3f} / {statistics.median(xs):.3f} / {max(xs):.3f}"


def measure(name: str, repo: Path, rng: str, source: str, repeat: int, tmp: Path) -> None:
    env = bytecode_env(tmp)
    base, head = rng.split("..")
    new = add_pick(repo, head, source, tmp)
    picked = f"{base}..{new}"
    sides = ("no index", "cold", "warm", "new pick", "history kept", "dict")
    times: dict[str, list[float]] = {k: [] for k in sides}
    same = True
    for i in range(repeat):
        cache = tmp / f"cache-{i}"
        if i == 0:
            CPU.clear()
        times["no index"].append(run(repo, rng, source, None, tmp / "plain.json", env, "no index"))
        times["cold"].append(run(repo, rng, source, cache, tmp / "cold.json", env, "cold"))
        snapshot = tmp / f"warm-{i}"
        shutil.copytree(cache, snapshot)
        times["warm"].append(run(repo, rng, source, cache, tmp / "warm.json", env, "warm"))
        times["new pick"].append(
            run(repo, picked, source, snapshot, tmp / "new.json", env, "new pick")
        )
        run(repo, picked, source, None, tmp / "new-plain.json", env)
        # The same range, its answer dropped: history, greps, diffs and memos from the index.
        for folder in (cache / "history").iterdir():
            if folder.is_dir():
                shutil.rmtree(folder / "results", ignore_errors=True)
        kept = run(repo, rng, source, cache, tmp / "kept.json", env, "history kept")
        times["history kept"].append(kept)
        same &= _body(tmp / "kept.json") == _body(tmp / "plain.json")
        t0, c0 = time.perf_counter(), _child_cpu()
        baseline(repo, rng, source, "dict")  # a reviewer's one-log dictionary script
        times["dict"].append(time.perf_counter() - t0)
        CPU.setdefault("dict", []).append(_child_cpu() - c0)
        same &= _body(tmp / "plain.json") == _body(tmp / "cold.json") == _body(tmp / "warm.json")
        same &= _body(tmp / "new.json") == _body(tmp / "new-plain.json")
        shutil.rmtree(snapshot)
    med = {k: statistics.median(v) for k, v in times.items()}
    size = sum(f.stat().st_size for f in (tmp / "cache-0").rglob("*") if f.is_file())
    print(f"\n{name}: {rng} (source {source}), {repeat} run(s) each, medians")
    cpu = {k: statistics.median(CPU[k]) for k in times}
    for k, v in med.items():
        runs = ", ".join(f"{x:.2f}" for x in times[k])
        print(f"  {k:9} {v:6.2f} s wall ({runs}), {cpu[k]:5.2f} s cpu")
    cold, ccold = med["cold"], cpu["cold"]
    print(
        f"  warm / cold      {med['warm'] / cold:5.3f} wall  {cpu['warm'] / ccold:5.3f} cpu   goal <= 0.1"
    )
    print(
        f"  new pick / cold  {med['new pick'] / cold:5.3f} wall  {cpu['new pick'] / ccold:5.3f} cpu"
        "   goal <= 0.2"
    )
    print(
        f"  cold / no index  {cold / med['no index']:5.3f} wall  {ccold / cpu['no index']:5.3f} cpu"
        "   (building and writing the index)"
    )
    print(
        f"  history kept / dict  {med['history kept'] / med['dict']:5.3f} wall"
        f"   cold / dict  {cold / med['dict']:5.3f} wall   (20k/300 goal <= 0.8)"
    )
    for k in ("warm", "new pick", "history kept"):
        ratios = [a / b for a, b in zip(times[k], times["cold"], strict=True)]
        cratios = [a / b for a, b in zip(CPU[k], CPU["cold"], strict=True)]
        print(
            f"  {k} / cold per pair, min / median / max of {len(ratios)}: "
            f"{_spread(ratios)} wall, {_spread(cratios)} cpu"
        )
    for k in ("cold", "history kept"):
        ratios = [a / b for a, b in zip(times[k], times["dict"], strict=True)]
        print(f"  {k} / dict per pair, min / median / max: {_spread(ratios)} wall")
    tails = ", ".join(
        f"{k} {statistics.median(TAIL[k]):.2f} s"
        for k in ("cold", "warm", "new pick")
        if TAIL.get(k)
    )
    print(f"  index writer after the run (not waited for; its CPU counted above): {tails}")
    print(f"  index on disk    {size / 2**20:.1f} MiB")
    print(f"  reports with and without the index: {'the same bytes' if same else 'DIFFER'}")
    new_doc = json.loads((tmp / "new.json").read_text())
    picks = [p for s in new_doc.get("sections", []) for p in s.get("data", {}).get("picks", [])]
    judged = [p for p in picks if p.get("pick") == new]
    if judged:
        print(f"  new pick judged: {judged[0].get('status')} via {judged[0].get('source_via')}")


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", choices=[*TARGETS, "20k"])
    args = ap.parse_args()
    adopt_writers()
    with tempfile.TemporaryDirectory(prefix="harness-bench-index-") as t:
        tmp = Path(t)
        for name, (project, rng, source) in TARGETS.items():
            if args.only and args.only != name:
                continue
            mirror = mirror_repo(project)
            if mirror is None:
                print(f"{name}: {project} not fetched: skipped")
                continue
            clone = tmp / name / "repo.git"
            clone.parent.mkdir()
            subprocess.run(["git", "clone", "-q", "--mirror", str(mirror), str(clone)], check=True)
            measure(name, clone, real_range(clone, rng), source, args.repeat, tmp / name)
        if args.only in (None, "20k"):
            where = tmp / "20k"
            rng, _ = generate(where / "repo", 20000, 300)
            measure("generated 20k/300", where / "repo", rng, "main", args.repeat, where)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
