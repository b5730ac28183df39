"""What a check hands on: its typed result, for the command or the next step of the plan, and the
``Section`` that renders it. Nothing downstream reads a section's ``data`` back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from harness.report.model import Section

R = TypeVar("R")


@dataclass(frozen=True)
class Checked(Generic[R]):
    """A check's result and its section (rendering data only)."""

    result: R
    section: Section


@dataclass(frozen=True)
class FidelityResult:
    """What fidelity hands on: the picks, and the source PR's commits after the pick's cut point
    (the gaps that mutation controls can pin)."""

    picks: tuple[str, ...]
    missing_commits: tuple[str, ...]
