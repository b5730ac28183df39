"""Nothing is written through a symbolic link of the reviewed tree."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from harness.git.repo import GitRepo
from harness.git.tree import export_tree
from harness.infra import treefiles


def _link_repo(builder, tmp_path: Path, name: str) -> Path:
    """A repository whose ``name`` is a symlink to a file outside it (absolute target)."""
    outside = tmp_path / "outside" / "victim.txt"
    outside.parent.mkdir()
    outside.write_text("x = 1\n[tool.other]\nkeep = true\n")
    builder.commit(
        "base",
        {
            "pkg/__init__.py": "",
            "pkg/calc.py": "def f(x):\n    return x\n",
            "tests/test_calc.py": "from pkg.calc import f\n\ndef test_f():\n    assert f(1) == 1\n",
        },
    )
    os.symlink(outside, builder.path / name)
    builder.commit("link", {"pkg/calc.py": "def f(x):\n    return x + 0\n"})
    return outside


def test_exported_trees_keep_links_as_links(builder, tmp_path: Path) -> None:
    _link_repo(builder, tmp_path, "pyproject.toml")
    dest = tmp_path / "tree"
    export_tree(GitRepo(builder.path), "HEAD", dest)
    assert (dest / "pyproject.toml").is_symlink()


@pytest.mark.parametrize("rel", ["link.txt", "dirlink/file.txt"])
def test_treefiles_refuse_links_and_linked_folders(tmp_path: Path, rel: str) -> None:
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    tree.mkdir()
    outside.mkdir()
    (outside / "file.txt").write_text("secret\n")
    os.symlink(outside / "file.txt", tree / "link.txt")
    os.symlink(outside, tree / "dirlink")
    with pytest.raises(treefiles.TreePathError, match="symbolic link"):
        treefiles.write(tree, rel, b"pwned\n")
    with pytest.raises(treefiles.TreePathError, match="symbolic link"):
        treefiles.read(tree, rel)
    assert (outside / "file.txt").read_text() == "secret\n"


def test_treefiles_write_a_regular_file_and_create_a_new_one(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("1")
    treefiles.write(tmp_path, "a", b"2")
    treefiles.write(tmp_path, "b", b"3")
    assert (tmp_path / "a").read_text() == "2" and (tmp_path / "b").read_text() == "3"
    assert treefiles.read_if_present(tmp_path, "c") is None


@pytest.mark.skipif(importlib.util.find_spec("mutmut") is None, reason="mutmut 3 is not installed")
def test_sweep_does_not_write_through_a_symlinked_pyproject(
    builder, run_cli, tmp_path: Path
) -> None:
    outside = _link_repo(builder, tmp_path, "pyproject.toml")
    before = outside.read_text()
    code, out, err = run_cli(
        "sweep",
        "HEAD~1..HEAD",
        "--tests",
        "tests",
        "--repo",
        str(builder.path),
        "--format",
        "json",
        "--fail-on",
        "never",
    )
    assert outside.read_text() == before, "the file outside the tree was written"
    assert code == 0, err
    findings = json.loads(out)["sections"][0]["findings"]
    refused = [f for f in findings if f["kind"] == "sweep-not-run"]
    assert refused and "symbolic link" in refused[0]["detail"], findings


def test_a_control_edit_on_a_symlink_is_the_cells_outcome(builder, run_cli, tmp_path: Path) -> None:
    outside = _link_repo(builder, tmp_path, "m.py")
    before = outside.read_text()
    probe = tmp_path / "p.py"
    probe.write_text(
        "UNDER_TEST = ['pkg.calc']\ndef run(n):\n    from pkg.calc import f\n    return f(n)\n"
    )
    scen = tmp_path / "s.yaml"
    scen.write_text(f"""refs: {{head: main}}
controls:
  ctl: {{ref: head, edits: [{{replace: "x = 1", new: "x = 2", path: m.py}}]}}
probes:
  - {{id: p, kind: python, file: {probe}, function: run, rows: {{n: [1]}}}}
""")
    code, out, err = run_cli(
        "probe", str(scen), "--repo", str(builder.path), "--format", "json", "--fail-on", "never"
    )
    assert outside.read_text() == before
    assert code == 0, err
    cells = json.loads(out)["sections"][0]["data"]["cells"]
    assert cells["head"][0]["status"] == "ok"
    assert cells["ctl"][0]["status"] == "error" and "symbolic link" in cells["ctl"][0]["detail"], (
        cells["ctl"]
    )
