"""`harness cache info|list|clear|gc` on a real cache that compare runs filled (issue 41)."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from harness.testing.repos import RepoBuilder


def _repo(path: Path) -> RepoBuilder:
    b = RepoBuilder(path)
    b.commit("base", {"a.py": f"x = 1  # {path.name}\n"})  # (each repository its own commits)
    b.branch("release")
    fix = b.commit("Fix x (#1)", {"a.py": f"x = 2  # {path.name}\n"})
    b.checkout("release")
    b.cherry_pick(fix, "-x")
    return b


@pytest.fixture
def filled(tmp_path, monkeypatch, run_cli) -> dict[str, Any]:
    """A cache that compare runs on two repositories filled, and the first one's report."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(cache))
    monkeypatch.setenv("HARNESS_WORK_DIR", str(tmp_path / "work"))
    repos = [_repo(tmp_path / name).path for name in ("one", "two")]
    for i, repo in enumerate(repos):
        code, _, err = run_cli(*_compare(repo, tmp_path / f"first-{i}"))
        assert code == 0, err
    return {"cache": cache, "repos": repos, "tmp": tmp_path}


def _compare(repo: Path, out: Path) -> list[str]:
    return ["compare", "main~1", "release", "--source", "main", "--repo", str(repo),
            "--format", "json", "--fail-on", "never", "--output-dir", str(out)]  # fmt: skip


def _json(run_cli, *argv: str) -> Any:
    code, out, err = run_cli("cache", *argv, "--format", "json")
    assert code == 0 and err == "", err
    return json.loads(out)


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_info_says_where_and_how_much_per_part(filled, run_cli) -> None:
    envs = filled["cache"] / "envs" / "k" / "bin"  # the tests section's environments
    envs.mkdir(parents=True)
    (envs / "python").write_bytes(b"#" * 1000)
    info = _json(run_cli, "info")
    assert info["cache"] == str(filled["cache"])
    part = {p["name"]: p for p in info["parts"]}
    assert list(part) == ["history index", "section results", "column trees", "environments"]
    history = filled["cache"] / "history"
    assert part["history index"]["bytes"] == sum(
        p.stat().st_size for p in history.rglob("*") if p.is_file()
    )
    assert part["history index"]["files"] > 2 and part["section results"]["files"] >= 10
    assert part["environments"]["bytes"] == 1000 and part["environments"]["files"] == 1
    assert "400000 commits" in part["history index"]["bound"]
    assert info["bytes"] == sum(p["bytes"] for p in info["parts"])
    assert "do not match their digest" in info["gc_removes"]
    code, out, _ = run_cli("cache")  # info is the default, as text
    assert code == 0 and out.startswith(f"cache: {filled['cache']}\n") and "gc removes:" in out


def test_list_names_each_repository(filled, run_cli) -> None:
    kept = _json(run_cli, "list")["repositories"]
    assert sorted(k["repository"] for k in kept) == sorted(
        str((r / ".git").resolve()) for r in filled["repos"]
    )
    assert all(k["exists"] and k["answers"] == 1 and k["bytes"] > 0 for k in kept)
    one = _json(run_cli, "list", "--repo", str(filled["repos"][0]))["repositories"]
    assert [k["repository"] for k in one] == [str((filled["repos"][0] / ".git").resolve())]


def test_clear_one_repository_leaves_the_rest_and_the_same_report(filled, run_cli) -> None:
    cache, (one, two) = filled["cache"], filled["repos"]
    sections = _files(cache / "sections")
    got = _json(run_cli, "clear", "--repo", str(one))
    assert got["removed"]["history index"]["files"] > 2
    assert [k["repository"] for k in _json(run_cli, "list")["repositories"]] == [
        str((two / ".git").resolve())
    ]
    assert _files(cache / "sections") == sections
    code, _, err = run_cli(*_compare(one, filled["tmp"] / "again"))
    assert code == 0 and "did not match" not in err, err
    assert _sections(filled["tmp"] / "again") == _sections(filled["tmp"] / "first-0")


def _sections(out: Path) -> list[dict[str, Any]]:
    """A report's sections, less the section cache's "measured" / "from cache" control."""
    sections = json.loads((out / "report.json").read_text())["sections"]
    for s in sections:
        s["controls"] = [c for c in s["controls"] if c["name"] != "section cache"]
    return sections


def test_clear_of_a_path_that_is_no_repository_removes_nothing(filled, run_cli) -> None:
    before = _files(filled["cache"])
    code, out, err = run_cli("cache", "clear", "--repo", str(filled["tmp"] / "nowhere"))
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert _files(filled["cache"]) == before


def test_clear_removes_every_part_kept_in_the_cache(filled, run_cli) -> None:
    (filled["cache"] / "envs" / "k").mkdir(parents=True)
    (filled["cache"] / "envs" / "k" / "f").write_text("x")
    got = _json(run_cli, "clear")["removed"]
    assert got["history index"]["files"] > 4 and got["section results"]["files"] >= 10
    assert got["environments"]["files"] == 1
    info = _json(run_cli, "info")
    assert all(p["bytes"] == 0 for p in info["parts"] if p["name"] != "column trees")


def test_gc_removes_what_no_run_would_use_and_keeps_the_rest(filled, run_cli) -> None:
    cache, (one, two) = filled["cache"], filled["repos"]
    shutil.rmtree(two)  # a repository that is gone
    folder = next(
        p
        for p in (cache / "history").iterdir()
        if p.is_dir()
        and (p / "index.json").exists()
        and str(one.resolve()) in (p / "index.json").read_text()
    )
    damaged = folder / "memo-walk.json"
    damaged.write_bytes(damaged.read_bytes()[:-5])
    old = time.time() - 2 * 3600
    tmp = folder / ".tmp-killed"
    tmp.write_text("half")
    os.utime(tmp, (old, old))
    entries = sorted((cache / "sections").glob("*/*.json"))
    aged = entries[0]
    os.utime(aged, (time.time() - 31 * 86400,) * 2)
    got = _json(run_cli, "gc")["removed"]
    left = {p.name for p in (cache / "history").iterdir() if p.is_dir()}
    assert left == {folder.name}, "the gone repository's index stays"
    assert not damaged.exists() and not tmp.exists() and not aged.exists()
    assert (folder / "index.json").exists() and sorted(
        (cache / "sections").glob("*/*.json")
    ) == entries[1:]
    assert got["section results"]["files"] == 1 and got["history index"]["files"] > 3
    code, _, err = run_cli(*_compare(one, filled["tmp"] / "after-gc"))
    assert code == 0 and "did not match" not in err, err
    assert _json(run_cli, "gc")["removed"] == {}, "a second gc finds nothing"


def test_gc_removes_test_environments_unused_for_long_and_half_built_ones(
    run_cli, tmp_path, monkeypatch
) -> None:
    from harness.envs.build import MARKER

    cache = tmp_path / "cache"
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(cache))
    envs = cache / "envs"
    used, unused, half = envs / "a", envs / "b", envs / "c"
    for env in (used, unused, half):
        (env / "bin").mkdir(parents=True)
        (env / "bin" / "python").write_text("")
    cache.chmod(0o700)
    (used / MARKER).write_text("{}")
    (unused / MARKER).write_text("{}")
    (envs / "b.lock").write_text("")
    old = time.time() - 31 * 86400
    os.utime(unused / MARKER, (old, old))
    os.utime(half, (time.time() - 2 * 3600,) * 2)
    got = _json(run_cli, "gc")["removed"]
    assert sorted(p.name for p in envs.iterdir()) == ["a"]
    assert got["environments"]["files"] >= 2
