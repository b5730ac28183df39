"""What a check hands on: its typed result, for the command or the next step of the plan, and the
``Section`` that renders it. Nothing downstream reads a section's ``data`` back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from harness.report.model import Section

R = TypeVar("R")


@dataclass(frozen=True)
class Checked(Generic[R]):
    """A check's result and its section (rendering data only)."""

    result: R
    section: Section


@dataclass(frozen=True)
class FidelityResult:
    """What fidelity hands on: the picks, the source PR's commits after the pick's cut point (the
    gaps that mutation controls and the tests section pin), each pick's source commits (the tests
    section's source columns) and the follow-ups no pick carries (more gaps to try)."""

    picks: tuple[str, ...]
    missing_commits: tuple[str, ...]
    sources: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (pick, its source commits)
    followups: tuple[str, ...] = ()
    # (the pick's path, the source's path) of a file the pick carries at another path
    renamed: tuple[tuple[str, str], ...] = ()
    same_files: tuple[str, ...] = ()  # pick paths whose ± lines equal the sources' (every pick)

    def as_json(self) -> dict[str, list[Any]]:
        return {
            "picks": list(self.picks),
            "missing_commits": list(self.missing_commits),
            "sources": [[p, list(s)] for p, s in self.sources],
            "followups": list(self.followups),
            "renamed": [list(pair) for pair in self.renamed],
            "same_files": list(self.same_files),
        }

    @classmethod
    def from_json(cls, raw: Any) -> FidelityResult | None:
        """The result ``as_json`` wrote, or None when ``raw`` is not of that shape."""
        try:
            picks, missing = raw["picks"], raw["missing_commits"]
            sources = tuple((str(p), tuple(map(str, s))) for p, s in raw["sources"])
            followups = raw["followups"]
            renamed = tuple((str(p), str(s)) for p, s in raw.get("renamed", []))
            same = tuple(raw.get("same_files", []))
        except (TypeError, KeyError, ValueError, AttributeError):
            return None
        if not all(isinstance(x, str) for x in [*picks, *missing, *followups, *same]):
            return None
        return cls(tuple(picks), tuple(missing), sources, tuple(followups), renamed, same)
