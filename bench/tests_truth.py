"""Truth for the tests section on a real backport: plain ``pytest`` runs made by hand in the same
trees the section runs, compared node id by node id with the harness's report.json, and the
timings of both side by side (issue 39, "Done when" and item 6).

No harness code decides anything here: the trees are a plain checkout of a commit (``read-tree`` and
``checkout-index`` into an index of their own, ``harness.testing.pytest_truth.plain_checkout``) with test files
written over it from other commits (``git show``), pytest runs with ``PYTHONPATH`` = the tree's
``src/`` (if any) and the tree — the way ``harness.testing.pytest_truth.plain_pytest`` does — and
each node id's outcome is read from pytest's own ``TestReport`` objects by a 20-line recording
plugin (``-rA`` lines alone drop SKIPPED node ids and cut ids at the first space). The only things
taken from the harness are the venv it built (its ``bin/python``, so both sides run the same
packages) and its report, which is what is checked. The source commit(s) are given by hand
(``--source-commit``), as a reviewer reads them off the PR.

    HARNESS_CACHE_DIR=/tmp/val-cache .venv/bin/python bench/tests_truth.py \\
        --repo /work/.mirror/pallets+click/repo --base 5b1aba82 --head 648d7c40 \\
        --source main --source-commit c3535905 [--timings] [--json OUT]

Columns (the same trees as harness/checks/fix_tests/columns.py documents, rebuilt by hand):
``without_fix`` = BASE + HEAD's version of the pick's test files (+ the source's version of the
test files only the source changed); ``head`` = HEAD (+ source-only test files);
``head_source_tests`` = HEAD + the source's version of every test file the source changed, made
only when a file both changed differs between HEAD and the source; ``source_parent`` = the oldest
source's first parent + the source's test files; ``source`` = the newest source commit. Every
column runs the selected test files present in its tree.

Exit 0 when every outcome the harness reports equals the plain run's, 1 otherwise.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import tomllib

from harness.testing.pytest_truth import plain_checkout

ROOT = Path(__file__).resolve().parent.parent
HARNESS = ROOT / ".venv" / "bin" / "harness"

RECORDER = """
import json, os
_OUT = {}
def _put(nodeid, outcome):
    rank = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
    if nodeid not in _OUT or rank[outcome] > rank[_OUT[nodeid]]:
        _OUT[nodeid] = outcome
def pytest_runtest_logreport(report):
    if report.when == "call":
        if report.passed:
            _put(report.nodeid, "passed")  # an xpass (non-strict) reads as passed
        elif report.skipped:
            _put(report.nodeid, "skipped")  # skip() or an xfail
        else:
            _put(report.nodeid, "failed")
    elif report.failed:
        _put(report.nodeid, "error")  # setup or teardown failed
    elif report.skipped:
        _put(report.nodeid, "skipped")  # skipped at setup (marks, skipif, fixtures)
def pytest_collectreport(report):
    if report.failed:
        _OUT["<collect> " + report.nodeid] = "error"
def pytest_sessionfinish(session):
    with open(os.environ["TRUTH_OUT"], "w") as fh:
        json.dump(_OUT, fh)
"""


def git(repo: str, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", repo, *args], check=True, capture_output=True).stdout


def rev(repo: str, ref: str) -> str:
    return git(repo, "rev-parse", f"{ref}^{{commit}}").decode().strip()


def changed(repo: str, commit: str) -> set[str]:
    """Paths a commit changes (a merge against its first parent)."""
    out = git(repo, "diff", "--name-only", "--no-renames", f"{commit}^1", commit)
    return set(out.decode().split())


def exists(repo: str, commit: str, path: str) -> bool:
    r = subprocess.run(
        ["git", "--git-dir", repo, "cat-file", "-e", f"{commit}:{path}"], capture_output=True
    )
    return r.returncode == 0


def python_files(repo: str, head: str) -> list[str]:
    """pytest's python_files at HEAD (pyproject, pytest.ini, setup.cfg, tox.ini; else default)."""
    try:
        doc = tomllib.loads(git(repo, "show", f"{head}:pyproject.toml").decode())
        opts = doc.get("tool", {}).get("pytest", {})
        opts = opts.get("ini_options", opts)
        pats = opts.get("python_files")
        if pats:
            return pats.split() if isinstance(pats, str) else list(pats)
    except subprocess.CalledProcessError:
        pass
    for name, sec in (
        ("pytest.ini", "pytest"),
        ("setup.cfg", "tool:pytest"),
        ("tox.ini", "pytest"),
    ):
        try:
            text = git(repo, "show", f"{head}:{name}").decode()
        except subprocess.CalledProcessError:
            continue
        m = re.search(rf"^\[{re.escape(sec)}\](.*?)(?=^\[|\Z)", text, re.S | re.M)
        if m:
            p = re.search(r"^python_files\s*=\s*(.+?)(?=^\S|\Z)", m.group(1), re.S | re.M)
            if p:
                return p.group(1).split()
    return ["test_*.py", "*_test.py"]


