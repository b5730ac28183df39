"""Trees at a ref, written out to a directory the harness owns (never the user's work tree)."""

from __future__ import annotations

import io
import tarfile
import threading
from pathlib import Path

from harness.git.repo import GitRepo, run_git

# What ``git archive`` honours and a checkout does not: a tree's ``.gitattributes`` can leave whole
# folders out of an archive (``tests/ export-ignore``, common to slim release tarballs). Trees are
# written as a checkout has them: through a git folder of the harness's own whose
# ``info/attributes`` (read after the tree's own) turns both off, and which borrows the repository's
# objects (``objects/info/alternates``): the repository itself is never written.
_CHECKOUT_ATTRIBUTES = "* -export-ignore -export-subst\n"
_shadows: dict[Path, Path] = {}
_shadow_lock = threading.Lock()


def tree_sha(repo: GitRepo, rev: str) -> str:
    """The tree id of a commit-ish (content identity of a column)."""
    return repo.resolve(rev, "tree")


def export_tree(repo: GitRepo, rev: str, dest: Path) -> str:
    """Write the files of ``rev`` into ``dest`` (created if needed) with ``git archive``.

    Nothing in the user's repository changes: no index, no worktree registration.
    Returns the tree sha that was exported.
    """
    tree = tree_sha(repo, rev)
    dest.mkdir(parents=True, exist_ok=True)
    data = _archive(repo, tree)
    # numeric_owner: git archive names every entry root's; as root, extracting chowns to uid 0
    # either way, and skips a user-database lookup per entry (~0.1 ms each).
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(dest, numeric_owner=True, filter="tar")
        else:
            tar.extractall(dest, numeric_owner=True)
    return tree


def archive_bytes(repo: GitRepo, rev: str) -> tuple[str, bytes]:
    """The tree of ``rev`` as ``git archive`` tar bytes (what travels to remote workers), and its sha."""
    tree = tree_sha(repo, rev)
    return tree, _archive(repo, tree)


def _archive(repo: GitRepo, tree: str) -> bytes:
    """``git archive`` of ``tree`` with the archive-only attributes off (``_CHECKOUT_ATTRIBUTES``)."""
    shadow = _shadow(repo, tree)
    argv = ["--git-dir", str(shadow), "-c", f"core.bigFileThreshold={repo.big_file}", "archive"]
    return run_git([*argv, "--format=tar", tree], check=True).stdout


def _shadow(repo: GitRepo, tree: str) -> Path:
    """This run's git folder borrowing ``repo``'s objects (one per repository, in the run folder)."""
    from harness.infra import workarea

    objects = repo.objects_dir
    with _shadow_lock:
        made = _shadows.get(objects)
        if made is not None and (made / "info" / "attributes").is_file():
            return made
        where = workarea.mkdtemp("harness-archive-") / "git"
        fmt = "sha256" if len(tree) == 64 else "sha1"
        run_git(["init", "-q", "--bare", f"--object-format={fmt}", str(where)], check=True)
        (where / "info").mkdir(exist_ok=True)
        (where / "info" / "attributes").write_text(_CHECKOUT_ATTRIBUTES, encoding="utf-8")
        (where / "objects" / "info").mkdir(parents=True, exist_ok=True)
        (where / "objects" / "info" / "alternates").write_text(f"{objects}\n", encoding="utf-8")
        _shadows[objects] = where
        return where
