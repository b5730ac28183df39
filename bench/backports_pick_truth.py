"""Real cherry-picks as the truth of `harness backports` cells (#47; not part of the pytest run).

    python bench/backports_pick_truth.py --repo MIRROR --source main --release A --release B \
        [--sample 40] [--json harness.json]

Runs `harness backports --format json` (or reads ``--json``), then settles with git alone, in a
throwaway `git clone --shared` of the repository under /tmp (the repository is never changed):

- every `reached` cell, every cell of a `backport-regression` finding, and a sample of the other
  cells (``--sample``, spread over the states and releases, fixed seed);
- each by a real `git cherry-pick --no-commit [-m 1] S` onto the release tip: `empty` (clean and
  nothing to commit: the change is there), `applies` (clean, a real change), `conflicts`;
- `in-fork` cells also by `merge-base --is-ancestor S $(merge-base SOURCE R)`.

Agreement: `reached` and `in-fork` need `empty` (a `reached` by a release commit: or that commit
has S's patch id; `in-fork`: or S is an ancestor of the fork point — a later release commit may
have changed the lines since); `missing · applies` needs `applies`, `missing · conflicts` needs
`conflicts`; `n/a` needs a cherry-pick that is not empty; `picked` is `empty`, or the pick names S
in a `(cherry picked from commit S)` trailer or has S's patch id, or else printed for reading by
hand with fidelity's status (an adapted pick is not the source's diff), as is a `reached
(subject)` whose commit is neither. Prints every disagreement and the figures.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
from collections import Counter


def git(*args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], capture_output=True, check=check)


def harness_json(args: argparse.Namespace) -> dict:
    if args.json:
        with open(args.json, encoding="utf-8") as fh:
            return json.load(fh)
    cmd = [sys.executable, "-m", "harness", "backports", "--repo", args.repo]
    cmd += ["--source", args.source, "--format", "json", "--fail-on", "never"]
    for r in args.release:
        cmd += ["--release", r]
    if args.candidates:
        cmd += ["--candidates", args.candidates]
    return json.loads(subprocess.run(cmd, capture_output=True, check=True).stdout)


def cherry_pick(clone: str, tip: str, sha: str) -> str:
    """empty / applies / conflicts: a real cherry-pick of ``sha`` onto ``tip``."""
    git("-C", clone, "reset", "-q", "--hard")
    git("-C", clone, "clean", "-q", "-fdx")
    git("-C", clone, "checkout", "-q", "-f", "--detach", tip)
    parents = git("-C", clone, "rev-list", "--parents", "-n1", sha).stdout.split()
    merge = ["-m", "1"] if len(parents) > 2 else []
    proc = git("-C", clone, "cherry-pick", "--no-commit", *merge, sha, check=False)
    if proc.returncode != 0:
        outcome = "conflicts"
    else:
        same = git("-C", clone, "diff", "--cached", "--quiet", "HEAD", check=False)
        outcome = "empty" if same.returncode == 0 else "applies"
    git("-C", clone, "cherry-pick", "--abort", check=False)
    return outcome


def names_or_twin(clone: str, pick: str, sha: str) -> bool:
    """The pick's message names ``sha`` (``cherry picked from commit``), or the two have one
    ``git patch-id --stable``."""
    message = git("-C", clone, "log", "-1", "--format=%B", pick).stdout.decode("utf-8", "replace")
    if f"cherry picked from commit {sha}" in message:
        return True
    ids = []
    for c in (pick, sha):
        diff = git("-C", clone, "diff-tree", "-p", "-m", "--first-parent", c).stdout
        out = subprocess.run(
            ["git", "-C", clone, "patch-id", "--stable"], input=diff, capture_output=True
        ).stdout.split()
        ids.append(out[0] if out else b"")
    return bool(ids[0]) and ids[0] == ids[1]


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--repo", required=True)
    p.add_argument("--source", required=True)
    p.add_argument("--release", action="append", required=True)
    p.add_argument("--sample", type=int, default=40)
    p.add_argument("--json")
    p.add_argument("--candidates")
    args = p.parse_args()
    doc = harness_json(args)
    (section,) = [s for s in doc["sections"] if s["id"] == "backports"]
    data = section["data"]
    tips = {r["release"]: r["tip"] for r in data["releases"]}
    forks = {r["release"]: r["fork_point"] for r in data["releases"]}
    cells = data["cells"]
    by = {(c["source"], c["release"]): c for c in cells}
    regression = []
    for f in section["findings"]:
        if f["kind"] == "backport-regression":
            sha, newer = f["key"].split(":")[:2]
            older = f["title"].split(" is fixed in ", 1)[1].split(" but missing", 1)[0]
            regression += [(sha, newer), (sha, older)]
    wanted = [(c["source"], c["release"]) for c in cells if c["state"] == "reached"]
    wanted += [k for k in regression if k not in wanted]
    rest = [(c["source"], c["release"]) for c in cells if (c["source"], c["release"]) not in wanted]
    rng = random.Random(47)
    by_state: dict[str, list[tuple[str, str]]] = {}
    for k in rest:
        by_state.setdefault(by[k]["state"], []).append(k)
    sample: list[tuple[str, str]] = []
    while len(sample) < args.sample and any(by_state.values()):
        for state in sorted(by_state):
            if by_state[state] and len(sample) < args.sample:
                sample.append(by_state[state].pop(rng.randrange(len(by_state[state]))))
    tmp = tempfile.mkdtemp(prefix="bp-truth-")
    clone = f"{tmp}/clone"
    try:
        git("clone", "-q", "--shared", "--no-checkout", args.repo, clone)
        agree = Counter()
        total = Counter()
        wrong = []
        hand = []
        for key in wanted + sample:
            c = by[key]
            sha, rel = key
            state = c["state"]
            label = "reached" if key in wanted and state == "reached" else state
            if key in regression:
                label = "regression:" + ("missing" if state == "missing" else "fixed")
            outcome = cherry_pick(clone, tips[rel], sha)
            if state in ("reached", "in-fork"):
                ok = outcome == "empty"
                if state == "reached" and c["pick"] and not ok:  # patch-id / subject: that commit
                    ok = names_or_twin(clone, c["pick"], sha)
                    if not ok and c["how"] == "subject":  # an adapted copy: read by hand
                        hand.append((sha, rel, "reached (subject)", c["pick"], outcome))
                        ok = None
                if state == "in-fork" and not ok:
                    anc = git(
                        "-C", clone, "merge-base", "--is-ancestor", sha, forks[rel], check=False
                    )
                    ok = anc.returncode == 0
            elif state == "missing":
                ok = outcome == {True: "applies", False: "conflicts", None: outcome}[c["applies"]]
                if key in regression:
                    ok = ok and outcome != "empty"
            elif state == "n/a":
                ok = outcome != "empty"
            else:  # picked: the pick names S in a trailer, or has S's patch id, or the pick is empty
                ok = outcome == "empty" or names_or_twin(clone, c["pick"], sha)
                if not ok:
                    hand.append((sha, rel, c["status"], c["pick"], outcome))
                    ok = None
            total[label] += 1
            if ok:
                agree[label] += 1
            elif ok is False:
                wrong.append((sha[:12], rel, state, c["how"], c["applies"], outcome))
        print("settled by a real cherry-pick:")
        for label in sorted(total):
            print(f"  {label:24} {agree[label]:4} / {total[label]}")
        for w in wrong:
            print("DISAGREE", *w)
        for h in hand:
            print("not empty, read by hand:", h[0][:12], h[1], h[2], h[3][:12], h[4])
        print(f"cells: {len(cells)}; settled {sum(total.values())}; disagree {len(wrong)}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
