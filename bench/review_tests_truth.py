"""Truth for "the rest of the review" in the tests section (issue 46): the tables
``data.hunks``, ``data.removed_strings``, ``data.lanes`` and ``data.pins`` of ``harness tests``'s
report.json recomputed with plain git and plain pytest, then compared finding by finding.

Nothing here comes from the harness but the report being checked and the interpreter of the
environment it ran in (``--python``; default: the report's ``data.environment`` when it names an
interpreter, else ``$HARNESS_CACHE_DIR/envs/<key>/bin/python`` given by hand):

- hunks: every hunk of ``git diff -U3 --no-renames BASE HEAD`` in a code file (not a test, doc,
  changelog or config file, by this script's own rule) cut out as a one-hunk patch, reverse-applied
  with ``git apply -R`` to a ``git archive`` of HEAD; pytest runs the section's test files
  (``data.files``) there and at HEAD alone; ``failing`` = passed at HEAD, not passed reverted.
  ``--hunk-tests source`` writes the source's version of those files over both trees first (what
  the harness does when it has a "head + source's tests" column), to tell the two readings apart.
- removed strings: quoted literals of 8+ characters on lines the diff deletes from non-test
  .py/.pyi/.yaml/.yml/.json/.toml files and adds nowhere in the range; ``git grep -F -n`` at BASE,
  HEAD, the source and its parent; kept when HEAD still holds it and lost an occurrence, dropped
  when the source removed it the same way and no test at HEAD holds it; ``source_keeps`` = the
  source holds it outside tests (and did not remove it the same way).
- lanes: ``pytest --collect-only -q -m EXPR FILES`` at HEAD per ``--lane NAME=EXPR`` (read by hand
  from the workflows).
- pins: per ``--pin SHA``: HEAD + that commit's non-test changes (``git diff SHA^ SHA -- code |
  git apply``), the whole suite (``--suite`` files, default every test file under testpaths)
  run beside HEAD alone; ``pinned_by`` = node ids whose outcome differs.

    HARNESS_CACHE_DIR=/tmp/val-cache .venv/bin/python bench/review_tests_truth.py \\
        --repo REPO --base BASE --head HEAD --report report.json [--source SRC --source-parent P] \\
        [--lane 'unit=not dev_mode'] [--pin SHA] [--python EXE]

Exit 0 when every table agrees, 1 on any disagreement.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from harness.testing.pytest_truth import plain_checkout

RECORDER = """
import json, os
_OUT = {}
def _put(nodeid, outcome):
    rank = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
    if nodeid not in _OUT or rank[outcome] > rank[_OUT[nodeid]]:
        _OUT[nodeid] = outcome
def pytest_runtest_logreport(report):
    if report.when == "call":
        _put(report.nodeid, "passed" if report.passed else "skipped" if report.skipped else "failed")
    elif report.failed:
        _put(report.nodeid, "error")
    elif report.skipped:
        _put(report.nodeid, "skipped")
def pytest_collectreport(report):
    if report.failed:
        _OUT["<collect> " + report.nodeid] = "error"
def pytest_collection_finish(session):
    if os.environ.get("TRUTH_COLLECT"):
        with open(os.environ["TRUTH_COLLECT"], "w") as fh:
            json.dump([i.nodeid for i in session.items], fh)
def pytest_sessionfinish(session):
    with open(os.environ["TRUTH_OUT"], "w") as fh:
        json.dump(_OUT, fh)
"""

DOC_SUFFIXES = (".md", ".rst", ".txt", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".json", ".lock")
STRING_SUFFIXES = (".py", ".pyi", ".yaml", ".yml", ".json", ".toml")
LITERAL = re.compile(r"""("([^"\\\n]{8,200})"|'([^'\\\n]{8,200})')""")


def git(repo: str, *args: str, check: bool = True) -> bytes:
    return subprocess.run(
        ["git", "--git-dir", repo, *args], check=check, capture_output=True
    ).stdout


def is_test(path: str) -> bool:
    parts = path.split("/")
    name = parts[-1]
    return (
        any(p in ("tests", "test", "testing") for p in parts[:-1])
        or fnmatch.fnmatch(name, "test_*.py")
        or fnmatch.fnmatch(name, "*_test.py")
        or name == "conftest.py"
    )


