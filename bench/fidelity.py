"""Benchmark: `harness fidelity` against a plain-git baseline, measured in the same run.

    python bench/fidelity.py            # 20k source commits, 300 picks (a mix of statuses)
    python bench/fidelity.py --small    # 2k source commits, 30 picks: a quick smoke run
    python bench/fidelity.py --repo PATH --range BASE..HEAD --source REF   # a real repository
    python bench/fidelity.py --real     # the named real ranges below (skipped when not fetched)
    python bench/fidelity.py --growth   # 2k, 20k and 100k source commits: time and peak RSS

The generated repository is written by `git fast-import` (two processes). The baseline is what a
reviewer's script does per pick: find the source by subject, then `git show | git patch-id --stable`
for both sides. Finding by subject is timed two ways: a `git log --grep` per pick ("grep", the
literal script) and one `git log` of all subjects looked up in a dictionary ("dict", generous).
Every harness run is cold: it gets an empty cache of its own, so the history index is built and
written each time (``bench/index.py`` measures warm runs). Ratios use wall time and CPU time
(children's user+sys: steadier on a busy machine). Peak RSS is the harness process's own
(``RUSAGE_SELF`` at exit). The children's figure is printed beside it as an upper bound only:
Linux carries a process's high-water mark over ``fork``, so every git child reports at least what
the harness held when it was started. Real repositories are read from ``$HARNESS_MIRROR``
(default ``/work/.mirror``), one bare git directory per ``owner+name`` (or its ``repo`` folder).
Not part of the pytest run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

FILES, PRIMARY, SECONDARY = 200, 100, 20  # files × line slots; each main commit owns its own slot
KINDS = (
    ["identical"] * 12
    + ["whitespace-only"] * 2
    + ["adapted"] * 2
    + ["subset"] * 2
    + ["superset", "no-source"]
)


def _base_line(f: int, line: int) -> str:
    return f"v_{f}_{line} = compute({f}, {line})  # base"


def _new_line(f: int, line: int, i: int, kind: str = "identical") -> str:
    if kind == "whitespace-only":
        return f"v_{f}_{line}  =  compute({f},  {line} + {i})  # change {i}"
    if kind == "adapted":
        return f"v_{f}_{line} = compute({f}, {line} + {i} + 1)  # change {i}, adapted"
    return f"v_{f}_{line} = compute({f}, {line} + {i})  # change {i}"


def _slots(i: int) -> list[tuple[int, int]]:
    """The (file, line) slots main commit i changes: one primary, and a second on every 10th."""
    out = [(i % FILES, (i // FILES) % PRIMARY)]
    if i % 10 == 0:
        j = i // 10
        out.append(((j + 7) % FILES, PRIMARY + (j // FILES) % SECONDARY))
    return out


def _path(f: int) -> str:
    return f"src/mod_{f:03d}.py"


class Stream:
    """Writes a fast-import stream."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc, self.mark, self.t = proc, 0, 1_700_000_000

    def _w(self, s: str | bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(s.encode() if isinstance(s, str) else s)

    def _data(self, text: str) -> None:
        b = text.encode()
        self._w(f"data {len(b)}\n")
        self._w(b + b"\n")

    def commit(self, ref: str, msg: str, files: dict[str, str], parent: int | None) -> int:
        self.mark += 1
        self.t += 60
        self._w(f"commit {ref}\nmark :{self.mark}\n")
        self._w(f"author Bench <bench@example.com> {self.t} +0000\n")
        self._w(f"committer Bench <bench@example.com> {self.t} +0000\n")
        self._data(msg)
        if parent is not None:
            self._w(f"from :{parent}\n")
        for path, content in files.items():
            self._w(f"M 100644 inline {path}\n")
            self._data(content)
        return self.mark


def _fast_import(
    dest: Path, marks: Path, importing: bool
) -> tuple[subprocess.Popen[bytes], Stream]:
    args = ["git", "--git-dir", str(dest), "fast-import", "--quiet", f"--export-marks={marks}"]
    if importing:
        args.append(f"--import-marks={marks}")
    proc = subprocess.Popen(args, stdin=subprocess.PIPE)
    return proc, Stream(proc)


def _finish(proc: subprocess.Popen[bytes]) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    if proc.wait() != 0:
        raise SystemExit("fast-import failed")


def generate(dest: Path, n_source: int, n_picks: int) -> tuple[str, dict[str, int]]:
    """Create the repository (two fast-import processes: main, then release); returns (range, expected)."""
    subprocess.run(["git", "init", "-q", "--bare", str(dest)], check=True)
    marks = dest / "bench-marks"
    proc, st = _fast_import(dest, marks, False)
    main = {f: [_base_line(f, ln) for ln in range(PRIMARY + SECONDARY)] for f in range(FILES)}
    files = {_path(f): "\n".join(main[f]) + "\n" for f in range(FILES)}
    files["release_only.txt"] = "".join(f"release line {k}\n" for k in range(n_picks))
    root = st.commit("refs/heads/main", "initial", files, None)
    release = {f: list(lines) for f, lines in main.items()}
    rel_only = [f"release line {k}" for k in range(n_picks)]
    step = max(10, (n_source // n_picks) // 10 * 10)
    chosen: dict[int, tuple[int, str]] = {}
    for k in range(n_picks):
        kind = KINDS[k % len(KINDS)]
        chosen[k * step + (0 if kind == "subset" else 3)] = (k, kind)
    sources: dict[int, int] = {}
    prev = root
    for i in range(n_source):
        changed = {}
        for f, ln in _slots(i):
            main[f][ln] = _new_line(f, ln, i)
            changed[_path(f)] = "\n".join(main[f]) + "\n"
        prev = st.commit(
            "refs/heads/main", f"Change {i} in mod_{i % FILES} (#{10000 + i})", changed, prev
        )
        sources[i] = prev
    st._w(f"reset refs/heads/base\nfrom :{root}\n\n")
    _finish(proc)
    sha_of = dict(line.split(" ") for line in marks.read_text().split("\n") if line)
    proc, st = _fast_import(dest, marks, True)
    st.mark = max(int(m[1:]) for m in sha_of)
    prev = root
    expected: Counter[str] = Counter()
    for i in sorted(chosen):
        k, kind = chosen[i]
        expected[kind] += 1
        slots = _slots(i)
        subject = f"[release] Change {i} in mod_{i % FILES} (#{10000 + i}) (#{90000 + k})"
        if kind == "identical" and k % 20 == 0:  # trailer only
            subject = (
                f"Change {i} backported\n\n(cherry picked from commit {sha_of[f':{sources[i]}']})"
            )
        elif kind == "identical" and k % 20 == 1:  # neither number nor trailer: patch-id
            subject = f"Backport change {i}"
        if kind == "subset":
            slots = slots[:1]
        if kind == "no-source":
            slots = []
        changed = {}
        for f, ln in slots:
            release[f][ln] = _new_line(
                f, ln, i, kind if kind in ("whitespace-only", "adapted") else "identical"
            )
            changed[_path(f)] = "\n".join(release[f]) + "\n"
        if kind in ("superset", "no-source"):
            rel_only[k] = f"release line {k} changed on release only"
            changed["release_only.txt"] = "\n".join(rel_only) + "\n"
            if kind == "no-source":
                subject = f"Release chore {k}"
        prev = st.commit("refs/heads/release", subject, changed, prev)
    _finish(proc)
    marks.unlink()
    return "base..release", dict(expected)


def _child_cpu() -> float:
    """CPU seconds used by finished child processes (steadier than wall time on a busy machine)."""
    t = os.times()
    return t.children_user + t.children_system


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def _patch_id(repo: Path, sha: str) -> str:
    show = subprocess.Popen(["git", "--git-dir", str(repo), "show", sha], stdout=subprocess.PIPE)
    out = subprocess.run(
        ["git", "--git-dir", str(repo), "patch-id", "--stable"],
        stdin=show.stdout,
        capture_output=True,
        text=True,
    ).stdout
    assert show.stdout is not None
    show.stdout.close()
    show.wait()
    return out.split(" ")[0]


def _subject_key(subject: str) -> str:
    """A backport's subject as the original had it: no "[release]" tag, no trailing backport number."""
    key = re.sub(r"^\[[^\]]*\]\s*", "", subject)
    return re.sub(r"\s*\(#\d+\)$", "", key) if re.search(r"\(#\d+\)\s*\(#\d+\)$", key) else key


def baseline(repo: Path, rng: str, source: str, mode: str) -> Counter[str]:
    """Per pick: source by subject, then `git show | git patch-id --stable` on both sides.

    mode "grep": a `git log --grep` per pick (what a reviewer's script does); mode "dict": one
    `git log` of all subjects and a dictionary (a generous baseline).
    """
    base, head = rng.split("..")
    by_subject: dict[str, str] = {}
    if mode == "dict":
        for line in _git(repo, "log", "--format=%H%x00%s", source, f"^{head}").splitlines():
            sha, subj = line.split("\0", 1)
            by_subject.setdefault(subj, sha)
    verdict: Counter[str] = Counter()
    for line in _git(repo, "log", "--no-merges", "--format=%H%x00%s", rng).splitlines():
        sha, subj = line.split("\0", 1)
        key = _subject_key(subj)
        if mode == "dict":
            src = by_subject.get(key) or by_subject.get(subj)
        else:
            found = _git(
                repo, "log", "-F", f"--grep={key}", "--format=%H", "-n1", source, f"^{head}"
            ).split()
            src = found[0] if found else None
        if src is None:
            verdict["no source"] += 1
        else:
            verdict[
                "same patch-id" if _patch_id(repo, sha) == _patch_id(repo, src) else "differs"
            ] += 1
    return verdict


# Runs the harness in-process and, at exit, writes its own peak RSS and its git children's (KiB).
_RSS_WRAPPER = """import atexit, os, resource, runpy, sys
def _write():
    with open(os.environ["HARNESS_BENCH_RSS"], "w") as fh:
        fh.write(f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss} "
                 f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}")
atexit.register(_write)
sys.argv = ["harness", *sys.argv[1:]]
runpy.run_module("harness", run_name="__main__")
"""


def adopt_writers() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux's child subreaper): the
    history index's detached writer (harness/infra/detach.py) outlives the harness run that
    forked it; adopted, ``reap_writers`` waits for it between timed runs and its CPU time counts
    in RUSAGE_CHILDREN. False where the platform has no such thing (the writer is then init's)."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    return bool(libc.prctl(36, 1, 0, 0, 0) == 0)  # PR_SET_CHILD_SUBREAPER


def reap_writers() -> float:
    """Wait for every adopted writer to end (untimed by the caller: what a user's next run, some
    time later, would find written); the seconds waited."""
    t0 = time.perf_counter()
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return time.perf_counter() - t0


def bytecode_env(tmp: Path) -> dict[str, str]:
    """The environment for timed harness runs: bytecode compiled once into a folder of this run and
    read from there, as an installed package has it (some images set PYTHONDONTWRITEBYTECODE,
    which would otherwise make every run compile the harness's modules again: ~50 ms)."""
    prefix = tmp / "pycache"
    if not prefix.is_dir():
        package = Path(__file__).resolve().parent.parent / "harness"
        subprocess.run(
            [
                sys.executable,
                "-X",
                f"pycache_prefix={prefix}",
                "-m",
                "compileall",
                "-q",
                str(package),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(prefix)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def harness_run(
    repo: Path, rng: str, source: str, out: Path
) -> tuple[dict[str, object], tuple[int, int]]:
    """The report and the run's peak RSS in KiB: the harness process itself, and its children's
    (an upper bound: a child's mark starts from the parent's at fork)."""
    cmd = [
        sys.executable,
        "-c",
        _RSS_WRAPPER,
        "fidelity",
        rng,
        "--source",
        source,
        "--repo",
        str(repo),
        "--format",
        "json",
        "--output",
        str(out),
        "--fail-on",
        "never",
    ]
    rss_file = out.with_suffix(".rss")
    # A cold run: an empty cache of its own each time (the history index is built and written:
    # bench/index.py measures the warm runs).
    cache = tempfile.mkdtemp(prefix="cache-", dir=out.parent)
    env = {
        **bytecode_env(out.parent),
        "HARNESS_BENCH_RSS": str(rss_file),
        "HARNESS_CACHE_DIR": cache,
    }
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    reap_writers()  # the index's writer, before the next timed run
    if proc.returncode != 0:
        raise SystemExit(f"harness failed ({proc.returncode}): {proc.stderr.decode().strip()}")
    own, git = (int(x) for x in rss_file.read_text().split())
    return json.loads(out.read_text()), (own, git)


# Named real ranges: (repository, range, source, what it stands for). A base written
# "merge-base:A:B" is resolved with `git merge-base A B` first.
REAL_RANGES = (
    ("pytest-dev/pytest", "main..8.0.x", "main", "39 picks, a release range"),
    ("ipython/ipython", "merge-base:main:8.x..8.x", "main", "58 picks, content search"),
)
REAL_GOALS = {"pytest-dev/pytest": 1.0, "ipython/ipython": 1.5}


def mirror_repo(name: str) -> Path | None:
    """The fetched bare repository of ``owner/name``, or None."""
    root = Path(os.environ.get("HARNESS_MIRROR", "/work/.mirror")) / name.replace("/", "+")
    for cand in (root / "repo", root):
        if (cand / "HEAD").is_file() and (cand / "objects").is_dir():
            return cand
    return None


def real_range(repo: Path, rng: str) -> str:
    base, head = rng.split("..")
    if base.startswith("merge-base:"):
        _, a, b = base.split(":")
        base = _git(repo, "merge-base", a, b).strip()
    return f"{base}..{head}"


def measure(
    repo: Path, rng: str, source: str, modes: list[str], repeat: int, tmp: Path
) -> dict[str, object]:
    """Wall and CPU time of each side over ``repeat`` runs (sides interleaved): the best of each,
    and every run (``walls``, ``cpus``) for per-pair ratios."""
    wall: dict[str, list[float]] = {m: [] for m in ["harness", *modes]}
    cpu: dict[str, list[float]] = {m: [] for m in ["harness", *modes]}
    doc: dict[str, object] = {}
    rss = (0, 0)
    verdicts: dict[str, Counter[str]] = {}
    bytecode_env(tmp)  # compiled before the clock starts
    for _ in range(max(1, repeat)):
        for who in ["harness", *modes]:
            t0, c0 = time.perf_counter(), _child_cpu()
            if who == "harness":
                doc, kib = harness_run(repo, rng, source, tmp / "report.json")
                rss = (max(rss[0], kib[0]), max(rss[1], kib[1]))
            else:
                verdicts[who] = baseline(repo, rng, source, who)
            wall[who].append(time.perf_counter() - t0)
            cpu[who].append(_child_cpu() - c0)
    return {
        "wall": {k: min(v) for k, v in wall.items()},
        "cpu": {k: min(v) for k, v in cpu.items()},
        "walls": wall,
        "cpus": cpu,
        "doc": doc,
        "rss_mib": rss[0] / 1024,
        "git_rss_mib": rss[1] / 1024,
        "verdicts": verdicts,
    }


def spread(xs: list[float]) -> str:
    """min / median / max of ``xs``."""
    return f"{min(xs):.2f} / {statistics.median(xs):.2f} / {max(xs):.2f}"


def report(m: dict[str, object], modes: list[str], goal: str = "") -> None:
    doc, wall, cpu = m["doc"], m["wall"], m["cpu"]
    picks = doc["sections"][0]["data"]["picks"]  # type: ignore[index]
    got = Counter(p["status"] for p in picks)
    via = Counter(str(p["source_via"]) for p in picks)
    print(
        f"  picks: {len(picks)}; statuses: {dict(sorted(got.items()))}; via: {dict(sorted(via.items()))}"
    )
    hw, hc = wall["harness"], cpu["harness"]  # type: ignore[index]
    print(
        f"  harness fidelity: {hw:.2f}s wall, {hc:.2f}s cpu, peak RSS {m['rss_mib']:.0f} MiB "
        f"(children: {m['git_rss_mib']:.0f} MiB, an upper bound: a child starts from the "
        f"harness's own mark)"
    )
    for mode in modes:
        bw, bc = wall[mode], cpu[mode]  # type: ignore[index]
        print(
            f"  baseline [{mode}]: {bw:.2f}s wall, {bc:.2f}s cpu, verdicts "
            f"{dict(sorted(m['verdicts'][mode].items()))} -> harness/baseline "  # type: ignore[index]
            f"{hw / bw:.2f}x wall, {hc / bc:.2f}x cpu{goal if mode == modes[0] else ''}"
        )
        walls, cpus = m["walls"], m["cpus"]
        pairs = list(zip(walls["harness"], walls[mode], strict=True))  # type: ignore[index]
        cpairs = list(zip(cpus["harness"], cpus[mode], strict=True))  # type: ignore[index]
        print(
            f"    per pair (run i of each side), min / median / max of {len(pairs)}: "
            f"harness/{mode} {spread([h / b for h, b in pairs])}x wall, "
            f"{spread([h / b for h, b in cpairs])}x cpu; harness "
            f"{spread([h for h, _ in pairs])} s, {mode} {spread([b for _, b in pairs])} s"
        )


def run_real(modes: list[str], repeat: int, tmp: Path) -> None:
    for name, rng, source, what in REAL_RANGES:
        repo = mirror_repo(name)
        if repo is None:
            print(f"{name} {rng}: skipped, not fetched (set HARNESS_MIRROR)")
            continue
        resolved = real_range(repo, rng)
        print(f"{name} {rng} --source {source} ({what}):")
        goal = f" (goal <= {REAL_GOALS[name]:.1f}x)" if name in REAL_GOALS else ""
        report(measure(repo, resolved, source, modes, repeat, tmp), modes, goal)


# The same picks at each size, so that only the source history grows (2k holds at most 200).
GROWTH = ((2000, 150), (20000, 150), (100000, 150))


def run_growth(repeat: int, tmp: Path) -> None:
    """Time and peak RSS at three history sizes; the dict baseline each time."""
    per: list[float] = []
    for n_source, n_picks in GROWTH:
        repo = tmp / f"growth-{n_source}.git"
        t0 = time.perf_counter()
        rng, _ = generate(repo, n_source, n_picks)
        print(
            f"{n_source} source commits, {n_picks} picks (generated in "
            f"{time.perf_counter() - t0:.1f}s):"
        )
        m = measure(repo, rng, "main", ["dict"], repeat, tmp)
        report(m, ["dict"], " (goal <= 0.5x at 20k)" if n_source == 20000 else "")
        per.append(m["wall"]["harness"] / n_source * 1000)  # type: ignore[index]
        subprocess.run(["rm", "-rf", str(repo)], check=True)
    print(
        "harness ms per 1000 source commits: "
        + ", ".join(f"{n // 1000}k {x * 1000:.0f}" for (n, _), x in zip(GROWTH, per, strict=True))
        + " (linear growth: about equal); goal: peak RSS <= 300 MiB at 100k"
    )


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--small", action="store_true", help="2k source commits and 30 picks")
    ap.add_argument("--repo", help="time an existing repository instead of a generated one")
    ap.add_argument("--range", dest="rng", help="BASE..HEAD (with --repo)")
    ap.add_argument("--source", default="main", help="source ref (with --repo)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each side; the best time counts")
    ap.add_argument(
        "--baseline",
        choices=("grep", "dict", "both"),
        default="both",
        help="grep: a git log --grep per pick; dict: one git log of subjects (default: both)",
    )
    ap.add_argument("--real", action="store_true", help="the named ranges of real repositories")
    ap.add_argument("--growth", action="store_true", help="2k, 20k and 100k source commits")
    a = ap.parse_args()
    adopt_writers()
    modes = ["grep", "dict"] if a.baseline == "both" else [a.baseline]
    with tempfile.TemporaryDirectory(prefix="harness-bench-") as tmp:
        if a.real:
            run_real(modes, a.repeat, Path(tmp))
            return 0
        if a.growth:
            run_growth(a.repeat, Path(tmp))
            return 0
        expected: dict[str, int] = {}
        if a.repo:
            if not a.rng:
                ap.error("--repo needs --range")
            repo, rng, source = Path(a.repo), a.rng, a.source
        else:
            n_source, n_picks = (2000, 30) if a.small else (20000, 300)
            repo, source = Path(tmp) / "bench.git", "main"
            t0 = time.perf_counter()
            rng, expected = generate(repo, n_source, n_picks)
            print(
                f"generated {n_source} source commits and {n_picks} picks in "
                f"{time.perf_counter() - t0:.1f}s (fast-import)"
            )
            if expected:
                print(f"generated as: {dict(sorted(expected.items()))}")
        report(measure(repo, rng, source, modes, a.repeat, Path(tmp)), modes)
        print("target: <= 0.8x the dict baseline on the generated repository (issue 29; was 0.5x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
