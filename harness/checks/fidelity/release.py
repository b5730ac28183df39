"""Release-only commits: what a release branch does for itself (version bumps, release notes, the
what's-new page, empty ``[wheel build]`` commits that only trigger CI). They have no source on the
source branch by design, so a pick that is one is info with the reason, whatever its status.

Recognised from what the commit touches, so that "REL: improve release notes" and "DOC: update
1.17.0 release notes" get the same answer: no file at all with a subject that triggers a build
(``[wheel build]``) or names a release; only release notes,
changelogs, what's-new pages and version files; or, when the subject names a release, only docs,
changelog, version and packaging files. A project adds its own paths with the policy key
``release_paths`` (regular expressions searched in each path).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from harness.checks.fidelity.compare import is_release_path
from harness.infra.lean import lazy_re

# Release notes, changelogs, what's-new pages (numpy doc/source/release/2.3.2-notes.rst,
# doc/changelog/…, ipython docs/source/whatsnew/version8.rst, pytest doc/en/changelog.rst).
_NOTES = re.compile(
    r"(^|/)(release[-_ ]?notes?|releases?|what'?s[-_ ]?new|whatsnew|changelogs?)/"
    r"|(^|/)[^/]*(release[-_]?notes?|[-_]notes|changelog|what'?s[-_]?new)[^/]*\.(rst|md|txt)$"
    r"|(^|/)(CHANGELOG|CHANGES|NEWS|HISTORY|RELEASE[-_]?NOTES)[^/]*$",
    re.IGNORECASE,
)
_TRIGGER = lazy_re(
    r"\[(wheel build|build wheels?|ci|ci run|run ci|skip ci|ci skip|build)\]|\b(trigger|re-?run|rebuild)\b",
    re.IGNORECASE,
)
# OpenStack's "[stable-only]" (and "[2024.1-only]", "[release-only]"): made for the branch alone.
_BRANCH_ONLY = re.compile(r"^\s*\[[\w./-]*-only\]", re.IGNORECASE)
_VERSION = re.compile(r"(^|/)(VERSION(\.txt)?|_?version\.py|release\.py)$")


# A version number in a line ("v0.13.5", "1.2.3rc1"): a release bump changes only these.
_VERSION_NUMBER = re.compile(rb"v?\d+(?:\.\d+)+(?:[-.+]?(?:rc|a|b|dev|alpha|beta|post)\.?\d*)?")


def moves_versions(files: Sequence[tuple[str, Sequence[bytes], Sequence[bytes]]]) -> bool:
    """Whether a change (path, added, removed per file) only moves version numbers, besides what
    it writes in release notes, changelogs and version files (kueue's "Prepare release v0.13.5"
    bumps the Makefile, the Helm chart, package.json and the site's config)."""
    moved = False
    for path, added, removed in files:
        if is_notes_or_version(path):
            continue
        plus = Counter(_VERSION_NUMBER.sub(b"V", ln) for ln in added)
        minus = Counter(_VERSION_NUMBER.sub(b"V", ln) for ln in removed)
        if plus != minus:
            return False
        moved = moved or bool(plus)
    return moved


def is_notes_or_version(path: str) -> bool:
    """A release-notes, changelog, what's-new or version file."""
    return bool(_NOTES.search(path) or _VERSION.search(path))


def release_reason(
    subject: str,
    paths: Sequence[str],
    release_subject: bool,
    patterns: Sequence[re.Pattern[str]] = (),
    versions: bool = False,
) -> str | None:
    """Why a commit is release-only, or None. ``release_subject``: its subject names a release
    (fidelity's rule); ``patterns``: the policy's ``release_paths``; ``versions``: it only moves
    version numbers besides release notes (``moves_versions``)."""
    if _BRANCH_ONLY.match(subject):
        return "its subject says it is made for this branch only"
    if not paths:
        # An empty commit is release-only when its subject says it triggers a build (numpy's
        # "[wheel build]") or names a release; another one ("Backport security fix", empty) is
        # left to the usual finding: a reviewer asks where its change went.
        if _TRIGGER.search(subject) or release_subject:
            return "it changes no file: an empty commit that triggers a build or marks a release"
        return None
    if all(is_notes_or_version(p) or any(r.search(p) for r in patterns) for p in paths):
        return "it touches only release notes, changelog, what's-new and version files"
    if release_subject and all(is_release_path(p) for p in paths):
        return "its subject names a release and it touches only version, changelog and docs files"
    if release_subject and versions:
        return "its subject names a release and it only moves version numbers besides its notes"
    return None


def compile_patterns(patterns: Sequence[str]) -> list[re.Pattern[str]]:
    """The policy's ``release_paths`` (validated by ``harness.inputs.policy.load``)."""
    return [re.compile(p) for p in patterns]


RELEASE_SUBJECT = re.compile(
    # After a "[tag] " or a "MAINT: " / "chore(release): " prefix. "Prepare … for further
    # development" is numpy's "back to dev".
    r"^(?:\[[^\]\n]*\]\s*|[a-z]+(?:\([^)\n]*\))?!?:\s*)?"
    r"(REL\b|release\b|prepare\b.*\b(release|further development)\b|bump (the )?version\b|"
    r"back to dev)",
    re.IGNORECASE,
)
