"""Plain-git truth for `harness backports` on real release branches (not part of the pytest run).

    python bench/backports_truth.py --repo PATH --source main --release A --release B [--trials N]

Runs `harness backports --format json`, then classifies every cell of its rows with git alone,
independently of harness:

- in-fork: `merge-base --is-ancestor S $(merge-base SOURCE R)`;
- present: `merge-base --is-ancestor S R` (merged), or a commit of `R ^SOURCE` (no merges) whose
  `(cherry picked from commit S)` trailer names S (or a commit of the PR that merge S brought in),
  whose `git patch-id --stable` equals S's (merges by their first-parent diff), or whose subject
  carries S's PR number (`(#N)`, `Backport PR #N`, `[x.y.z] … (#N)`);
- n/a: every path S modified (it existed in S's first parent) is absent at R's tip (`cat-file -e`);
- missing: the rest.

Harness's `picked` and `reached` both count as present. For a sample of missing cells (``--trials``,
spread over the releases) the truth of `applies` is a real `git cherry-pick --no-commit` in a
throwaway `clone --shared` of the repository (never the repository itself). Prints every
disagreement, then the figures.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter

PR = re.compile(r"\(#(\d+)\)|\bPR #(\d+)|pull request #(\d+)", re.IGNORECASE)
TRAILER = re.compile(r"\(cherry picked from commit ([0-9a-f]{7,40})\)")


def git(repo: str, *args: str, input: bytes | None = None, check: bool = True) -> bytes:
    return subprocess.run(
        ["git", "--git-dir", repo, *args], input=input, capture_output=True, check=check
    ).stdout


def ok(repo: str, *args: str) -> bool:
    return subprocess.run(["git", "--git-dir", repo, *args], capture_output=True).returncode == 0


def patch_ids(repo: str, lines: list[str]) -> dict[str, str]:
    diff = git(
        repo, "diff-tree", "--stdin", "-p", "--root", input="\n".join(lines).encode() + b"\n"
    )
    out = git(repo, "patch-id", "--stable", input=diff).decode()
    return {c: p for p, c in (line.split() for line in out.splitlines())}


def norm(subject: str) -> str:
    """A subject without PR numbers, a leading "[x.y]" tag or "Backport PR #N:" prefix."""
    s = re.sub(r"\(#\d+\)|^\s*\[[^\]]*\]\s*|^Backport PR #\d+:\s*", "", subject)
    return " ".join(s.split()).rstrip(".").lower()


def prs(subject: str) -> set[int]:
    return {int(next(g for g in m.groups() if g)) for m in PR.finditer(subject)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--release", action="append", required=True)
    ap.add_argument("--trials", type=int, default=40, help="missing cells cherry-picked for real")
    a = ap.parse_args()
    r = a.repo
    t0 = time.time()
    cmd = [sys.executable, "-m", "harness", "backports", "--repo", r, "--source", a.source]
    for rel in a.release:
        cmd += ["--release", rel]
    proc = subprocess.run([*cmd, "--format", "json", "--fail-on", "never"], capture_output=True)
    took = time.time() - t0
    if proc.returncode != 0:
        print(proc.stderr.decode(), file=sys.stderr)
        return 1
    section = json.loads(proc.stdout)["sections"][0]
    cells = section["data"]["cells"]
    rows = [x["source"] for x in section["data"]["rows"]]
    src = git(r, "rev-parse", a.source).decode().strip()

    meta: dict[str, tuple[list[str], str]] = {}
    authored: dict[str, str] = {}
    out = git(
        r, "log", "--no-walk=unsorted", "-z", "--format=%H%x00%P%x00%s%x00%an %at", *rows, "--"
    )
    items = out.decode("utf-8", "replace").split("\0")
    for i in range(0, len(items) - 3, 4):
        meta[items[i].strip()] = (items[i + 1].split(), items[i + 2])
        authored[items[i].strip()] = items[i + 3]
    row_pid = patch_ids(r, [f"{s} {meta[s][0][0]}" if len(meta[s][0]) > 1 else s for s in rows])
    inner: dict[str, str] = {}  # a PR commit → the merge (a row) that brought it in
    for s in rows:
        parents = meta[s][0]
        if len(parents) > 1:
            for c in git(r, "rev-list", parents[1], f"^{parents[0]}").decode().split():
                inner.setdefault(c, s)

    truth: dict[tuple[str, str], str] = {}
    for rel in a.release:
        tip = git(r, "rev-parse", rel).decode().strip()
        fork = git(r, "merge-base", src, tip).decode().strip()
        commits = git(r, "rev-list", "--no-merges", tip, f"^{src}").decode().split()
        present: set[str] = set()
        if commits:
            log = git(
                r, "log", "--no-walk=unsorted", "-z", "--format=%H%x00%s%x00%an %at%x00%b", *commits
            )
            parts = log.decode("utf-8", "replace").split("\0")
            pid = patch_ids(r, commits)
            by_pid = {pid[c] for c in commits if c in pid}
            for i in range(0, len(parts) - 3, 4):
                subject, who, body = parts[i + 1], parts[i + 2], parts[i + 3]
                for s in rows:  # the same subject (tags and PR numbers aside), or author + date
                    if norm(meta[s][1]) == norm(subject) or authored[s] == who:
                        present.add(s)
                for named in TRAILER.findall(body):
                    full = git(r, "rev-parse", "--verify", "-q", named, check=False).decode()
                    full = full.strip()
                    present.add(full)
                    if full in inner:
                        present.add(inner[full])
                    parents = git(r, "rev-parse", "-q", "--verify", f"{full}^2", check=False)
                    if full and parents.strip():  # a merge picked with -m1: its PR's commits too
                        present.update(
                            git(r, "rev-list", f"{full}^2", f"^{full}^1").decode().split()
                        )
                for n in prs(subject):
                    for s in rows:
                        if n in prs(meta[s][1]):
                            present.add(s)
            present |= {s for s in rows if row_pid.get(s) in by_pid}
            # A merge found on the release brings its PR's commits (`rev-list M^2 ^M^1`) with it.
            present |= {c for c, m in inner.items() if m in present}
        ancestors = (
            set(git(r, "rev-list", fork, f"^{fork}~400").decode().split())
            if ok(r, "rev-parse", "-q", "--verify", f"{fork}~400")
            else None
        )
        for s in rows:
            if (
                ancestors is not None
                and s in ancestors
                or ok(r, "merge-base", "--is-ancestor", s, fork)
            ):
                truth[(s, rel)] = "in-fork"
            elif s in present or ok(r, "merge-base", "--is-ancestor", s, tip):
                truth[(s, rel)] = "present"
            else:
                parents = meta[s][0]
                changed = (
                    git(
                        r,
                        "diff-tree",
                        "-r",
                        "--no-renames",
                        "--name-status",
                        "-z",
                        parents[0] if parents else "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
                        s,
                    )
                    .decode("utf-8", "replace")
                    .split("\0")
                )
                old = [changed[i + 1] for i in range(0, len(changed) - 1, 2) if changed[i] in "MD"]
                if old and not any(ok(r, "cat-file", "-e", f"{tip}:{p}") for p in old):
                    truth[(s, rel)] = "n/a"
                else:
                    truth[(s, rel)] = "missing"

    agree = Counter()
    states = Counter()
    for c in cells:
        mine = "present" if c["state"] in ("picked", "reached") else c["state"]
        t = truth[(c["source"], c["release"])]
        states[(c["state"], t)] += 1
        agree[mine == t] += 1
        if mine != t:
            print(
                f"DISAGREE {c['source'][:12]} {c['release']}: harness {c['state']}"
                f"{' ' + str(c.get('how') or c.get('status')) if c['state'] != 'missing' else ''}"
                f" / git {t}: {meta[c['source']][1][:70]}"
            )

    # applies: real cherry-picks in a throwaway shared clone, on a sample of missing cells.
    missing = [c for c in cells if c["state"] == "missing" and c["applies"] is not None]
    step = max(1, len(missing) // max(1, a.trials))
    sample = missing[::step][: a.trials]
    tmp = tempfile.mkdtemp(prefix="backports-truth-")
    applies_agree: Counter[bool] = Counter()
    applies_real: Counter[bool] = Counter()
    try:
        subprocess.run(
            ["git", "clone", "-q", "--shared", "--no-checkout", r, tmp + "/w"], check=True
        )
        w = ["git", "-C", tmp + "/w", "-c", "user.name=t", "-c", "user.email=t@t"]
        for c in sample:
            tip = git(r, "rev-parse", c["release"]).decode().strip()
            subprocess.run(
                [*w, "checkout", "-q", "-f", "--detach", tip], check=True, capture_output=True
            )
            parents = meta[c["source"]][0]
            extra = ["-m", "1"] if len(parents) > 1 else []
            res = subprocess.run(
                [*w, "cherry-pick", "--no-commit", *extra, c["source"]], capture_output=True
            )
            real = res.returncode == 0
            subprocess.run([*w, "cherry-pick", "--abort"], capture_output=True)
            subprocess.run([*w, "reset", "-q", "--hard"], capture_output=True)
            applies_agree[real == c["applies"]] += 1
            applies_real[real] += 1
            if real != c["applies"]:
                print(
                    f"APPLIES DISAGREE {c['source'][:12]} {c['release']}: harness {c['applies']} "
                    f"/ git cherry-pick {real}: {meta[c['source']][1][:60]}"
                )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(
        f"harness: {took:.1f} s wall; {len(rows)} rows × {len(a.release)} releases = {len(cells)} cells"
    )
    print(f"cells agreeing with plain git: {agree[True]} / {len(cells)}")
    print("harness state × git truth:", dict(sorted(states.items())))
    print(
        f"applies agreeing with a real cherry-pick: {applies_agree[True]} / "
        f"{sum(applies_agree.values())} (git: {applies_real[True]} clean, "
        f"{applies_real[False]} conflicting)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
