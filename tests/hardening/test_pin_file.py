"""engine_pin files are the reviewed repository's: read as regular files inside the tree, never
through a link and never whole past the YAML limit, and scanned in linear time."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.columns.trees import Column, identify
from harness.git import GitRepo
from harness.inputs.yamlpath import MAX_BYTES
from harness.probes.engine import ColumnRun, pinned_version
from harness.probes.kinds.sglang_params import engine_version

SPEC = {"engine_pin": {"file": "docker/Dockerfile"}}


def _tree(tmp_path: Path, text: str | bytes) -> Path:
    tree = tmp_path / "tree"
    (tree / "docker").mkdir(parents=True)
    data = text.encode() if isinstance(text, str) else text
    (tree / "docker" / "Dockerfile").write_bytes(data)
    return tree


def test_a_plain_pin_file_names_its_version(tmp_path: Path) -> None:
    tree = _tree(tmp_path, "FROM lmsysorg/sglang:v0.5.18-cu130-runtime\n")
    assert engine_version(SPEC, "head", tree) == ("0.5.18", "docker/Dockerfile")


def test_a_pin_file_that_is_a_link_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("FROM lmsysorg/sglang:v0.5.18-cu130-runtime\n")
    tree = tmp_path / "tree"
    (tree / "docker").mkdir(parents=True)
    (tree / "docker" / "Dockerfile").symlink_to(outside)
    version, why = engine_version(SPEC, "head", tree)
    assert version is None
    assert "symbolic link" in why


def test_a_pin_folder_that_is_a_link_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "Dockerfile").write_text("FROM lmsysorg/sglang:v0.5.18\n")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "docker").symlink_to(outside)
    version, why = engine_version(SPEC, "head", tree)
    assert version is None and "symbolic link" in why


def test_a_missing_pin_file_says_so(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    assert engine_version(SPEC, "head", tree) == (
        None,
        "engine_pin: docker/Dockerfile not in this column's tree",
    )


def test_a_pin_file_over_the_limit_is_not_read(tmp_path: Path) -> None:
    tree = _tree(tmp_path, b"sglang==0.5.18\n" + b"#" * MAX_BYTES)
    version, why = engine_version(SPEC, "head", tree)
    assert version is None
    assert why == f"engine_pin: docker/Dockerfile not read: over {MAX_BYTES} bytes"


@pytest.mark.parametrize(
    "text",
    [
        "FROM lmsysorg/sglang:v0.5.18\n",
        "x" * 50_000 + " sglang==0.5.21\n",  # a long word first: the old regex backtracked over it
        "a\u2003sglang==0.5.11\u00a0b sglang>=0.4\n",  # Unicode spaces split words as \\s does
        "pip install 'sglang[all]==0.5.22' && echo sglang\n",
        "no pin here\n",
    ],
)
def test_the_word_scan_finds_what_the_regex_found(tmp_path: Path, text: str) -> None:
    """Same words as ``re.findall(r"\\S*sglang\\S*")`` (kept here as the reference)."""
    words = [w for w in text.split() if "sglang" in w]
    if len(text) < 10_000:
        assert words == re.findall(r"\S*sglang\S*", text)
    from harness.engines.versions import version_from_pin

    expected = next((v for v in map(version_from_pin, words) if v), None)
    assert engine_version(SPEC, "head", _tree(tmp_path, text))[0] == expected


def test_the_driver_does_not_read_a_huge_pin_blob(builder) -> None:  # type: ignore[no-untyped-def]
    small = builder.commit("small", {"docker/Dockerfile": "FROM lmsysorg/sglang:v0.5.18\n"})
    huge = builder.commit("huge", {"docker/Dockerfile": "sglang==0.5.21\n" + "#" * MAX_BYTES})
    repo = GitRepo(builder.path)
    for ref, want in ((small, "0.5.18"), (huge, None)):
        column = Column(name="c", ref=ref)
        assert pinned_version(repo, ColumnRun(column, identify(repo, column)), SPEC) == want
