"""How much a pick's difference from its source matters: P1 only for source lines the release will
ship without (#26): code and documentation. Lines a pick lacks in tests, CI and repository tooling,
in a file the release branch does not have, or carried by the pick into another file (the release
keeps that configuration elsewhere) are an adaptation to look at (P2), not a partial fix."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from harness.checks.fidelity.compare import FileResult, is_test_path, norm
from harness.infra.lean import lazy_re
from harness.report.model import Severity

# CI and repository tooling: workflows, CI folders, top-level tools/ and dotfiles (.clang-format,
# .coveragerc, .pre-commit-config.yaml), tox/nox files. None of it ships.
_NOT_SHIPPED = lazy_re(
    r"^(\.github|\.circleci|\.gitlab|\.azure-pipelines|\.ci|ci|tools)/|^\.[^/]+$"
    r"|(^|/)(azure-pipelines[^/]*|\.gitlab-ci\.yml|tox\.ini|noxfile\.py)$"
)
MOVED = 0.5  # share of the lacking lines the pick carries in other files: moved, not lacking

_SEVERITY: dict[str, Severity] = {
    "adapted": "P2",
    "superset": "P2",
    "no-source": "P2",
    "whitespace-only": "info",
}


def ships(path: str) -> bool:
    """A file the release ships (code, documentation): not a test, CI or repository tooling."""
    return not (is_test_path(path) or _NOT_SHIPPED.search(path))


def pick_severity(
    status: str,
    files: Sequence[FileResult],
    absent: frozenset[str] | set[str] = frozenset(),
    already: frozenset[str] | set[str] = frozenset(),
) -> tuple[Severity | None, str]:
    """The pick's severity and, when a lack was set aside, why (``absent``: files the source
    changed that the release did not have at the pick's parent; ``already``: files the parent
    already held as the source left them)."""
    if status == "subset":
        lacking = [f for f in files if f.only_source]
    elif status in ("adapted", "superset"):
        lacking = [f for f in files if f.status == "missing-from-pick"]
    else:
        return _SEVERITY.get(status), ""
    if not lacking:
        return _SEVERITY.get(status, "P2"), ""
    shipped = [
        f
        for f in lacking
        if ships(f.path) and f.path not in absent and f.path not in already and _lacks(f)
    ]
    if shipped and not _moved(files, shipped):
        return "P1", ""
    why = []
    if any(f.path in absent for f in lacking):
        why.append("files the release does not have")
    if any(f.path in already for f in lacking):
        why.append("files the release already had as the source left them")
    if any(ships(f.path) and not _lacks(f) for f in lacking):
        why.append("whitespace")
    if any(not ships(f.path) for f in lacking):
        why.append("tests, CI or tooling")
    if shipped:
        why.append("lines the pick carries in another file")
    return "P2", "what it lacks is only in " + " / ".join(why)


def _lacks(f: FileResult) -> bool:
    """Some source line (whitespace aside, blank lines aside) is not among the pick's own."""
    have: dict[bytes, int] = {}
    for ln in f.only_pick:
        key = ln[:1] + norm(ln[1:])
        have[key] = have.get(key, 0) + 1
    for ln in f.only_source:
        key = ln[:1] + norm(ln[1:])
        if len(key) == 1:
            continue
        if have.get(key, 0):
            have[key] -= 1
        else:
            return True
    return False


def _moved(files: Sequence[FileResult], lacking: Sequence[FileResult]) -> bool:
    """The pick carries most of the lacking lines in another file (config kept elsewhere)."""
    wanted = [norm(ln[1:]) for f in lacking for ln in f.only_source if len(norm(ln[1:])) >= 8]
    if not wanted:
        return False
    names = {f.path for f in lacking}
    extra = {norm(ln[1:]) for f in files if f.path not in names for ln in f.only_pick}
    return sum(ln in extra for ln in wanted) >= MOVED * len(wanted)


def at_parent(
    wanted: Sequence[tuple[str, str, str | None]], ids: Mapping[tuple[str, str], str]
) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """For (pick, path, the source's new object id) triples, given the object ids at
    ``(pick^, path)`` (``git/picks.entries_at``; absent pairs left out): the pairs whose path the
    pick's parent does not have, and those where the parent already holds the source's result
    (another pick brought it, e.g. the submodule bump the source carries)."""
    absent, already = set(), set()
    for pick, path, new in wanted:
        got = ids.get((f"{pick}^", path))
        if got is None:
            absent.add((pick, path))
        elif new and got.startswith(new) and len(new) >= 7:
            already.add((pick, path))
    return absent, already
