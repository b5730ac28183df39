"""Plain-git truth for `harness fidelity` on review systems other than GitHub (issue #40).

    python bench/review_truth.py --repo GIT_DIR --range BASE..HEAD --source REF [--harness-json F]

Computed with git alone, not with harness code:

- picks: `rev-list --no-merges HEAD ^BASE ^SOURCE`;
- candidates: `rev-list --no-merges SOURCE ^merge-base(SOURCE, HEAD)`;
- a pick's true source, in this order: the commit its `(cherry picked from commit X)` trailer names
  when `merge-base --is-ancestor X SOURCE` (else the trailer only says where the pick came from);
  the newest candidate carrying the pick's `Change-Id:` (`log --grep`); the candidate with the same
  `git patch-id --stable`; the candidates whose subject ends with "(#N)" for a number the pick's
  subject names (`#N`, `PR N`; several: compared with their union's patch id); the one candidate
  with the pick's subject (`[tags]` and `(#N)` aside); else none;
- truth status: "identical" when the patch ids agree, else "differs"; "none" without a source.

Prints every pick with both answers (disagreements marked `!!`), then the figures.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys

_TRAILER = re.compile(r"\(cherry picked from commit ([0-9a-f]{7,40})\)")
_CHANGE_ID = re.compile(r"^Change-Id:\s*(I[0-9a-f]{40})\s*$", re.M)
_PR = re.compile(r"(?:#|\bPR\s*)(\d+)\b", re.I)
_TAGS = re.compile(r"^\s*(\[[^\]]*\]\s*)+")


def git(repo: str, *args: str, input: bytes | None = None, check: bool = True) -> str:
    got = subprocess.run(["git", "--git-dir", repo, *args], input=input, capture_output=True)
    if check and got.returncode:
        raise SystemExit(got.stderr.decode())
    return got.stdout.decode("utf-8", "replace") if got.returncode == 0 else ""


def patch_ids(repo: str, shas: list[str]) -> dict[str, str]:
    """commit → `git patch-id --stable` of its -U0 diff (whitespace ignored)."""
    if not shas:
        return {}
    diff = subprocess.run(
        ["git", "--git-dir", repo, "log", "-p", "-U0", "--no-walk=unsorted", "--format=commit %H"]
        + ["--stdin"],
        input="\n".join(shas).encode(),
        capture_output=True,
        check=True,
    ).stdout
    out = git(repo, "patch-id", "--stable", input=diff)
    return {c: p for p, c in (ln.split() for ln in out.splitlines())}


def union_id(repo: str, shas: list[str]) -> str:
    """`git patch-id --stable` of several commits' -U0 diffs as one patch."""
    diff = b"commit 0000000000000000000000000000000000000000\n" + b"".join(
        subprocess.run(
            ["git", "--git-dir", repo, "show", "-U0", "--format=", s], capture_output=True
        ).stdout
        for s in shas
    )
    out = git(repo, "patch-id", "--stable", input=diff).split()
    return out[0] if out else ""


def messages(repo: str, *args: str) -> dict[str, tuple[str, str]]:
    """sha → (subject, whole message)."""
    raw = git(repo, "log", "--format=%H%x00%s%x00%B%x01", *args)
    out = {}
    for rec in raw.split("\x01"):
        if "\x00" in rec:
            sha, subject, body = rec.strip("\n").split("\x00", 2)
            out[sha] = (subject, body)
    return out


def subject_key(s: str) -> str:
    return " ".join(_TAGS.sub("", re.sub(r"\(#\d+\)", "", s)).split()).lower()


def truth(repo: str, base: str, head: str, source: str) -> dict[str, tuple[str | None, str, str]]:
    """pick → (source, how, status)."""
    fork = git(repo, "merge-base", source, head).strip()
    picks = messages(repo, "--no-merges", "--reverse", head, f"^{base}", f"^{source}")
    cands = messages(repo, "--no-merges", source, f"^{fork}")
    ids = patch_ids(repo, list(picks) + list(cands))
    by_id: dict[str, list[str]] = {}
    for c in cands:
        by_id.setdefault(ids.get(c, ""), []).append(c)
    out: dict[str, tuple[str | None, str, str]] = {}
    for p, (subject, body) in picks.items():
        src, how = None, "none"
        for t in _TRAILER.findall(body):
            full = git(repo, "rev-parse", "-q", "--verify", f"{t}^{{commit}}", check=False).strip()
            on = (
                full
                and subprocess.run(
                    ["git", "--git-dir", repo, "merge-base", "--is-ancestor", full, source]
                ).returncode
                == 0
            )
            if on:
                src, how = full, "trailer"
                break
        if src is None:
            for cid in _CHANGE_ID.findall(body):
                got = git(
                    repo,
                    "log",
                    "--no-merges",
                    "-F",
                    f"--grep=Change-Id: {cid}",
                    "--format=%H",
                    source,
                    f"^{fork}",
                ).split()
                if got:
                    src, how = got[0], "change-id"
                    break
        if src is None and ids.get(p) in by_id:
            src, how = by_id[ids[p]][0], "patch-id"
        if src is None:
            # Every PR the subject names ("Automated cherry pick of #A: … #B: … (#C)": A, B and
            # the release's own C); main's commits end with "(#N)".
            nums = set(_PR.findall(subject))
            hit = [c for c, (s, _) in cands.items() if set(re.findall(r"\(#(\d+)\)$", s)) & nums]
            if hit:
                src, how = ",".join(hit), "pr-number"
        if src is None:
            same = [c for c, (s, _) in cands.items() if subject_key(s) == subject_key(subject)]
            if len(same) == 1:
                src, how = same[0], "subject"
        if src is not None and "," in src:  # several PRs: the patch id of their union
            status = "identical" if union_id(repo, src.split(",")) == ids.get(p) else "differs"
        elif src is not None:
            sid = ids.get(src) or patch_ids(repo, [src]).get(src)
            status = "identical" if sid and sid == ids.get(p) else "differs"
        else:
            status = "none"
        out[p] = (src, how, status)
    return out


def harness_picks(path: str) -> dict[str, dict]:
    data = json.load(open(path))
    return {p["pick"]: p for p in data["sections"][0]["data"]["picks"]}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", required=True)
    ap.add_argument("--range", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--harness-json", required=True)
    a = ap.parse_args()
    base, head = a.range.split("..")
    t = truth(a.repo, base, head, a.source)
    h = harness_picks(a.harness_json)
    src_ok = status_ok = 0
    for p, (src, how, status) in t.items():
        hp = h.get(p, {})
        hsrc = hp.get("sources") or []
        if hp.get("forward_port"):  # harness: a later copy of this branch's own commit
            hp = {**hp, "source_via": f"forward-port of {hp['forward_port']['sha'][:10]}"}
        hstat = {"identical": "identical", "whitespace-only": "identical", None: "missing"}.get(
            hp.get("status"), "differs" if hsrc else "none"
        )
        s_ok = (
            (set(src.split(",")) == set(hsrc) if "," in src else src in hsrc) if src else not hsrc
        )
        st_ok = hstat == status
        src_ok += s_ok
        status_ok += s_ok and st_ok
        mark = "  " if s_ok and st_ok else "!!"
        print(
            f"{mark} {p[:10]} truth {','.join(x[:10] for x in (src or '-').split(','))} {how:9} {status:9} | harness "
            f"{','.join(x[:10] for x in hsrc) or '-':10} {hp.get('source_via')} {hp.get('status')}"
        )
    print(f"picks {len(t)} (harness {len(h)}), source agrees {src_ok}, status agrees {status_ok}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