def is_code(path: str) -> bool:
    name = path.rsplit("/", 1)[-1].lower()
    return not (
        is_test(path)
        or path.endswith(DOC_SUFFIXES)
        or name.startswith(("changelog", "changes", "news", "readme", "license"))
        or path.split("/")[0] in ("docs", "doc", ".github", "CHANGES", "changelog.d")
    )


# ---------------------------------------------------------------- diff parsing (by hand)


def file_diffs(repo: str, a: str, b: str, paths: list[str] | None = None) -> list[dict]:
    """[{path, old, new, header, hunks: [(text, new_start, new_len, added, removed)]}]"""
    raw = git(repo, "diff", "-U3", "--no-renames", "--no-color", a, b, "--", *(paths or []))
    out: list[dict] = []
    cur: dict | None = None
    hunk: list[str] | None = None
    for line in raw.decode("utf-8", "surrogateescape").split("\n"):
        if line.startswith("diff --git "):
            cur = {"header": [line], "hunks": [], "old": None, "new": None, "binary": False}
            out.append(cur)
            hunk = None
        elif cur is None:
            continue
        elif hunk is None and not line.startswith("@@"):
            cur["header"].append(line)
            if line.startswith("--- "):
                cur["old"] = None if line == "--- /dev/null" else line[6:]
            elif line.startswith("+++ "):
                cur["new"] = None if line == "+++ /dev/null" else line[6:]
            elif line.startswith("Binary files"):
                cur["binary"] = True
        elif line.startswith("@@"):
            hunk = [line]
            cur["hunks"].append(hunk)
        elif hunk is not None and line[:1] in (" ", "+", "-", "\\"):
            hunk.append(line)
    for fd in out:
        fd["path"] = fd["new"] or fd["old"] or fd["header"][0].split(" b/")[-1]
        parsed = []
        for h in fd["hunks"]:
            m = re.match(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", h[0])
            assert m, h[0]
            ns, nl = int(m.group(3)), int(m.group(4) if m.group(4) is not None else 1)
            added = sum(1 for ln in h[1:] if ln.startswith("+"))
            removed = sum(1 for ln in h[1:] if ln.startswith("-"))
            parsed.append(("\n".join(h) + "\n", ns, nl, added, removed))
        fd["hunks"] = parsed
    return out


# ---------------------------------------------------------------- trees and pytest


def make_tree(repo: str, commit: str, dest: Path, patches: list[tuple[str, bool]] = ()) -> str:
    """A plain checkout of commit in dest (``plain_checkout``), then each (patch, reverse) applied
    with git apply."""
    plain_checkout(repo, commit, dest)
    for text, reverse in patches:
        proc = subprocess.run(
            ["git", "apply", *(["-R"] if reverse else []), "-"],
            cwd=dest,
            input=text.encode("utf-8", "surrogateescape"),
            capture_output=True,
        )
        if proc.returncode:
            return proc.stderr.decode(errors="replace").strip() or "git apply failed"
    return ""


def pytest_in(
    tree: Path, files: list[str], python: str, extra: list[str] = (), collect_only: bool = False
) -> dict[str, str] | list[str]:
    plug = tree.parent / "plug"
    plug.mkdir(exist_ok=True)
    (plug / "truth_recorder.py").write_text(RECORDER)
    out = tree.parent / "out.json"
    col = tree.parent / "collected.json"
    for f in (out, col):
        f.unlink(missing_ok=True)
    paths = [str(tree / "src"), str(tree)] if (tree / "src").is_dir() else [str(tree)]
    env = {
        "PYTHONPATH": ":".join([*paths, str(plug)]),
        "PATH": "/usr/bin:/bin",
        "HOME": str(tree.parent),
        "TRUTH_OUT": str(out),
        "TRUTH_COLLECT": str(col),
    }
    run = [f for f in files if (tree / f).exists()]
    cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "truth_recorder"]
    cmd += [*extra, *(["--collect-only"] if collect_only else []), "--", *run]
    proc = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, env=env, timeout=1200)
    if collect_only:
        if not col.exists():
            print(f"    collection wrote nothing (rc {proc.returncode})", file=sys.stderr)
            return []
        return json.loads(col.read_text())
    if not out.exists():
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-5:]
        print(f"    pytest wrote no results (rc {proc.returncode}): {tail}", file=sys.stderr)
        return {}
    return json.loads(out.read_text())


