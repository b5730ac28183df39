"""What a commit's subject (and a pick's body) names: the PR numbers in it, the commits naming
wanted numbers, the subject without its PR numbers and leading tags; read by the source search,
the follow-ups and the release matrix."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from harness.git import Commit
from harness.git.picks import LogEntry
from harness.infra.lean import lazy_re

_PARENS = re.compile(r"\(([^()]*)\)")
_NUMBER = re.compile(r"#(\d+)\b")
# Bot and GitHub conventions outside parentheses: "Backport PR #N: …", "Merge pull request #N from …".
# "PR 123" and "Backport PR 123 onto v2.x" without the "#" too.
_NAMED_PR = lazy_re(r"\b(?:PR|pull request)\s*#?(\d+)\b", re.IGNORECASE)
# The PR a backport branch is named after: "Merge pull request #N from bot/auto-backport-of-pr-M-on-8.x".
_BACKPORT_BRANCH = lazy_re(
    r"^Merge pull request #\d+ from \S*?backport[-_/]?(?:of[-_/]?)?(?:pr[-_/]?)?(\d+)",
    re.IGNORECASE,
)
_BARE_PR = lazy_re(r"\bPR\s*\d", re.IGNORECASE)
BACKPORT = lazy_re(r"\bbackport", re.IGNORECASE)
# Prow's cherry-pick robot: "Automated cherry pick of #11011: Title. #11081: Title (#11118)".
# And by hand: "[release-0.13] Cherry Pick #7024, #7040 (#7042)".
_PICK_OF = lazy_re(r"\bcherry[- ]?pick(?:ed)?(?:\s+of)?\s+#\d", re.IGNORECASE)
# Leading tags: "[release/x] ", "[PR #1/abc backport][3.12] ", "[3.13 backport] ".
_TAGS = re.compile(r"^\s*(?:\[[^\]]*\]\s*)+")
# A message line naming the PR a backport carries: "Backport PR #13999 on branch 8.x (…)".
# "Backport PR 123 onto v2.x" (no "#") too.
_BACKPORT_LINE = lazy_re(r"^\s*Backport(?: of)? PR #?(\d+)\b", re.IGNORECASE | re.MULTILINE)


@functools.lru_cache(maxsize=1 << 16)
def pr_numbers(subject: str) -> tuple[int, ...]:
    """Every ``#N`` inside parentheses ("Fix (#3002) (#3100)", "(#3002 and #3040)"), the ones named
    as a PR ("Backport PR #N: …", "PR 123", "Merge pull request #N from …"), the PR a backport branch is named
    after (first), and every ``#N`` of a subject that says it is a backport ("Backport #1 and #2",
    "Automated cherry pick of #1: … #2: …")."""
    nums: list[int] = []
    if "#" not in subject and not _BARE_PR.search(subject):
        return ()
    branch = _BACKPORT_BRANCH.match(subject)
    found = [branch.group(1)] if branch else []
    found += [n for group in _PARENS.findall(subject) for n in _NUMBER.findall(group)]
    found += _NAMED_PR.findall(subject)
    if BACKPORT.search(subject) or _PICK_OF.search(subject):
        found += _NUMBER.findall(subject)
    for n in found:
        if int(n) not in nums:
            nums.append(int(n))
    return tuple(nums)


def named_prs(commit: Commit) -> tuple[int, ...]:
    """The PR numbers a pick names: its subject's, then "Backport PR #M" lines of its body."""
    body = [int(n) for n in _BACKPORT_LINE.findall(commit.body)] if commit.body else []
    subject = pr_numbers(commit.subject)
    return subject + tuple(n for n in dict.fromkeys(body) if n not in subject)


def numbered(history: Sequence[LogEntry], wanted: set[int]) -> dict[int, list[str]]:
    """The commits whose subject names one of the ``wanted`` PR numbers, per number, in history
    order. A subject's PR numbers are among its ``#N``: one C-level scan rules out the rest."""
    out: dict[int, list[str]] = {}
    if not wanted:
        return out
    for c in history:
        if "#" in c.subject and not wanted.isdisjoint(map(int, _NUMBER.findall(c.subject))):
            for n in pr_numbers(c.subject):
                if n in wanted:
                    out.setdefault(n, []).append(c.sha)
    return out


def strip_numbers(subject: str) -> str:
    """The subject without PR-number groups and a leading ``[release/x]`` tag."""
    s = _PARENS.sub(lambda m: "" if _NUMBER.search(m.group(1)) else m.group(0), subject)
    s = _TAGS.sub("", s)
    return " ".join(s.split()).lower()
