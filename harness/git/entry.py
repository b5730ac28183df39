"""A commit as a source-history scan holds it (``LogEntry``), and its columns as getters.

No ``from __future__ import annotations`` here: a NamedTuple's fields given as strings are compiled
one by one by ``typing`` at every start."""

from operator import itemgetter
from typing import NamedTuple


class LogEntry(NamedTuple):
    """The little a source-history scan needs of a commit (no body: cheaper to read and parse). A
    named tuple: a history holds one per commit (100k), built four times faster than a frozen
    dataclass."""

    sha: str
    parents: tuple[str, ...]
    author_time: int
    subject: str
    paths: tuple[str, ...] | None = None  # changed paths (vs first parent) when asked for
    commit_time: int = 0

    @property
    def is_merge(self) -> bool:
        # A loop over a whole history tests ``len(c.parents) > 1`` itself: this call, 100k times
        # over, was a tenth of a run after one new pick.
        return len(self.parents) > 1


# A LogEntry's columns, for C-level maps over a whole history (``set(map(ENTRY_SHA, history))``).
ENTRY_SHA, ENTRY_PARENTS, ENTRY_SUBJECT, ENTRY_COMMITTED = (itemgetter(i) for i in (0, 1, 3, 5))
ENTRY_SHA_PARENTS = itemgetter(0, 1)