def run_tree(repo, commit, files, python, patches=(), extra=(), collect_only=False):
    with tempfile.TemporaryDirectory(prefix="rtruth-") as tmp:
        tree = Path(tmp) / "tree"
        problem = make_tree(repo, commit, tree, list(patches))
        if problem:
            return None, problem
        return pytest_in(tree, files, python, list(extra), collect_only), ""


# ---------------------------------------------------------------- the four tables


class Tally:
    def __init__(self) -> None:
        self.rows: dict[str, list[int]] = {}

    def check(self, table: str, what: str, truth, report) -> None:
        ok = truth == report
        self.rows.setdefault(table, [0, 0])[0 if ok else 1] += 1
        mark = "agree   " if ok else "DISAGREE"
        line = f"  [{table}] {mark} {what}"
        if not ok:
            line += f"\n      truth:  {truth}\n      report: {report}"
        print(line)


def hunks_table(args, data, python, tally: Tally) -> None:
    files = [f["path"] for f in data.get("files", [])]
    # --hunk-tests source: the source's version of the section's test files written over HEAD
    # (the harness's "head + source's tests" column) instead of the pick's own
    over = []
    if args.hunk_tests == "source" and args.source:
        for f in files:
            if git(args.repo, "diff", "--name-only", args.head, args.source, "--", f).strip():
                blob = git(args.repo, "show", f"{args.source}:{f}", check=False)
                if blob:
                    over.append(f)
    if over:
        print(f"  (the source's version of {over} written over HEAD)")
    overlay = [_overlay_patch(args.repo, args.head, args.source, f) for f in over]
    print(f"hunks: section files {files}")
    head_out, _ = run_tree(args.repo, args.head, files, python, overlay)
    passing = {n for n, o in head_out.items() if o == "passed"}
    print(f"  HEAD: {len(head_out)} outcomes, {len(passing)} passed")
    truth = []
    for fd in file_diffs(args.repo, args.base, args.head):
        if fd["binary"] or fd["old"] is None or fd["new"] is None or not is_code(fd["path"]):
            continue
        for text, ns, nl, added, removed in fd["hunks"]:
            patch = "\n".join(fd["header"]) + "\n" + text
            out, problem = run_tree(args.repo, args.head, files, python, [*overlay, (patch, True)])
            failing = sorted(n for n in passing if (out or {}).get(n) != "passed")
            truth.append(
                {
                    "file": fd["path"],
                    "start": ns,
                    "end": ns + max(nl, 1) - 1,
                    "added": added,
                    "removed": removed,
                    "failing": failing if not problem else None,
                    "problem": problem,
                }
            )
    report = {(h["file"], h["start"]): h for h in data.get("hunks", [])}
    tally.check("hunks", "number of code hunks", len(truth), len(report))
    for t in truth:
        r = report.get((t["file"], t["start"]))
        label = f"{t['file']}:{t['start']}-{t['end']} (+{t['added']} -{t['removed']})"
        if r is None:
            tally.check("hunks", label, t, None)
            continue
        shape = (t["end"], t["added"], t["removed"])
        tally.check("hunks", label + " lines/counts", shape, (r["end"], r["added"], r["removed"]))
        tally.check(
            "hunks",
            label + f" failing ({len(t['failing'] or [])})",
            t["failing"],
            sorted(r.get("failing") or []),
        )


def _overlay_patch(repo: str, head: str, other: str, path: str) -> tuple[str, bool]:
    """A forward patch that turns HEAD's version of path into other's."""
    text = git(repo, "diff", "--no-renames", "--binary", head, other, "--", path)
    return text.decode("utf-8", "surrogateescape"), False


def grep_count(repo: str, rev: str | None, s: str) -> list[tuple[str, int]]:
    if not rev:
        return []
    out = git(repo, "grep", "-F", "-n", "-I", "-e", s, rev, "--", check=False)
    hits = []
    for line in out.decode("utf-8", "replace").splitlines():
        _, path, num, _ = line.split(":", 3)
        hits.append((path, int(num)))
    return hits