def is_test(path: str, pats: list[str]) -> bool:
    if not path.endswith(".py"):
        return False
    name = path.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatch(path if "/" in p else name, p) for p in pats)


def run_column(
    repo: str,
    commit: str,
    overlay: list[tuple[str, str]],
    files: list[str],
    python: str,
    plugin_dir: str,
) -> tuple[dict[str, str], float, float]:
    """Node id -> outcome of ``python -m pytest FILES`` in commit's tree with overlay; wall time
    of the pytest process alone, and of the whole by-hand step (tree written, then pytest)."""
    t_tree = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="truth-") as tmp:
        tree = Path(tmp) / "tree"
        plain_checkout(repo, commit, tree)
        for path, at in overlay:
            (tree / path).parent.mkdir(parents=True, exist_ok=True)
            (tree / path).write_bytes(git(repo, "show", f"{at}:{path}"))
        scm_version_file(repo, commit, tree)
        run = [f for f in files if (tree / f).is_file()]
        if not run:
            return {}, 0.0, time.perf_counter() - t_tree
        paths = [str(tree / "src"), str(tree)] if (tree / "src").is_dir() else [str(tree)]
        out = Path(tmp) / "out.json"
        env = {
            "PYTHONPATH": ":".join([*paths, plugin_dir]),
            "PATH": "/usr/bin:/bin",
            "HOME": tmp,
            "TRUTH_OUT": str(out),
        }
        pbr = pbr_version(repo, commit, tree)
        if pbr:
            env["PBR_VERSION"] = pbr
        t0 = time.perf_counter()
        proc = subprocess.run(
            [
                python,
                "-m",
                "pytest",
                "-rA",
                "-q",
                "-p",
                "no:cacheprovider",
                "-p",
                "truth_recorder",
                "--",
                *run,
            ],
            cwd=tree,
            capture_output=True,
            text=True,
            env=env,
            timeout=900,
        )
        wall = time.perf_counter() - t0
        if not out.exists():
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-5:]
            print(f"    pytest wrote no results (rc {proc.returncode}): {tail}", file=sys.stderr)
            return {}, wall, time.perf_counter() - t_tree
        return json.loads(out.read_text()), wall, time.perf_counter() - t_tree


def pbr_version(repo: str, commit: str, tree: Path) -> str | None:
    """What OpenStack's docs tell a build without git metadata to set for a pbr project
    (``setup(pbr=True)``, a ``[pbr]`` section, or pbr as the build backend): ``PBR_VERSION``,
    here the next patch release's ``.devN`` from ``git describe`` (pbr's own scheme)."""
    texts = [
        (tree / name).read_text(errors="replace") if (tree / name).is_file() else ""
        for name in ("setup.py", "setup.cfg", "pyproject.toml")
    ]
    if not (
        re.search(r"pbr\s*=\s*True", texts[0])
        or re.search(r"(?m)^\[pbr\]", texts[1])
        or re.search(r"requires\s*=\s*\[[^\]]*[\"']pbr", texts[2])
    ):
        return None
    described = git(repo, "describe", "--tags", "--long", commit).decode().strip()
    m = re.match(r"^v?(\d+(?:\.\d+)*)-(\d+)-g[0-9a-f]+$", described)
    if not m:
        return "0.0.0"
    if m[2] == "0":
        return m[1]
    parts = m[1].split(".")
    return ".".join([*parts[:-1], str(int(parts[-1]) + 1)]) + f".dev{m[2]}"


