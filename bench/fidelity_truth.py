"""Plain-git truth for `harness fidelity` on a real release range (not part of the pytest run).

    python bench/fidelity_truth.py --repo PATH --range BASE..HEAD --source REF [--harness-json FILE]

Computed with git alone, independently of harness: the picks are `rev-list --no-merges HEAD ^BASE
^SOURCE`; each pick's true source is, in this order, the commit its `(cherry picked from commit X)`
trailer names, the source-history commit with the same `git patch-id --stable` (merges by their
first-parent diff; ± lines only, whitespace ignored), the commit whose subject carries the pick's
last PR number ("(#N)" or "Merge pull request #N"), or the one commit with the pick's author,
author date and subject. Truth status: "identical" when the patch ids agree, "differs" when they
do not, "none" without a source. Prints each disagreement with harness, then the figures.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time


def git(repo: str, *args: str, input: bytes | None = None) -> bytes:
    return subprocess.run(
        ["git", "--git-dir", repo, *args], input=input, capture_output=True, check=True
    ).stdout


def patch_ids(repo: str, log_args: list[str]) -> dict[str, str]:
    """commit → stable patch id of the ± lines (no context: -U0), from one `git log -p` piped into
    `git patch-id --stable` (which ignores whitespace)."""
    diff = git(
        repo, "log", "-p", "-U0", "--diff-merges=first-parent", "--format=commit %H", *log_args
    )
    out = git(repo, "patch-id", "--stable", input=diff).decode()
    return {c: p for p, c in (line.split() for line in out.splitlines())}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", required=True)
    ap.add_argument("--range", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument(
        "--harness-json", help="a `harness fidelity --format json` report (else harness is run)"
    )
    a = ap.parse_args()
    base, head = a.range.split("..")
    r = a.repo
    t0 = time.time()
    if a.harness_json:
        doc = json.load(open(a.harness_json))
        took = None
    else:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "harness",
                "fidelity",
                a.range,
                "--source",
                a.source,
                "--repo",
                r,
                "--format",
                "json",
                "--fail-on",
                "never",
            ],
            capture_output=True,
            check=True,
        )
        took = time.time() - t0
        doc = json.loads(proc.stdout)
    hp = {p["pick"]: p for p in doc["sections"][0]["data"]["picks"]}
    picks = (
        git(r, "rev-list", "--reverse", "--no-merges", head, f"^{base}", f"^{a.source}")
        .decode()
        .split()
    )
    fork = git(r, "merge-base", a.source, head).decode().strip()
    # Where HEAD merged SOURCE back in, the merge base moves up: count from the oldest one instead.
    first = git(r, "rev-list", "--first-parent", "--reverse", head, f"^{base}").decode().split()
    if first:
        parent = git(r, "rev-list", "--parents", "-n", "1", first[0]).decode().split()[1:2]
        if parent:
            fork = git(r, "merge-base", a.source, parent[0]).decode().strip()
    src_ids = patch_ids(r, [a.source, f"^{fork}"])
    by_id: dict[str, list[str]] = {}
    for c, p in src_ids.items():
        by_id.setdefault(p, []).append(c)
    pick_ids = patch_ids(r, ["--no-walk=unsorted", *picks]) if picks else {}
    subjects = dict(
        line.split(" ", 1)
        for line in git(r, "log", "--format=%H %s", a.source, f"^{fork}").decode().splitlines()
    )
    # A cherry-pick keeps author, author date and subject: the plain-git signal of a pick without -x.
    by_author: dict[str, list[str]] = {}
    for line in git(r, "log", "--format=%H %ae %at %s", a.source, f"^{fork}").decode().splitlines():
        c, key = line.split(" ", 1)
        by_author.setdefault(key, []).append(c)
    by_pr: dict[str, list[str]] = {}
    for c, s in subjects.items():
        for n in re.findall(r"\(#(\d+)\)\s*$|^Merge pull request #(\d+)", s):
            by_pr.setdefault(n[0] or n[1], []).append(c)
    agree_src = agree_status = 0
    rows = []
    for p in picks:
        body = git(r, "log", "-1", "--format=%s%n%b", p).decode()
        subj = body.splitlines()[0]
        truth, how = None, "none"
        trailers = re.findall(r"\(cherry picked from commit ([0-9a-f]{7,64})\)", body)
        for t in trailers:
            full = (
                subprocess.run(
                    ["git", "--git-dir", r, "rev-parse", "-q", "--verify", f"{t}^{{commit}}"],
                    capture_output=True,
                )
                .stdout.decode()
                .strip()
            )
            if full in subjects:
                truth, how = full, "trailer"
                break
        if truth is None and pick_ids.get(p) in by_id:
            truth, how = sorted(by_id[pick_ids[p]], key=lambda c: c in subjects)[0], "patch-id"
        if truth is None:
            nums = re.findall(r"#(\d+)", subj)
            for n in reversed(nums):
                if len(by_pr.get(n, [])) == 1:
                    truth, how = by_pr[n][0], "pr-number"
                    break
        if truth is None:
            same = by_author.get(git(r, "log", "-1", "--format=%ae %at %s", p).decode().strip(), [])
            if len(same) == 1:
                truth, how = same[0], "author+date"
        if truth is None and trailers:
            how = "trailer off the source branch"
        tstatus = (
            "none"
            if truth is None
            else ("identical" if src_ids.get(truth) == pick_ids.get(p) else "differs")
        )
        h = hp.get(p)
        hsrc = h["source"] if h else None
        hstatus = h["status"] if h else "not a pick"
        hident = hstatus in ("identical", "whitespace-only")
        hmatch = hident == (tstatus == "identical") and (hstatus == "no-source") == (
            tstatus == "none"
        )
        if h and h.get(
            "copy_of"
        ):  # harness: the only candidate is a later copy of this branch's commit
            hsrc, hstatus, hmatch = None, "copy", tstatus == "none"
        # Commits with the same ± lines (a one-commit PR and its merge, a change merged twice) are
        # one source as far as plain git can tell.
        same_change = by_id.get(src_ids.get(truth, ""), []) if truth else []
        # A PR merged with a merge commit is one source: harness names the merge, git the commit in it.
        in_pr = truth in {c["sha"] for c in (h or {}).get("pr_commits", [])}
        src_ok = hsrc == truth or hsrc in same_change or in_pr
        agree_src += bool(src_ok)
        agree_status += bool(hmatch)
        if not (src_ok and hmatch):
            rows.append(
                f"{p[:10]} truth {how}:{(truth or '-')[:10]} {tstatus:9} | harness "
                f"{(h or {}).get('source_via')}:{(hsrc or '-')[:10]} {hstatus:10} | {subj[:70]}"
            )
    print("\n".join(rows))
    print(
        json.dumps(
            {
                "repo": r,
                "range": a.range,
                "source": a.source,
                "picks": len(picks),
                "harness_picks": len(hp),
                "source_agree": agree_src,
                "status_agree": agree_status,
                "harness_seconds": round(took, 1) if took else None,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