def strings_table(args, data, tally: Tally) -> None:
    removed: dict[str, str] = {}
    added: set[str] = set()
    for fd in file_diffs(args.repo, args.base, args.head):
        p = fd["path"]
        if fd["binary"] or not p.endswith(STRING_SUFFIXES) or is_test(p):
            continue
        for text, *_ in fd["hunks"]:
            for ln in text.split("\n")[1:]:
                lits = {m.group(2) or m.group(3) for m in LITERAL.finditer(ln[1:])}
                lits = {s for s in lits if len(s.strip()) >= 8}
                if ln.startswith("-"):
                    for s in lits:
                        removed.setdefault(s, p)
                elif ln.startswith("+"):
                    added |= lits
    truth = {}
    for s in sorted(set(removed) - added):
        at = {
            k: grep_count(args.repo, r, s)
            for k, r in (
                ("base", args.base),
                ("head", args.head),
                ("source", args.source),
                ("parent", args.source_parent),
            )
        }
        lost = len(at["base"]) - len(at["head"])
        if not at["head"] or lost <= 0:
            continue
        in_tests = any(is_test(p) for p, _ in at["head"])
        mirrored = bool(
            args.source and args.source_parent and len(at["parent"]) - len(at["source"]) >= lost
        )
        if mirrored and not in_tests:
            continue
        keeps = bool(args.source) and not mirrored and any(not is_test(p) for p, _ in at["source"])
        truth[s] = {"references": sorted(f"{p}:{n}" for p, n in at["head"]), "source_keeps": keeps}
    report = {r["string"]: r for r in data.get("removed_strings", [])}
    print(f"removed strings: {len(removed)} removed, {len(set(removed) - added)} not re-added")
    tally.check("strings", "which strings", sorted(truth), sorted(report))
    for s, t in truth.items():
        r = report.get(s)
        if r is None:
            continue
        tally.check(
            "strings",
            f"{s!r} references ({len(t['references'])})",
            t["references"],
            sorted(r["references"]),
        )
        tally.check("strings", f"{s!r} source_keeps", t["source_keeps"], r["source_keeps"])


def lanes_table(args, data, python, tally: Tally) -> None:
    lanes = data.get("lanes")
    if not args.lane:
        tally.check("lanes", "lanes absent (no lane given by hand)", None, lanes)
        return
    files = [f["path"] for f in data.get("files", [])]
    truth: dict[str, list[str]] = {}
    allnodes, _ = run_tree(args.repo, args.head, files, python, collect_only=True)
    for n in allnodes:
        truth[n] = []
    for spec in args.lane:
        name, expr = spec.split("=", 1)
        lane_files = files
        if "@" in expr:  # the lane's pytest names its own files: only those of the section run
            expr, named = expr.split("@", 1)
            lane_files = [f for f in files if f in named.split(",")]
        picked, _ = (
            run_tree(
                args.repo, args.head, lane_files, python, extra=["-m", expr], collect_only=True
            )
            if lane_files
            else ([], "")
        )
        print(f"  lane {name!r} (-m {expr!r}): {len(picked)} of {len(allnodes)} collected")
        for n in picked:
            truth.setdefault(n, []).append(name)
    if lanes is None:
        tally.check("lanes", "lanes table present", "present", None)
        return
    tally.check("lanes", "node ids", sorted(truth), sorted(lanes))
    for n in sorted(truth):
        if n in lanes:
            tally.check("lanes", n, sorted(truth[n]), sorted(lanes[n]))


def suite_files(repo: str, head: str) -> list[str]:
    names = git(repo, "ls-tree", "-r", "--name-only", head).decode().split("\n")
    return sorted(
        p
        for p in names
        if p.endswith(".py")
        and (
            fnmatch.fnmatch(p.rsplit("/", 1)[-1], "test_*.py")
            or fnmatch.fnmatch(p.rsplit("/", 1)[-1], "*_test.py")
        )
        and (not args_testpaths or any(p.startswith(t.rstrip("/") + "/") for t in args_testpaths))
    )


