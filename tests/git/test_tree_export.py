"""Column trees as a checkout has them: a tree's ``export-ignore`` / ``export-subst`` attributes
shape archives, not checkouts, and must not shape the trees the tests run in."""

from __future__ import annotations

import subprocess
from pathlib import Path

from harness.git import GitRepo
from harness.git.tree import archive_bytes, export_tree


def test_export_ignored_folders_and_subst_files_are_written_as_committed(
    builder, tmp_path: Path
) -> None:
    builder.commit(
        "attrs",
        {
            ".gitattributes": "tests/ export-ignore\npkg/version.py export-subst\n",
            "pkg/version.py": "COMMIT = '$Format:%H$'\n",
            "tests/test_a.py": "def test_a():\n    pass\n",
        },
    )
    repo = GitRepo(builder.path)
    before = subprocess.run(
        ["git", "-C", str(builder.path), "status", "--porcelain", "--ignored"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    dest = tmp_path / "tree"
    export_tree(repo, "HEAD", dest)
    assert (dest / "tests" / "test_a.py").read_text() == "def test_a():\n    pass\n"
    assert (dest / "pkg" / "version.py").read_text() == "COMMIT = '$Format:%H$'\n"
    _, data = archive_bytes(repo, "HEAD")  # what a remote worker unpacks
    assert b"tests/test_a.py" in data
    # the repository is not written: no attributes file, no alternates, nothing new in its status
    assert not (builder.path / ".git" / "info" / "attributes").exists()
    after = subprocess.run(
        ["git", "-C", str(builder.path), "status", "--porcelain", "--ignored"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert after == before


def test_the_truth_s_plain_checkout_writes_the_same_files(builder, tmp_path: Path) -> None:
    """The plain side of the truth benches (``plain_checkout``: a reviewer's checkout) and the
    harness's column trees hold the same files, ``export-ignore`` or not."""
    from harness.testing.pytest_truth import plain_checkout

    builder.commit(
        "attrs",
        {
            ".gitattributes": "tests/ export-ignore\n",
            "tests/test_a.py": "def test_a():\n    pass\n",
            "a.py": "x = 1\n",
        },
    )
    index = builder.path / ".git" / "index"
    before = index.read_bytes()
    plain, harness = tmp_path / "plain", tmp_path / "harness"
    plain_checkout(builder.path, "HEAD", plain)
    export_tree(GitRepo(builder.path), "HEAD", harness)

    def files(root: Path) -> dict[str, bytes]:
        return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}

    assert files(plain) == files(harness) and "tests/test_a.py" in files(plain)
    assert index.read_bytes() == before  # its own index, not the repository's