def scm_version_file(repo: str, commit: str, tree: Path) -> None:
    """What the build would write for a setuptools_scm / hatch-vcs project (an exported tree has
    no .git, so pytest's own ``_pytest/_version.py`` and the like are missing): the version file
    named in pyproject.toml, with the version ``git describe`` gives, as a reviewer does by hand
    (``SETUPTOOLS_SCM_PRETEND_VERSION=... pip install -e .`` would write the same module)."""
    try:
        doc = tomllib.loads((tree / "pyproject.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return
    tool = doc.get("tool", {})
    scm = tool.get("setuptools_scm") or {}
    path = scm.get("version_file") or scm.get("write_to")
    if not path:
        vcs = tool.get("hatch", {}).get("build", {}).get("hooks", {}).get("vcs", {})
        path = vcs.get("version-file")
    if not path or (tree / path).exists():
        return
    described = subprocess.run(
        ["git", "--git-dir", repo, "describe", "--tags", "--long", commit],
        capture_output=True,
        text=True,
    ).stdout.strip()
    m = re.match(r"^v?(\d[\w.]*)-(\d+)-g([0-9a-f]+)$", described)
    if not m:
        version = "0.0.0"
    elif m[2] == "0":
        version = m[1]
    elif re.search(r"\.?dev\d*$", m[1]):  # a dev tag (9.2.0.dev0): count on from it
        version = re.sub(r"\.?dev\d*$", f".dev{m[2]}", m[1]) + f"+g{m[3]}"
    else:
        version = f"{m[1]}.dev{m[2]}+g{m[3]}"
    parts = tuple(int(p) if p.isdigit() else p for p in re.split(r"[.+]", version))
    (tree / path).write_text(
        f"__version__ = version = {version!r}\n__version_tuple__ = version_tuple = {parts!r}\n"
    )


def env_python(cache: Path, report: dict) -> str:
    env = next(s for s in report["sections"] if s["id"] == "tests")["data"]["environment"]
    key = re.search(r"key ([0-9a-f]+)", env).group(1)
    for d in sorted((cache / "envs").glob(key + "*")):
        if (d / "bin" / "python").exists():
            return str(d / "bin" / "python")
    raise SystemExit(f"no environment {key} under {cache}/envs")


def source_env_python(cache: Path, report: dict) -> str | None:
    """The environment the harness built for the source columns, where it built one (the source's
    packaging asks for other packages than HEAD's); None: they ran in HEAD's."""
    sec = next(s for s in report["sections"] if s["id"] == "tests")
    line = next(
        (n for n in sec["not_verified"] if n.startswith("environment of the source columns (")), ""
    )
    m = re.search(r"key ([0-9a-f]+)", line)
    if m is None:
        return None
    for d in sorted((cache / "envs").glob(m.group(1) + "*")):
        if (d / "bin" / "python").exists():
            return str(d / "bin" / "python")
    raise SystemExit(f"no environment {m.group(1)} under {cache}/envs")


def harness_run(args, cache: Path, out: Path, *extra: str) -> tuple[float, int, str]:
    env = dict(os.environ, HARNESS_CACHE_DIR=str(cache))
    cmd = [
        str(HARNESS),
        "tests",
        f"{args.base}..{args.head}",
        "--source",
        args.source,
        "--repo",
        args.repo,
        "--format",
        "json",
        "--output",
        str(out),
        *extra,
    ]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return time.perf_counter() - t0, proc.returncode, proc.stderr


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True, help="git dir of the project (bare is fine)")
    ap.add_argument("--base", required=True)
    ap.add_argument("--head", required=True)
    ap.add_argument("--source", required=True, help="the branch passed to harness --source")
    ap.add_argument(
        "--source-commit",
        action="append",
        default=[],
        help="the source commit(s) of the pick, oldest first, read off the PR",
    )
    ap.add_argument("--report", help="an existing report.json (default: run the harness)")
    ap.add_argument(
        "--timings",
        action="store_true",
        help="time harness cold (fresh cache: env build apart), --no-cache (cold, env "
        "ready) and warm runs next to the plain runs",
    )
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()

    cache = Path(os.environ.get("HARNESS_CACHE_DIR", "/tmp/val-cache"))
    base, head = rev(args.repo, args.base), rev(args.repo, args.head)
    srcs = [rev(args.repo, s) for s in args.source_commit]
    figures: dict = {"repo": args.repo, "range": f"{args.base}..{args.head}", "source": srcs}
    work = Path(tempfile.mkdtemp(prefix="tests-truth-"))

    # 1. the harness report (cold run: a fresh cache, so the env build is timed too)
    if args.report:
        report_path = Path(args.report)
    else:
        report_path = work / "cold.json"
        # --timings: a fresh cache, so the env is built again and its build time read from the log
        run_cache = work / "cache" if args.timings else cache
        wall, rc, err = harness_run(args, run_cache, report_path)
        cache = run_cache
        m = re.search(r"test environment: done in ([\d.]+)s", err)
        figures["harness_cold_s"] = round(wall, 2)
        figures["harness_cold_env_build_s"] = float(m.group(1)) if m else None
        figures["harness_exit"] = rc
        print(
            f"harness cold: {wall:.1f}s (exit {rc}; env build {figures['harness_cold_env_build_s']}s)"
        )
    report = json.loads(report_path.read_text())
    sec = next(s for s in report["sections"] if s["id"] == "tests")
    python = env_python(cache, report)
    source_python = source_env_python(cache, report)
    print(
        f"environment: {python}" + (f"; source columns: {source_python}" if source_python else "")
    )

    # 2. the selection, by hand
    pats = python_files(args.repo, head)
    pick_commits = git(args.repo, "rev-list", f"{base}..{head}").decode().split()
    pick_paths: set[str] = set()
    for c in pick_commits:
        if len(git(args.repo, "rev-list", "--parents", "-n1", c).split()) > 2:
            continue  # a merge in the range: its content is its side's commits
        pick_paths |= changed(args.repo, c)
    if not pick_paths:  # a single merge commit as the whole range
        pick_paths = changed(args.repo, head)
    source_paths: set[str] = set()
    for s in srcs:
        source_paths |= changed(args.repo, s)
    newest = srcs[-1] if srcs else None
    parent = rev(args.repo, f"{srcs[0]}^1") if srcs else None
    files, origin = [], {}
    for p in sorted(pick_paths | source_paths):
        if not is_test(p, pats):
            continue
        o = (
            "both"
            if p in pick_paths and p in source_paths
            else "pick"
            if p in pick_paths
            else "source"
        )
        if not exists(args.repo, head if o != "source" else newest, p):
            continue
        files.append(p)
        origin[p] = o
    mine = sorted(files)
    theirs = sorted(f["path"] for f in sec["data"]["files"])
    figures["files"] = mine
    print(f"test files: {mine} (harness: {theirs}){'' if mine == theirs else '  <-- DIFFER'}")

    pick_side = [(p, head) for p in files if origin[p] != "source"]
    source_only = [(p, newest) for p in files if origin[p] == "source"]
    source_side = [(p, newest) for p in files if origin[p] != "pick"]
    columns = {
        "without_fix": (base, pick_side + source_only),
        "head": (head, source_only),
    }
    if newest:
        differ = [
            p
            for p in files
            if origin[p] == "both"
            and git(args.repo, "rev-parse", f"{head}:{p}")
            != git(args.repo, "rev-parse", f"{newest}:{p}")
        ]
        if differ:
            columns["head_source_tests"] = (head, source_side)
        columns["source_parent"] = (parent, source_side)
        columns["source"] = (newest, [])

    plugin_dir = work / "plugin"
    plugin_dir.mkdir()
    (plugin_dir / "truth_recorder.py").write_text(RECORDER)
    truth: dict[str, dict[str, str]] = {}
    plain_total = plain_with_trees = 0.0
    rounds = 2 if args.timings else 1  # the shared 2-core machine is noisy: best of two per column
    for name, (commit, overlay) in columns.items():
        best = best_all = None
        for _ in range(rounds):
            own = python
            if source_python and name in ("source", "source_parent"):
                own = source_python
            res, wall, whole = run_column(args.repo, commit, overlay, files, own, str(plugin_dir))
            best = wall if best is None else min(best, wall)
            best_all = whole if best_all is None else min(best_all, whole)
            if name in truth and truth[name] != res:
                print(f"    plain pytest {name}: outcomes differ between two plain runs (flaky)")
            truth.setdefault(name, res)
        plain_total += best
        plain_with_trees += best_all
        print(
            f"  plain pytest {name:18s} {commit[:10]} +{len(overlay)} file(s): "
            f"{len(res)} node ids in {best:.1f}s"
        )
    figures["plain_s"] = round(plain_total, 2)
    figures["plain_with_trees_s"] = round(plain_with_trees, 2)
    figures["columns"] = list(columns)

    # 3. compare
    agree = disagree = harness_only_null = 0
    lines = []
    seen = set()
    for t in sec["data"]["tests"]:
        seen.add(t["nodeid"])
        for col, got in t["outcomes"].items():
            want = truth.get(col, {}).get(t["nodeid"])
            if got is None:
                if want is not None:
                    harness_only_null += 1
                    lines.append(f"  null  {col:18s} {t['nodeid']}: harness none, plain {want}")
                continue
            if got == want:
                agree += 1
            else:
                disagree += 1
                lines.append(f"  DIFF  {col:18s} {t['nodeid']}: harness {got}, plain {want}")
    for col, res in truth.items():
        for nid, want in res.items():
            if nid not in seen:
                disagree += 1
                lines.append(f"  MISS  {col:18s} {nid}: plain {want}, not in the report")
    verdicts: dict[str, int] = {}
    for t in sec["data"]["tests"]:
        verdicts[t["verdict"]] = verdicts.get(t["verdict"], 0) + 1
    figures.update(
        node_ids=len(sec["data"]["tests"]),
        cells_agree=agree,
        cells_disagree=disagree,
        harness_null_plain_ran=harness_only_null,
        verdicts=verdicts,
        summary=sec.get("summary"),
    )
    print("\n".join(lines[:60]))
    print(
        f"node ids {len(sec['data']['tests'])} · cells agree {agree} · disagree {disagree} · "
        f"harness null where plain ran {harness_only_null} · verdicts {verdicts}"
    )
    print(f"summary: {sec.get('summary')}")
    print(f"harness verdict: {report.get('verdict')}")
    figures["findings"] = [
        f"{f['severity']} {f['kind']}: {f['title']}" for f in sec.get("findings", [])
    ]
    for f in figures["findings"]:
        print(f"  finding {f}")

    # 4. timings, side by side in this one run
    if args.timings and not args.report:
        runs = [harness_run(args, cache, work / "nocache.json", "--no-cache") for _ in range(2)]
        nc, rc_nc, err_nc = min(runs)
        figures["harness_phases_nocache"] = re.findall(r"tests: (.+?): done in ([\d.]+)s", err_nc)
        for phase, sec_s in figures["harness_phases_nocache"]:
            print(f"    harness --no-cache phase {sec_s:>6}s  {phase}")
        warm, rc_w, _ = harness_run(args, cache, work / "warm.json")
        warm2, _, _ = harness_run(args, cache, work / "warm2.json")
        env_s = figures["harness_cold_env_build_s"] or 0.0
        figures.update(
            harness_nocache_s=round(nc, 2),
            harness_warm_s=round(min(warm, warm2), 2),
            cold_minus_env_s=round(figures["harness_cold_s"] - env_s, 2),
        )
        figures["ratio_cold_minus_env"] = round(figures["cold_minus_env_s"] / plain_total, 2)
        figures["ratio_nocache"] = round(nc / plain_total, 2)
        figures["ratio_nocache_vs_plain_with_trees"] = round(nc / plain_with_trees, 2)
        cols = [float(t) for p, t in figures["harness_phases_nocache"] if " columns" in p]
        figures["harness_columns_phase_s"] = cols[0] if cols else None
        if cols:
            figures["ratio_columns_phase"] = round(cols[0] / plain_total, 2)
        same = json.loads((work / "warm.json").read_text())
        wsec = next(s for s in same["sections"] if s["id"] == "tests")
        figures["warm_same_tests"] = wsec["data"]["tests"] == sec["data"]["tests"]
        print(
            f"plain pytest, {len(columns)} runs one after another: {plain_total:.1f}s "
            f"({plain_with_trees:.1f}s with writing the trees)"
        )
        print(
            f"harness cold {figures['harness_cold_s']}s = env build {env_s}s + "
            f"{figures['cold_minus_env_s']}s → ratio {figures['ratio_cold_minus_env']} (≤ 1.5)"
        )
        print(
            f"harness --no-cache (env ready) {nc:.1f}s → ratio {figures['ratio_nocache']} (≤ 1.5); "
            f"vs plain with trees {figures['ratio_nocache_vs_plain_with_trees']}; its columns "
            f"phase alone {figures.get('harness_columns_phase_s')}s → "
            f"{figures.get('ratio_columns_phase')}"
        )
        print(
            f"harness warm {min(warm, warm2):.2f}s (≤ 5 s); same tests as cold: "
            f"{figures['warm_same_tests']}; exits {rc_nc} {rc_w}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    return 0 if disagree == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
