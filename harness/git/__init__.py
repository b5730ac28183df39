"""The git layer: the only code in harness that talks to git."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from harness.git.repo import EMPTY_TREE, Commit, GitError, GitRepo

__all__ = ["EMPTY_TREE", "Commit", "GitError", "GitRepo"]


def __getattr__(name: str) -> object:
    """The package's names, read from ``repo.py`` when first asked for: importing another module of
    the package (``harness.git.records``) does not load ``repo.py`` and what it imports."""
    if name in __all__:
        from harness.git import repo

        return getattr(repo, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
