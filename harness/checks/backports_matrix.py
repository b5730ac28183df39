"""The release matrix's types: a cell (one source commit on one release), a row, a release and
the whole result; the lowest of the ``backports_*`` modules, which every other one reads."""

from __future__ import annotations

from dataclasses import dataclass

STATES = ("picked", "in-fork", "reached", "missing", "n/a")


@dataclass(frozen=True)
class MatrixCell:
    source: str
    release: str  # the REF as given
    state: str  # one of STATES
    pick: str | None = None  # the pick (picked) or the release commit / merge that reached it
    status: str | None = None  # fidelity's status of the pick (picked only)
    applies: bool | None = None  # missing only: True / False; None when not tried or unknown
    how: str | None = None  # reached: merged / patch-id / subject / in place

    def as_dict(self) -> dict[str, object]:
        return {
            "source": self.source,
            "release": self.release,
            "state": self.state,
            "pick": self.pick,
            "status": self.status,
            "applies": self.applies,
            "how": self.how,
        }


@dataclass(frozen=True)
class MatrixRow:
    sha: str
    subject: str
    reasons: tuple[str, ...]  # picked / candidate / rule
    prs: tuple[int, ...] = ()
    also: tuple[str, ...] = ()  # other commits of the same change (patch id, Change-Id, PR)


@dataclass(frozen=True)
class ReleaseInfo:
    name: str  # as given
    tip: str
    fork: str
    fork_time: int
    picks: int


@dataclass(frozen=True)
class BackportsResult:
    source: str
    releases: tuple[ReleaseInfo, ...]  # oldest first
    rows: tuple[MatrixRow, ...]
    cells: tuple[MatrixCell, ...]  # row-major, releases oldest first
    unmatched: tuple[str, ...] = ()  # candidate entries that named no commit (PR numbers)
    controls: tuple[tuple[str, str, bool | None], ...] = ()
    notes: tuple[str, ...] = ()  # about the input (a --release given twice)

    def cell(self, source: str, release: str) -> MatrixCell:
        return next(c for c in self.cells if c.source == source and c.release == release)
