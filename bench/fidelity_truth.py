"""Plain-git truth for `harness fidelity` on a real release range (not part of the pytest run).

    python bench/fidelity_truth.py --repo PATH --range BASE..HEAD --source REF [--harness-json FILE]

Computed with git alone, independently of harness, for every history shape:

- picks: `rev-list --no-merges HEAD ^BASE`, less what a merge on HEAD's first-parent line whose
  second parent is on SOURCE's first-parent line brought in (`rev-list M^2 ^M^1`: main merged back),
  or one that changed nothing (`git diff --quiet M^1 M`: an old branch joined with `-s ours`);
  a release merged forward into SOURCE keeps its picks;
- candidate sources: `rev-list SOURCE ^fork`, less the picks and less what a merge of the release
  into SOURCE brought (a merge whose second parent `merge-base --is-ancestor` HEAD), and that merge;
- a pick's true source, in this order: the commit its message names as its origin (`(cherry picked
  from commit X)`, `[PR #N/X backport]`, `Backport of X`), itself replaced by the origin its own
  message names; the candidate with the same `git patch-id --stable` (merges by their first-parent
  diff; ± lines only, whitespace ignored); the one candidate whose subject carries the pick's last
  PR number ("(#N)", "Merge pull request #N", a `backport-of-pr-N` branch, a "Backport PR #N"
  line); the one candidate with the pick's subject (leading `[tags]` and `(#N)` aside); the one
  candidate with the pick's author, author date and subject.
- truth status: "identical" when the patch ids agree, "differs" when they do not; without a
  source, "forward-merged" when the pick is an ancestor of SOURCE, else "none".

Prints each disagreement with harness, then the figures.
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
    every = git(r, "rev-list", "--reverse", "--no-merges", head, f"^{base}").decode().split()
    src_line = set(git(r, "rev-list", "--first-parent", a.source).decode().split())
    merged_back: set[str] = set()
    for line in (
        git(r, "rev-list", "--first-parent", "--merges", "--parents", head, f"^{base}")
        .decode()
        .splitlines()
    ):
        m, p1, *others = line.split()
        # A merge that changed nothing (`git diff --quiet M^1 M`: "-s ours") brought history only.
        ours = subprocess.run(["git", "--git-dir", r, "diff", "--quiet", p1, m]).returncode == 0
        for p2 in others:
            if p2 in src_line or ours:
                merged_back |= set(git(r, "rev-list", p2, f"^{p1}").decode().split())
    picks = [c for c in every if c not in merged_back]
    fork = git(r, "merge-base", a.source, head).decode().strip()
    # Where HEAD merged SOURCE back in, the merge base moves up: count from the oldest one instead.
    first = git(r, "rev-list", "--first-parent", "--reverse", head, f"^{base}").decode().split()
    if first:
        parent = git(r, "rev-list", "--parents", "-n", "1", first[0]).decode().split()[1:2]
        if parent:
            fork = git(r, "merge-base", a.source, parent[0]).decode().strip()
    # Merges of the release into SOURCE (their second parent is an ancestor of HEAD): what they
    # brought, and they, are no source.
    released: set[str] = set()
    for line in (
        git(r, "rev-list", "--merges", "--parents", a.source, f"^{fork}").decode().splitlines()
    ):
        m, p1, *others = line.split()
        for p2 in others:
            if (
                subprocess.run(
                    ["git", "--git-dir", r, "merge-base", "--is-ancestor", p2, head]
                ).returncode
                == 0
            ):
                released |= {m} | set(git(r, "rev-list", p2, f"^{p1}").decode().split())
    candidates = (
        set(git(r, "rev-list", a.source, f"^{fork}").decode().split()) - released - set(picks)
    )
    src_ids = {c: p for c, p in patch_ids(r, [a.source, f"^{fork}"]).items() if c in candidates}
    by_id: dict[str, list[str]] = {}
    for c, p in src_ids.items():
        by_id.setdefault(p, []).append(c)
    pick_ids = patch_ids(r, ["--no-walk=unsorted", *picks]) if picks else {}
    subjects = {
        c: s
        for c, s in (
            line.split(" ", 1)
            for line in git(r, "log", "--format=%H %s", a.source, f"^{fork}").decode().splitlines()
        )
        if c in candidates
    }
    # A cherry-pick keeps author, author date and subject: the plain-git signal of a pick without -x.
    by_author: dict[str, list[str]] = {}
    for line in git(r, "log", "--format=%H %ae %at %s", a.source, f"^{fork}").decode().splitlines():
        c, key = line.split(" ", 1)
        if c in candidates:
            by_author.setdefault(key, []).append(c)

    def bare(subject: str) -> str:
        subject = re.sub(r"^\s*(\[[^\]]*\]\s*)+", "", subject)
        return " ".join(re.sub(r"\(#\d+\)", "", subject).split()).lower()

    by_subject: dict[str, list[str]] = {}
    for c, subj in subjects.items():
        if subj and not subjects[c].startswith("Merge "):
            by_subject.setdefault(bare(subj), []).append(c)
    by_pr: dict[str, list[str]] = {}
    for c, s in subjects.items():
        for n in re.findall(r"\(#(\d+)\)\s*$|^Merge pull request #(\d+)", s):
            by_pr.setdefault(n[0] or n[1], []).append(c)
    origin_re = re.compile(
        r"\(cherry picked from commit ([0-9a-f]{7,64})\)|\[?PR #\d+/([0-9a-f]{7,64}) backport\]"
        r"|Backport of ([0-9a-f]{7,64})"
    )

    def full(sha: str) -> str:
        return (
            subprocess.run(
                ["git", "--git-dir", r, "rev-parse", "-q", "--verify", f"{sha}^{{commit}}"],
                capture_output=True,
            )
            .stdout.decode()
            .strip()
        )

    def named(msg: str) -> list[str]:
        return [full(next(g for g in m if g)) for m in origin_re.findall(msg)]

    def origin(sha: str) -> str:
        for _ in range(8):
            up = [
                o
                for o in named(git(r, "log", "-1", "--format=%B", sha).decode())
                if o in candidates and o != sha
            ]
            if not up:
                return sha
            sha = up[0]
        return sha

    reach = set(git(r, "rev-list", a.source, f"^{fork}").decode().split())
    agree_src = agree_status = 0
    rows = []
    for p in picks:
        body = git(r, "log", "-1", "--format=%s%n%b", p).decode()
        subj = body.splitlines()[0]
        truth, how = None, "none"
        trailers = named(body)
        for t in trailers:
            if t in candidates:
                truth, how = origin(t), "trailer"
                break
        if truth is None and trailers and trailers[0]:
            # The named origin is off the source history (behind the fork point, on the release
            # already): it is still the commit the pick says it carries.
            truth, how = trailers[0], "trailer off the source history"
        if truth is None and pick_ids.get(p) in by_id:
            truth, how = sorted(by_id[pick_ids[p]], key=lambda c: c in subjects)[0], "patch-id"
            truth = origin(truth)
        if truth is None and not subj.startswith("Revert "):  # a revert names what it undoes
            nums = re.findall(r"#(\d+)", subj) + re.findall(r"backport-of-pr-(\d+)", subj)
            nums += re.findall(r"^Backport PR #(\d+)", body, re.M)
            for n in reversed(nums):
                if len(by_pr.get(n, [])) == 1:
                    truth, how = origin(by_pr[n][0]), "pr-number"
                    break
        if truth is None:  # the one candidate with the same subject, [tags] and (#N) aside
            same = by_subject.get(bare(subj), [])
            if len(same) == 1:
                truth, how = same[0], "subject"
        if truth is None:
            same = by_author.get(git(r, "log", "-1", "--format=%ae %at %s", p).decode().strip(), [])
            if len(same) == 1:
                truth, how = same[0], "author+date"
        tstatus = (
            ("forward-merged" if p in reach else "none")
            if truth is None
            else (
                "identical"
                if (src_ids.get(truth) or patch_ids(r, ["--no-walk", truth]).get(truth))
                == pick_ids.get(p)
                else "differs"
            )
        )
        h = hp.get(p)
        hsrc = h["source"] if h else None
        hstatus = h["status"] if h else "not a pick"
        hident = hstatus in ("identical", "whitespace-only")
        hmatch = (
            hident == (tstatus == "identical")
            and (hstatus in ("no-source", "forward-merged"))
            == (tstatus in ("none", "forward-merged"))
            and (hstatus == "forward-merged") == (tstatus == "forward-merged")
        )
        if h and h.get(
            "copy_of"
        ):  # harness: the only candidate is a later copy of this branch's commit
            hsrc, hstatus, hmatch = None, "copy", tstatus in ("none", "forward-merged")
        # Commits with the same ± lines (a one-commit PR and its merge, a change merged twice) are
        # one source as far as plain git can tell.
        same_change = by_id.get(src_ids.get(truth, ""), []) if truth else []
        # A PR merged with a merge commit is one source: harness names the merge, git the commit in it.
        in_pr = truth in {c["sha"] for c in (h or {}).get("pr_commits", [])}
        src_ok = hsrc == truth or hsrc in same_change or in_pr or (h and truth in h["sources"])
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
