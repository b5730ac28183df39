"""How much a pick's difference from its source matters: P1 only for source lines the release will
ship without (#26): code and documentation. Lines a pick lacks in tests, CI and repository tooling,
in a file the release branch does not have, or carried by the pick into another file (the release
keeps that configuration elsewhere) are an adaptation to look at (P2), not a partial fix."""

from __future__ import annotations

import re
from collections.abc import Sequence

from harness.checks.fidelity_compare import FileResult, is_test_path, norm
from harness.git import GitRepo
from harness.report.model import Severity

# CI and repository tooling: workflows, CI folders, top-level tools/ and dotfiles (.clang-format,
# .coveragerc, .pre-commit-config.yaml), tox/nox files. None of it ships.
_NOT_SHIPPED = re.compile(
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
    status: str, files: Sequence[FileResult], absent: frozenset[str] | set[str] = frozenset()
) -> tuple[Severity | None, str]:
    """The pick's severity and, when a lack was set aside, why (``absent``: files the source
    changed that the release did not have at the pick's parent)."""
    if status == "subset":
        lacking = [f for f in files if f.only_source]
    elif status in ("adapted", "superset"):
        lacking = [f for f in files if f.status == "missing-from-pick"]
    else:
        return _SEVERITY.get(status), ""
    if not lacking:
        return _SEVERITY.get(status, "P2"), ""
    shipped = [f for f in lacking if ships(f.path) and f.path not in absent]
    if shipped and not _moved(files, shipped):
        return "P1", ""
    why = []
    if any(f.path in absent for f in lacking):
        why.append("files the release does not have")
    if any(not ships(f.path) for f in lacking):
        why.append("tests, CI or tooling")
    if shipped:
        why.append("lines the pick carries in another file")
    return "P2", "what it lacks is only in " + " / ".join(why)


def _moved(files: Sequence[FileResult], lacking: Sequence[FileResult]) -> bool:
    """The pick carries most of the lacking lines in another file (config kept elsewhere)."""
    wanted = [norm(ln[1:]) for f in lacking for ln in f.only_source if len(norm(ln[1:])) >= 8]
    if not wanted:
        return False
    names = {f.path for f in lacking}
    extra = {norm(ln[1:]) for f in files if f.path not in names for ln in f.only_pick}
    return sum(ln in extra for ln in wanted) >= MOVED * len(wanted)


def absent_at_parent(repo: GitRepo, wanted: Sequence[tuple[str, str]]) -> set[tuple[str, str]]:
    """(pick, path) pairs whose path the pick's first parent does not have, from one batch-check
    (a submodule's commit is absent from the repository too: it counts as there when the source's
    change to it is a submodule bump, which the caller knows)."""
    if not wanted:
        return set()
    answers = repo.batch_check([f"{pick}^:{path}" for pick, path in wanted], "%(objecttype)")
    return {w for w, a in zip(wanted, answers, strict=True) if a.endswith(" missing")}