args_testpaths: list[str] = []


def pins_table(args, data, python, tally: Tally) -> None:
    report = {p["commit"]: p for p in data.get("pins", [])}
    full = {git(args.repo, "rev-parse", c).decode().strip(): c for c in args.pin}
    tally.check("pins", "missing commits tried", sorted(full), sorted(report))
    if not args.pin:
        return
    files = args.suite or suite_files(args.repo, args.head)
    print(f"pins: scope {len(files)} test file(s)")
    extra = ["--continue-on-collection-errors"]
    base_out, _ = run_tree(args.repo, args.head, files, python, extra=extra)
    print(f"  HEAD alone: {len(base_out)} outcomes")
    for sha in full:
        code = [
            p
            for p in git(args.repo, "diff", "--name-only", "--no-renames", f"{sha}^", sha)
            .decode()
            .split()
            if not is_test(p)
        ]
        patch = git(args.repo, "diff", "--no-renames", "--binary", f"{sha}^", sha, "--", *code)
        out, problem = run_tree(
            args.repo,
            args.head,
            files,
            python,
            [(patch.decode("utf-8", "surrogateescape"), False)],
            extra=extra,
        )
        r = report.get(sha)
        if problem:
            tally.check("pins", f"{sha[:10]} applies", False, r and r["applies"])
            continue
        pinned = sorted(n for n in set(base_out) | set(out) if base_out.get(n) != out.get(n))
        print(f"  HEAD + {sha[:10]} ({', '.join(code)}): {len(out)} outcomes")
        if r is None:
            continue
        tally.check("pins", f"{sha[:10]} applies", True, r["applies"])
        tally.check("pins", f"{sha[:10]} pinned_by ({len(pinned)})", pinned, sorted(r["pinned_by"]))


def main() -> int:
    global args_testpaths
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True)
    ap.add_argument("--base", required=True)
    ap.add_argument("--head", required=True)
    ap.add_argument("--report", required=True, help="harness tests --format json output")
    ap.add_argument("--source", help="the source commit (for source_keeps)")
    ap.add_argument("--source-parent")
    ap.add_argument("--python")
    ap.add_argument(
        "--lane",
        action="append",
        default=[],
        help="NAME=EXPR[@FILE,FILE] read by hand (@: the files the lane's pytest names)",
    )
    ap.add_argument("--pin", action="append", default=[], help="a commit the pick lacks")
    ap.add_argument("--suite", nargs="*", help="the pin scope's test files (default: all)")
    ap.add_argument("--testpaths", nargs="*", default=["tests"])
    ap.add_argument(
        "--hunk-tests",
        choices=["head", "source"],
        default="head",
        help="the test files the hunk runs use: the pick's (HEAD's) or the source's",
    )
    ap.add_argument("--only", nargs="*", default=["hunks", "strings", "lanes", "pins"])
    args = ap.parse_args()
    args_testpaths = args.testpaths
    args.base = git(args.repo, "rev-parse", f"{args.base}^{{commit}}").decode().strip()
    args.head = git(args.repo, "rev-parse", f"{args.head}^{{commit}}").decode().strip()
    for k in ("source", "source_parent"):
        if getattr(args, k):
            setattr(args, k, git(args.repo, "rev-parse", getattr(args, k)).decode().strip())
    doc = json.loads(Path(args.report).read_text())
    data = next(s for s in doc["sections"] if s["id"] == "tests")["data"]
    python = args.python or data.get("environment", "").split(" ")[-1]
    if not Path(python).exists():
        sys.exit("no interpreter: pass --python ($HARNESS_CACHE_DIR/envs/<key>/bin/python)")
    print(f"interpreter: {python}")
    tally = Tally()
    if "hunks" in args.only:
        hunks_table(args, data, python, tally)
    if "strings" in args.only:
        strings_table(args, data, tally)
    if "lanes" in args.only:
        lanes_table(args, data, python, tally)
    if "pins" in args.only:
        pins_table(args, data, python, tally)
    bad = 0
    for table, (ok, no) in tally.rows.items():
        print(f"{table}: {ok} agree, {no} disagree")
        bad += no
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
