"""Gerrit's ``Change-Id:`` trailer: the name a change keeps through every rebase and cherry-pick.

Gerrit may rebase a change before it merges, so the commit a pick's ``(cherry picked from commit
X)`` names is often not the one that landed; the landed commit carries the same Change-Id.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from harness.checks.fidelity.lines import origins

CHANGE_ID = re.compile(r"^Change-Id:[ \t]*(I[0-9a-f]{40})[ \t]*$", re.MULTILINE | re.IGNORECASE)
# The grep (extended regex, case-insensitive, per line) for the source commits that carry one.
CHANGE_ID_GREP = (r"^Change-Id: I[0-9a-f]{40}",)


def change_ids(message: str) -> list[str]:
    """The Change-Ids of a message, in order, ``I`` upper-cased and the hex lower-cased."""
    out: list[str] = []
    for m in CHANGE_ID.finditer(message):
        cid = "I" + m.group(1)[1:].lower()
        if cid not in out:
            out.append(cid)
    return out


def landed(bodies: Mapping[str, str], order: Mapping[str, int]) -> dict[str, list[str]]:
    """Per Change-Id, the source commits (in ``order``) that carry it, newest first; a commit that
    names an origin (another branch's backport merged in) comes after every one that does not."""
    out: dict[str, list[str]] = {}
    for sha, body in bodies.items():
        if sha in order:
            for cid in change_ids(body):
                out.setdefault(cid, []).append(sha)
    for shas in out.values():
        shas.sort(key=lambda s: (bool(origins(bodies[s])), -order[s]))
    return out
