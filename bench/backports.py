"""Benchmark: `harness backports` against a plain-git baseline, measured in the same run.

    python bench/backports.py                 # generated: 600 source commits, 3 releases
    python bench/backports.py --commits 2000  # a bigger generated history
    python bench/backports.py --repo PATH --source main --release A --release B …   # a real one

The generated repository (one `git fast-import` stream) has a source branch whose commits each
change one line of one of 50 files (every other one a "Fix …"), and three releases forked at 1/6,
2/5 and 2/3 of it, each carrying `cherry-pick -x` copies of some of the fixes after its fork (a
few with a changed line, so their patch ids differ) and a release commit of its own.

The baseline is what a release manager's script does with git alone, per release: `git cherry
RELEASE SOURCE FORK` (patch-id equivalence of every source commit since the fork) and one `git
log` of the release's `(cherry picked from commit …)` trailers — no trial picks, no n/a, no
adapted picks. Ratios use wall time and CPU time (children's user+sys; steadier on a busy
machine). Not part of the pytest run.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FILES, LINES = 50, 40


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def generate(path: Path, commits: int) -> list[str]:
    """Write the repository; returns the release branch names."""
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
    main = {f: [f"line {f} {i}\n" for i in range(LINES)] for f in range(FILES)}
    out: list[bytes] = []
    mark = 0
    t = 1_700_000_000

    def commit(branch: str, msg: str, files: dict[int, list[str]], parent: int | None) -> int:
        nonlocal mark, t
        mark += 1
        t += 60
        who = f"Bench <b@example.com> {t} +0000"
        data = msg.encode()
        out.append(f"commit refs/heads/{branch}\nmark :{mark}\n".encode())
        out.append(f"author {who}\ncommitter {who}\ndata {len(data)}\n".encode() + data + b"\n")
        if parent is not None:
            out.append(f"from :{parent}\n".encode())
        for f, lines in files.items():
            blob = "".join(lines).encode()
            out.append(f"M 100644 inline src/f{f}.py\ndata {len(blob)}\n".encode() + blob + b"\n")
        return mark

    head = commit("main", "base", main, None)
    forks = {commits // 6: "rel-1", (commits * 2) // 5: "rel-2", (commits * 2) // 3: "rel-3"}
    released: dict[str, tuple[int, dict[int, list[str]], int]] = {}  # name → (fork mark, files, i)
    source_marks: list[tuple[int, int, int, str]] = []  # (mark, file, line, new text)
    for i in range(1, commits + 1):
        f, ln = i % FILES, (i // FILES) % LINES
        main[f] = main[f][:ln] + [f"value = {i}  # changed by {i}\n"] + main[f][ln + 1 :]
        subject = f"Fix case {i}" if i % 2 else f"Refactor part {i}"
        head = commit("main", subject + "\n", {f: main[f]}, head)
        source_marks.append((head, f, ln, main[f][ln]))
        if i in forks:
            released[forks[i]] = (head, {k: list(v) for k, v in main.items()}, i)
    marks = path / "marks"

    def run(stream: bytes, *extra: str) -> None:
        subprocess.run(
            ["git", "--git-dir", str(path), "fast-import", "--quiet", *extra],
            input=stream,
            check=True,
        )

    run(b"".join(out), f"--export-marks={marks}")
    sha = dict(line.split() for line in marks.read_text().splitlines())
    out.clear()
    for name, (fork_mark, files, at) in released.items():
        tip = fork_mark
        for n, (m, f, ln, text) in enumerate(source_marks[at:], at + 1):
            if n % 2 == 0 or n % 3 == 0:
                continue  # refactors are not picked; a third of the fixes neither
            new = text if n % 7 else text.replace("\n", "  # adapted\n")
            files[f] = files[f][:ln] + [new] + files[f][ln + 1 :]
            msg = f"Fix case {n}\n\n(cherry picked from commit {sha[f':{m}']})\n"
            tip = commit(name, msg, {f: files[f]}, tip)
        commit(name, f"Release {name}\n", {0: files[0] + ["# release\n"]}, tip)
    run(b"".join(out), f"--import-marks={marks}")
    return sorted(released)


def baseline(repo: str, source: str, releases: list[str]) -> None:
    for rel in releases:
        fork = subprocess.run(
            ["git", "--git-dir", repo, "merge-base", source, rel],
            capture_output=True,
            check=True,
            text=True,
        ).stdout.strip()
        subprocess.run(
            ["git", "--git-dir", repo, "cherry", rel, source, fork], capture_output=True, check=True
        )
        subprocess.run(
            ["git", "--git-dir", repo, "log", "--format=%H %b", rel, f"^{fork}"],
            capture_output=True,
            check=True,
        )


def harness(repo: str, source: str, releases: list[str]) -> None:
    cmd = [sys.executable, "-m", "harness", "backports", "--repo", repo, "--source", source]
    for r in releases:
        cmd += ["--release", r]
    subprocess.run([*cmd, "--format", "none", "--fail-on", "never"], check=True)


def measure(fn, *args) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    c0, t0 = _cpu(), time.perf_counter()
    fn(*args)
    return time.perf_counter() - t0, _cpu() - c0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo")
    ap.add_argument("--source", default="main")
    ap.add_argument("--release", action="append", default=[])
    ap.add_argument("--commits", type=int, default=600)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-backports-") as tmp:
        os.environ.setdefault("HARNESS_WORK_DIR", str(Path(tmp) / "work"))
        os.environ.setdefault("HARNESS_CACHE_DIR", str(Path(tmp) / "cache"))
        if a.repo:
            repo, releases = a.repo, a.release
        else:
            repo = str(Path(tmp) / "repo.git")
            releases = generate(Path(repo), a.commits)
        runs = []
        for _ in range(a.repeat):
            hw, hc = measure(harness, repo, a.source, releases)
            bw, bc = measure(baseline, repo, a.source, releases)
            runs.append((hw, hc, bw, bc))
        hw, hc, bw, bc = (min(x[i] for x in runs) for i in range(4))
        what = a.repo or f"generated: {a.commits} source commits"
        print(f"{what}; releases: {', '.join(releases)}; best of {a.repeat}")
        print(f"harness backports: {hw:.2f} s wall, {hc:.2f} s cpu")
        print(f"plain git (git cherry + trailer log per release): {bw:.2f} s wall, {bc:.2f} s cpu")
        print(f"ratio harness/baseline: {hw / bw:.1f}x wall, {hc / max(bc, 1e-6):.1f}x cpu")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
