"""The git layer: the only code in harness that talks to git."""

from harness.git.repo import EMPTY_TREE, Commit, GitError, GitRepo

__all__ = ["EMPTY_TREE", "Commit", "GitError", "GitRepo"]
