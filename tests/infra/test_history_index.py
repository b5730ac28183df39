"""The history index (harness/infra/history_index.py): the same fidelity answer with and without it,
cold, warm, after a new pick and a new source commit; a damaged, foreign or killed index is
rebuilt; concurrent runs keep it whole; it stays within its bounds, in the private cache."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.checks.fidelity.check import fidelity_check
from harness.git import GitRepo
from harness.infra import history_index as hi
from harness.infra.digest import sealed_text
from harness.infra.history_codec import pack, unpack
from harness.infra.history_index import HistoryIndex, wait_for_writers
from harness.report.model import Code, Control, Section, Sha, Table
from harness.testing.repos import RepoBuilder

A = "".join(f"a_{i} = {i}\n" for i in range(30))
B = "".join(f"b_{i} = {i}\n" for i in range(30))
ODD = "dir/we ird \u00fc.py"  # a path with a space and a non-ASCII letter


def _history(builder: RepoBuilder) -> tuple[str, list[str]]:
    """main with numbered, plain and odd commits; a release with picks of every kind. Returns
    the range's base and main's commits not picked yet."""
    builder.commit("base", {"a.py": A, "b.py": B, ODD: "x = 1\n"})
    builder.branch("release")
    made = []
    a = A
    for i in range(1, 9):
        k = 3 * i  # lines apart: any subset of these picks applies cleanly
        a = a.replace(f"a_{k} = {k}\n", f"a_{k} = {k * 100}\n")
        made.append(builder.commit(f"Raise a_{k} (#{i})", {"a.py": a}))
    b = B.replace("b_3 = 3", "b_3 = 33")
    made.append(builder.commit("Tune b \x1b[31m\u00e9\t(plain subject)", {"b.py": b}))
    made.append(builder.commit("Fix the odd file\n\nfixes: the odd one", {ODD: "x = 2\n"}))
    builder.checkout("release")
    base = builder.rev("HEAD")
    builder.cherry_pick(made[0], "-x")  # trailer
    builder.cherry_pick(made[1])  # PR number in the subject
    builder.commit("Tune b on the release", {"b.py": b})  # content only
    builder.cherry_pick(made[9])  # the odd path
    return base, made[2:9]


def _run(repo: GitRepo, base: str, root: Path | None, head: str = "release"):
    index = HistoryIndex(repo, root) if root is not None else None
    checked = fidelity_check(repo, base, head, "main", index=index)
    if index is not None:
        index.save()
    return checked, index


def test_cold_warm_new_pick_and_new_source_give_the_same_answer(builder, tmp_path):
    base, later = _history(builder)
    repo, root = GitRepo(builder.path), tmp_path / "index"
    plain, _ = _run(repo, base, None)
    cold, idx = _run(repo, base, root)
    assert cold.section == plain.section and cold.result == plain.result
    assert idx is not None and idx.served["built"] == 1 and not idx.rebuilt
    warm, idx = _run(GitRepo(builder.path), base, root)
    assert warm.section == plain.section and warm.result == plain.result
    assert idx is not None and idx.served["answers"] == 1 and idx.served["diffed"] == 0
    # One new pick: judged, the rest of the history and the diffs read from the index.
    builder.cherry_pick(later[0])
    plain, _ = _run(GitRepo(builder.path), base, None)
    new, idx = _run(GitRepo(builder.path), base, root)
    assert new.section == plain.section and len(new.result.picks) == 5
    assert idx is not None and idx.served["commits"] > 0 and idx.served["read"] == 0
    assert idx.served["diffs"] > 0 and not idx.rebuilt
    # A new source commit and a new pick of it: only that commit is read from git.
    builder.checkout("main")
    fresh = builder.commit("Raise a_29 (#20)", {"a.py": A.replace("a_29 = 29", "a_29 = 2900")})
    builder.checkout("release")
    builder.commit(
        "Raise a_29 on the release (#20)", {"a.py": A.replace("a_29 = 29", "a_29 = 2900")}
    )
    plain, _ = _run(GitRepo(builder.path), base, None)
    new, idx = _run(GitRepo(builder.path), base, root)
    assert new.section == plain.section
    # (read twice: once for the history, once with its paths, for the content search)
    assert idx is not None and 1 <= idx.served["read"] <= 2 and idx.served["commits"] >= 10
    sources = {p["pick"]: p["source"] for p in new.section.data["picks"]}
    assert fresh in sources.values()


def _index_files(root: Path) -> dict[str, Path]:
    (folder,) = [p for p in root.iterdir() if p.is_dir()]
    files = {"index": folder / "index.json", "diffs": folder / "diffs.json"}
    (files["answer"],) = list((folder / "results").glob("*.json"))
    return files


def _indexed(builder: RepoBuilder, tmp_path: Path):
    """The history, its answer without an index, and the index a first run left (and its folder)."""
    base, later = _history(builder)
    repo, root = GitRepo(builder.path), tmp_path / "index"
    plain, _ = _run(repo, base, None)
    _run(repo, base, root)
    return base, later, plain, root, next(p for p in root.iterdir() if p.is_dir())


def _drop_answers(folder: Path) -> None:
    """The whole answers go: the next run reads the rest of the index."""
    for answer in (folder / "results").glob("*.json"):
        answer.unlink()


def _reseal(path: Path, data: dict) -> None:
    """Write ``data`` back with a digest that matches: what only the shape checks can catch."""
    data.pop("digest", None)
    path.write_text(sealed_text(json.dumps(data)))


def _damage(path: Path, how: str, other: Path) -> None:
    text = path.read_text()
    if how == "truncated":
        path.write_text(text[: len(text) // 2])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "not json":
        path.write_bytes(b"\x00\xff garbage {")
    elif how == "wrong format":
        data = json.loads(text)
        data["stamp"][0] = "harness.history-index/0"
        _reseal(path, data)
    elif how == "wrong types":
        data = json.loads(text)
        if "columns" in data:
            data["columns"]["author"][0] = "yesterday"
        elif "diffs" in data:
            key = next(iter(data["diffs"]))
            data["diffs"][key] = {"not": "a pair"}
        else:
            data["value"] = {"section": 3, "picks": "no", "missing": []}
        _reseal(path, data)
    elif how == "foreign":  # the same file of another repository's index
        path.write_bytes(other.read_bytes())
    elif how == "deep":
        path.write_text("[" * 100_000)


@pytest.mark.parametrize("part", ["index", "diffs", "answer"])
@pytest.mark.parametrize(
    "how", ["truncated", "empty", "not json", "wrong format", "wrong types", "foreign", "deep"]
)
def test_a_damaged_or_foreign_index_is_rebuilt_with_the_same_answer(builder, tmp_path, part, how):
    base, _ = _history(builder)
    repo, root = GitRepo(builder.path), tmp_path / "index"
    plain, _ = _run(repo, base, None)
    _run(repo, base, root)
    # Another repository's index, for the "foreign" case.
    other = RepoBuilder(tmp_path / "other")
    other_base, _ = _history(other)
    other_root = tmp_path / "other-index"
    _run(GitRepo(other.path), other_base, other_root)
    files, theirs = _index_files(root), _index_files(other_root)
    _damage(files[part], how, theirs[part])
    if part != "answer":  # the answer would be served whole: make the run read the rest
        files["answer"].unlink()
    again, idx = _run(GitRepo(builder.path), base, root)
    assert again.section == plain.section and again.result == plain.result
    assert idx is not None and idx.rebuilt, "the damage went unnoticed"
    # ... and the rebuilt index is whole again.
    checked, idx = _run(GitRepo(builder.path), base, root)
    assert checked.section == plain.section and idx is not None and not idx.rebuilt


def test_the_index_lives_in_the_private_cache_and_no_cache_writes_nothing(
    builder, tmp_path, monkeypatch, run_cli
):
    base, _ = _history(builder)
    cache = tmp_path / "cache"
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(cache))
    argv = ["fidelity", f"{base}..release", "--source", "main", "--repo", str(builder.path)]
    argv += ["--format", "json", "--fail-on", "never"]
    code, plain, _ = run_cli(*argv, "--no-cache")
    assert code == 0 and not (cache / "history").exists()
    code, cold, _ = run_cli(*argv)
    code, warm, _ = run_cli(*argv)

    def body(text: str) -> str:
        return "\n".join(ln for ln in text.splitlines() if '"command"' not in ln)

    assert body(plain) == body(cold) == body(warm)
    for path in [cache, *(cache / "history").rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        assert path.lstat().st_uid == os.getuid()
        assert mode & 0o077 == 0, f"{path} is {oct(mode)}"


_CHILD = """
import sys
from pathlib import Path
from harness.checks.fidelity.check import fidelity_check
from harness.git import GitRepo
from harness.infra.history_index import HistoryIndex
repo, base, root = GitRepo(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
for _ in range(int(sys.argv[4])):
    index = HistoryIndex(repo, root)
    fidelity_check(repo, base, "release", "main", index=index)
    index.save()
"""


def test_concurrent_runs_keep_the_index_whole(builder, tmp_path):
    base, later = _history(builder)
    root = tmp_path / "index"
    # Each run judges a range of its own (its own answer) and writes the shared commit rows.
    builder.branch("other", "release")
    builder.checkout("other")
    builder.cherry_pick(later[1])
    builder.checkout("release")
    cmd = [sys.executable, "-c", _CHILD, str(builder.path), base, str(root), "3"]
    procs = [subprocess.Popen(cmd) for _ in range(2)]
    other = cmd.copy()
    other[1 + 1] = _CHILD.replace('"release"', '"other"')
    procs.append(subprocess.Popen(other))
    assert [p.wait(timeout=300) for p in procs] == [0, 0, 0]
    plain, _ = _run(GitRepo(builder.path), base, None)
    checked, idx = _run(GitRepo(builder.path), base, root)
    assert checked.section == plain.section
    assert idx is not None and not idx.rebuilt and idx.served["answers"] == 1
    assert not list(root.rglob(".tmp-*"))


_KILLED = """
import os, signal, sys
from pathlib import Path
from harness.infra import atomic
from harness.checks.fidelity.check import fidelity_check
from harness.git import GitRepo
from harness.infra.history_index import HistoryIndex

def killed(*args, **kw):  # the temporary file is written, the rename never happens
    os.kill(os.getpid(), signal.SIGKILL)

real = os.replace
os.replace = lambda a, b: killed() if Path(b).name.startswith(sys.argv[4]) else real(a, b)
repo, base, root = GitRepo(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
index = HistoryIndex(repo, root)
fidelity_check(repo, base, "release", "main", index=index)
index.save()
"""


@pytest.mark.parametrize("target", ["index.json", "diffs.json", "diffs-"])
def test_a_killed_writer_leaves_no_partial_file(builder, tmp_path, target):
    base, later = _history(builder)
    repo, root = GitRepo(builder.path), tmp_path / "index"
    _run(repo, base, root)
    folder = next(p for p in root.iterdir() if p.is_dir())
    packs = sorted(p.name for p in folder.glob("diffs-*.pack"))
    target = target if target != "diffs-" else packs[0][:6]  # a new pack's write is killed
    before = (folder / target).read_bytes() if target != "diffs-" else b""
    builder.checkout("main")  # something new to write: a source commit, and a pick of it
    fresh = builder.commit("Raise a_29 (#20)", {"a.py": A.replace("a_29 = 29", "a_29 = 2900")})
    builder.checkout("release")
    builder.cherry_pick(fresh)
    proc = subprocess.run(
        [sys.executable, "-c", _KILLED, str(builder.path), base, str(root), target]
    )
    assert proc.returncode == -signal.SIGKILL
    if target == "diffs-":
        assert sorted(p.name for p in folder.glob("diffs-*.pack")) == packs  # no partial pack
    else:
        assert (folder / target).read_bytes() == before  # the old file, whole
    plain, _ = _run(GitRepo(builder.path), base, None)
    checked, idx = _run(GitRepo(builder.path), base, root)
    assert checked.section == plain.section and idx is not None and not idx.rebuilt
    assert not list(root.rglob(".tmp-*"))  # the killed run's temporary file is gone


def test_the_index_stays_within_its_bounds(builder, tmp_path, monkeypatch):
    base, later = _history(builder)
    monkeypatch.setattr(hi, "MAX_COMMITS", 6)
    monkeypatch.setattr(hi, "MAX_DIFF_BYTES", 2000)
    monkeypatch.setattr(hi, "MAX_RESULTS", 2)
    monkeypatch.setattr(hi, "MAX_PACKS", 2)
    root = tmp_path / "index"
    for sha in later[:4]:
        builder.cherry_pick(sha)
        plain, _ = _run(GitRepo(builder.path), base, None)
        checked, idx = _run(GitRepo(builder.path), base, root)
        assert checked.section == plain.section and idx is not None and not idx.rebuilt
    folder = next(p for p in root.iterdir() if p.is_dir())
    assert len(json.loads((folder / "index.json").read_text())["columns"]["sha"]) <= 6
    diffs = json.loads((folder / "diffs.json").read_text())["diffs"]
    assert 0 < sum(v[3] for v in diffs.values()) <= 2000
    packs = {p.name[6:-5] for p in folder.glob("diffs-*.pack")}
    assert {v[1] for v in diffs.values()} == packs and len(packs) <= 2  # merged, none dead
    assert len(list((folder / "results").glob("*.json"))) <= 2


def test_a_new_pick_adds_a_pack_and_rewrites_no_diff(builder, tmp_path):
    base, later = _history(builder)
    root = tmp_path / "index"
    _run(GitRepo(builder.path), base, root)
    folder = next(p for p in root.iterdir() if p.is_dir())
    (first,) = folder.glob("diffs-*.pack")
    kept, inode = first.read_bytes(), first.stat().st_ino
    builder.cherry_pick(later[0])
    plain, _ = _run(GitRepo(builder.path), base, None)
    checked, idx = _run(GitRepo(builder.path), base, root)
    assert checked.section == plain.section and idx is not None and idx.served["diffed"] > 0
    assert first.read_bytes() == kept and first.stat().st_ino == inode  # appended beside it
    assert len(list(folder.glob("diffs-*.pack"))) == 2
    _, idx = _run(GitRepo(builder.path), base, root)
    assert idx is not None and idx.served["diffed"] == 0 and idx.served["answers"] == 1


@pytest.mark.parametrize("how", ["truncated", "a byte changed", "gone", "a symlink"])
def test_a_damaged_pack_is_diffed_again(builder, tmp_path, how):
    base, _, plain, root, folder = _indexed(builder, tmp_path)
    (pack,) = folder.glob("diffs-*.pack")
    data = pack.read_bytes()
    if how == "truncated":
        pack.write_bytes(data[: len(data) // 2])
    elif how == "a byte changed":  # in every chunk, whichever this run reads
        changed = bytearray(data)
        for _, _, at, size, _ in json.loads((folder / "diffs.json").read_text())["diffs"].values():
            changed[at + size // 2] ^= 1
        pack.write_bytes(bytes(changed))
    elif how == "gone":
        pack.unlink()
    else:  # a planted link to a file with the same bytes: not followed
        (tmp_path / "elsewhere").write_bytes(data)
        pack.unlink()
        pack.symlink_to(tmp_path / "elsewhere")
    _drop_answers(folder)
    # (kept comparisons read no source's diff: dropped, so that every diff is read again)
    (folder / "memo-compared.json").unlink()
    again, idx = _run(GitRepo(builder.path), base, root)
    assert again.section == plain.section and again.result == plain.result
    assert idx is not None and idx.served["diffed"] > 0
    assert any("pack" in why for why in idx.rebuilt), "the damage went unnoticed"
    _drop_answers(folder)
    checked, idx = _run(GitRepo(builder.path), base, root)
    assert checked.section == plain.section and idx is not None and not idx.rebuilt
    assert idx.served["diffed"] == 0


def test_pack_round_trips_what_a_section_holds():
    odd = {
        "\x00harness": "D",
        "k": ("a", 1, [None, 2.5, True]),
        "\udcff": "surrogate",
    }
    section = Section(
        "fidelity",
        "title",
        "summary",
        tables=[Table("t", ["a", "b"], [[Code("x"), Sha("ab" * 20)], [1, "\x1b[31m"]], legend="l")],
        controls=[Control("c", "v", None)],
        data={
            "odd": odd,
            3: "int key",
            "t": (1, (2, 3)),
            "list": [{"x": ("y",)}],
            "lines": [("added", "+x"), ("context", "\udcff")],  # an end state's classed lines
            "mixed": [("a", 1), ("b", "c")],
            "cells": [Code("c"), Sha("cd" * 20), ["nested", Code("d")]],
        },
    )
    back = unpack(json.dumps(pack(section)))
    assert back == section
    assert type(back.data["t"]) is tuple and back.data["odd"] == odd
    assert [type(x) for x in back.data["lines"] + back.data["mixed"]] == [tuple] * 4
    assert [type(x) for x in back.data["cells"]] == [Code, Sha, list]
    with pytest.raises(TypeError):
        pack({"x": object()})
    for bad in (
        '{"\\u0000harness": "Section", "v": {"nope": 1}}',
        '{"\\u0000harness": "?", "v": 1}',
    ):
        with pytest.raises((TypeError, ValueError)):
            unpack(bad)


_WARM = """
import json, sys
from harness.cli import main
code = main(sys.argv[1:-1])
assert code == 0, code
print(json.dumps(sorted(m for m in sys.argv[-1].split(",") if m in sys.modules)))
"""
# What a run served whole does without (issue 42: ~15 ms of a ~90 ms warm run): the check's modules,
# the thread pool (with logging), tempfile and shutil (with random and the compression modules).
_HEAVY = (
    "harness.checks.fidelity.check",
    "concurrent.futures",
    "logging",
    "tempfile",
    "shutil",
    "inspect",  # (dataclasses' own: infra/lean.py)
)


def _cold_then_warm(argv: list[str], watched: tuple[str, ...], env: dict[str, str]) -> list[Any]:
    """Which of ``watched`` a first run of ``argv`` (cold) and a second (warm) imported."""
    runs = [
        subprocess.run(
            [sys.executable, "-c", _WARM, *argv, ",".join(watched)],
            env=env,
            capture_output=True,
            text=True,
        )
        for _ in range(2)
    ]
    assert all(r.returncode == 0 for r in runs), [r.stderr for r in runs]
    return [json.loads(r.stdout.split("\n")[-2]) for r in runs]


def test_a_run_served_whole_imports_no_check(builder, tmp_path):
    base, _ = _history(builder)
    argv = ["fidelity", f"{base}..release", "--source", "main", "--repo", str(builder.path)]
    argv += ["--format", "json", "--output", str(tmp_path / "r.json"), "--fail-on", "never"]
    env = {**os.environ, "HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    # The work area under the temporary folder, found as tempfile would find it (not imported).
    env.pop("HARNESS_WORK_DIR", None)
    env["TMPDIR"] = str(tmp_path / "tmp")
    (tmp_path / "tmp").mkdir()
    cold, warm = _cold_then_warm(argv, _HEAVY, env)
    # The cold run is the control: the probe sees what a run that builds the answer loads.
    assert cold[:2] == ["concurrent.futures", "harness.checks.fidelity.check"]
    assert warm == []


# What a warm compare with no scenario and no policy does without: YAML, tar and the columns'
# trees, the thread pool with logging, tempfile, shutil and inspect.
_HEAVY_COMPARE = (
    "concurrent.futures",
    "inspect",
    "logging",
    "shutil",
    "tarfile",
    "tempfile",
    "yaml",
)


def test_a_warm_compare_imports_no_yaml_pool_or_tree_machinery(builder, tmp_path):
    base, _ = _history(builder)
    argv = ["compare", f"{base}..release", "--source", "main", "--repo", str(builder.path)]
    argv += ["--no-tests", "--output-dir", str(tmp_path / "out"), "--format", "none"]
    argv += ["--fail-on", "never"]
    env = {**os.environ, "HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    cold, warm = _cold_then_warm(argv, _HEAVY_COMPARE, env)
    assert "concurrent.futures" in cold  # the control: a cold run's pool
    assert warm == []


def test_compare_uses_the_index_unless_no_cache(builder, tmp_path, monkeypatch, run_cli):
    base, _ = _history(builder)
    cache = tmp_path / "cache"
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(cache))
    argv = ["compare", base, "release", "--source", "main", "--repo", str(builder.path)]
    argv += ["--format", "none", "--fail-on", "never"]
    code, _, err = run_cli(*argv, "--no-cache", "--output", str(tmp_path / "a"))
    assert code == 0, err
    assert not (cache / "history").exists()
    code, _, err = run_cli(*argv, "--output", str(tmp_path / "b"))
    assert code == 0, err
    assert list((cache / "history").glob("*/results/*.json"))

    def fidelity(folder: str) -> object:
        doc = json.loads((tmp_path / folder / "report.json").read_text())
        section = next(s for s in doc["sections"] if s["id"] == "fidelity")
        return section["data"]

    assert fidelity("a") == fidelity("b")


@pytest.mark.parametrize(
    "bad",
    [
        lambda d: d["columns"]["parents"][-1].append("F" * 40),  # an upper-case parent id
        lambda d: d["columns"]["parents"][-1].append("a" * 39),  # a short one
        lambda d: d["columns"]["parents"][-1].append(40),  # not a string
        lambda d: d["columns"]["sha"].__setitem__(0, d["columns"]["sha"][1]),  # one id twice
        lambda d: d["columns"]["paths"].__setitem__(-1, ["a.py", 3]),  # a path not a string
        lambda d: d["columns"]["checked"].__setitem__(-1, 1 << 30),  # a grep bit past the greps
        lambda d: d["columns"]["used"].__setitem__(-1, True),  # not an int
        lambda d: d["columns"]["subject"].pop(),  # a column shorter than the others
        lambda d: d["bodies"].__setitem__(d["columns"]["sha"][0], {"x": "body"}),  # no grep
        lambda d: d["bodies"].__setitem__(d["columns"]["sha"][0], {"\u00b2": "body"}),  # "²"
        lambda d: d["bodies"].__setitem__("b" * 40, {"0": "body"}),  # a commit not kept
    ],
)
def test_a_commit_row_of_the_wrong_shape_rebuilds_the_rows(builder, tmp_path, bad):
    base, _ = _history(builder)
    repo, root = GitRepo(builder.path), tmp_path / "index"
    plain, _ = _run(repo, base, None)
    _run(repo, base, root)
    files = _index_files(root)
    data = json.loads(files["index"].read_text())
    bad(data)
    _reseal(files["index"], data)
    files["answer"].unlink()
    again, idx = _run(GitRepo(builder.path), base, root)
    assert again.section == plain.section
    assert idx is not None and "index.json: records of the wrong shape" in idx.rebuilt
    checked, idx = _run(GitRepo(builder.path), base, root)  # ... and whole again
    assert checked.section == plain.section and idx is not None and not idx.rebuilt


def _range_from_git(path: Path, base: str, head: str) -> tuple[list[list[str]], str | None, list]:
    from harness.git.history import range_commits, range_parents

    repo = GitRepo(path)  # a fresh one: nothing primed
    return (
        range_parents(repo, base, head),
        repo.merge_base(base, head),
        range_commits(repo, base, head),
    )


def _primed(path: Path, root: Path, base: str, head: str):
    from harness.git.history import range_commits, range_parents

    repo = GitRepo(path)
    index = HistoryIndex(repo, root)
    index.prime_range(base, head)
    primed = (base, head) in repo.walks and (base, head) in repo.ranges
    got = (
        range_parents(repo, base, head),
        repo.merge_base(base, head),
        range_commits(repo, base, head),
    )
    return primed, got, index


def test_the_range_is_kept_and_a_line_of_new_commits_extends_it(builder, tmp_path):
    base, later = _history(builder)
    root = tmp_path / "index"
    head = builder.rev("release")
    _run(GitRepo(builder.path), base, root)
    primed, got, _ = _primed(builder.path, root, base, head)
    assert primed and got == _range_from_git(builder.path, base, head)  # a warm run asks git none
    # Two new picks on the release: one line on the kept head.
    builder.cherry_pick(later[0])
    new = builder.cherry_pick(later[1])
    primed, got, index = _primed(builder.path, root, base, new)
    assert primed and index.served.get("ranges extended") == 1
    assert got == _range_from_git(builder.path, base, new)  # walk, merge base, commits in order
    plain, _ = _run(GitRepo(builder.path), base, None)
    checked, _ = _run(GitRepo(builder.path), base, root)
    assert checked.section == plain.section


@pytest.mark.parametrize("shape", ["a merge on top", "another branch", "damaged", "dated earlier"])
def test_a_range_that_is_not_a_line_on_a_kept_one_is_walked_by_git(builder, tmp_path, shape):
    base, later = _history(builder)
    root = tmp_path / "index"
    _run(GitRepo(builder.path), base, root)
    if shape == "a merge on top":  # main merged into the release: its merge base moves
        head = builder.merge("main", "Merge main into the release")
    elif shape == "dated earlier":  # a skewed clock: git's date-ordered walk is left to git
        head = builder.commit(
            "A commit from the past", {"c.py": "c = 1\n"}, committer_time=1_000_000_000
        )
    elif shape == "another branch":  # the same base, a head the kept one is not below
        builder.branch("other", base)
        builder.checkout("other")
        head = builder.cherry_pick(later[2])
    else:
        head = builder.rev("release")
        folder = next(p for p in root.iterdir() if p.is_dir())
        memo = json.loads((folder / "memo-range.json").read_text())
        for entry in memo["entries"].values():
            entry[1][1] = "not a commit id"
        _reseal(folder / "memo-range.json", memo)
    primed, got, index = _primed(builder.path, root, base, head)
    assert not primed and not index.served.get("ranges extended")
    assert got == _range_from_git(builder.path, base, head)
    if shape == "damaged":
        assert any("memo-range.json" in why for why in index.rebuilt)
    plain, _ = _run(GitRepo(builder.path), base, None, head=head)
    checked, _ = _run(GitRepo(builder.path), base, root, head=head)
    assert checked.section == plain.section


def test_files_named_like_packs_that_are_not_packs_are_left_out(builder, tmp_path):
    base, later, plain, root, folder = _indexed(builder, tmp_path)
    (folder / f"diffs-{'a' * 40}.pack").symlink_to(tmp_path / "nowhere")  # dangling
    (folder / f"diffs-{'b' * 40}.pack").mkdir()
    (folder / "diffs-odd.pack").write_bytes(b"x")
    _drop_answers(folder)
    builder.cherry_pick(later[0])  # something new to write
    plain, _ = _run(GitRepo(builder.path), base, None)
    checked, idx = _run(GitRepo(builder.path), base, root)
    assert checked.section == plain.section and idx is not None and not idx.rebuilt
    names = {p.name for p in folder.iterdir()}
    assert f"diffs-{'a' * 40}.pack" not in names and "diffs-odd.pack" not in names
    assert (folder / f"diffs-{'b' * 40}.pack").is_dir()  # (a folder is not removed)
    assert len(json.loads((folder / "diffs.json").read_text())["diffs"]) > 0


@pytest.mark.parametrize(
    "bad",
    [
        lambda e: e.__setitem__(2, 1 << 63),  # an offset no pack has (os.pread would overflow)
        lambda e: e.__setitem__(3, -1),
        lambda e: e.__setitem__(1, "../" + "a" * 37),  # a pack name that is a path
    ],
)
def test_a_diff_entry_out_of_bounds_rebuilds_the_table(builder, tmp_path, bad):
    base, _, plain, root, folder = _indexed(builder, tmp_path)
    table = json.loads((folder / "diffs.json").read_text())
    bad(next(iter(table["diffs"].values())))
    _reseal(folder / "diffs.json", table)
    _drop_answers(folder)
    again, idx = _run(GitRepo(builder.path), base, root)
    assert again.section == plain.section
    assert idx is not None and "diffs.json: records of the wrong shape" in idx.rebuilt


def _json_report(builder: RepoBuilder, base: str, tmp_path: Path, *extra: str) -> str:
    """``fidelity base..release --format json`` on the command line (its cache under ``tmp_path``,
    its writer waited for: the next run reads what it kept), less its command line."""
    env = {**os.environ, "HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("HARNESS_CACHE_WRITES", None)
    out = tmp_path / "r.json"
    argv = ["fidelity", f"{base}..release", "--source", "main", "--repo", str(builder.path)]
    argv += ["--format", "json", "--output", str(out), "--fail-on", "never", *extra]
    proc = subprocess.run([sys.executable, "-m", "harness", *argv], env=env)
    assert proc.returncode == 0
    wait_for_writers(tmp_path / "cache")
    doc = json.loads(out.read_bytes())
    doc.pop("command")
    return json.dumps(doc)


def test_a_kept_answer_is_written_as_its_kept_text_and_a_bad_text_is_rendered_again(
    builder, tmp_path
):
    """``fidelity --format json`` keeps the section's text beside its answer; a run served the
    answer writes that text, bytes equal to a run without the index. A text that fails its digest,
    another key's, or one whose answer is gone is not used."""
    base, _ = _history(builder)

    def report(*extra: str) -> bytes:
        return _json_report(builder, base, tmp_path, *extra).encode()

    plain = report("--no-cache")
    assert report() == plain  # cold: rendered, kept
    (text,) = (tmp_path / "cache").rglob("results/*.txt")
    kept = text.read_bytes()
    assert report() == plain  # warm: the kept text
    body = kept[: -len('"}') - 64 - len(',"digest":"')]
    assert b'"title": "Cherry-pick fidelity"' in body
    # A text edited in place (same length) fails its digest: rendered again, and kept again.
    text.write_bytes(kept.replace(b'"title": "Cherry-pick', b'"title": "Cherry-PICK', 1))
    assert report() == plain and text.read_bytes() == kept
    # An answer whose text is gone: rendered again and kept.
    text.unlink()
    assert report() == plain and text.read_bytes() == kept


def test_kept_text_round_trips_and_needs_its_answer(builder, tmp_path):
    base, _ = _history(builder)
    repo, root = GitRepo(builder.path), tmp_path / "index"
    idx = HistoryIndex(repo, root)
    idx.keep_text(["a"], '{"x": 1}')  # no answer kept for ["a"]: nothing written
    assert idx.kept_text(["a"]) is None
    idx.keep(["a"], {"v": 1})
    idx.keep_text(["a"], '{\n    "x": "\u00e9"\n  }')
    assert idx.kept_text(["a"]) == '{\n    "x": "\u00e9"\n  }'.encode()
    assert idx.kept_text(["b"]) is None
    (txt,) = list(root.rglob("results/*.txt"))
    # Another answer's text (its digest holds, its key is not this one's) is not this answer's.
    idx.keep(["b"], {"v": 2})
    txt.with_name(idx._answer_path(["b"])[0] + ".txt").write_bytes(txt.read_bytes())
    assert idx.kept_text(["b"]) is None
    raw = txt.read_bytes()
    assert json.loads(raw)["text"] == {"x": "\u00e9"}  # the file is one sealed JSON object
    # its digest no longer matches (its last hex digit changed: "0" was it 1 time in 16)
    last = raw[-3:-2]
    txt.write_bytes(raw[:-3] + (b"1" if last == b"0" else b"0") + b'"}')
    assert idx.kept_text(["a"]) is None


def test_an_answer_is_served_whole_or_by_its_head(builder, tmp_path):
    """The kept answer's section comes back equal to the one built; its head alone (for a run that
    writes the kept text) has the findings and what was not verified, and none of the body."""
    from harness.infra.history_answers import fidelity_parts, kept_fidelity

    base, _ = _history(builder)
    a = (builder.path / "a.py").read_text()  # a pick of #3 that sets another value: a finding
    builder.commit("Raise a_9 (#3)", {"a.py": a.replace("a_9 = 9\n", "a_9 = 901\n")})
    repo, root = GitRepo(builder.path), tmp_path / "index"
    built, _ = _run(repo, base, root)
    parts = fidelity_parts(
        repo.resolve(base), repo.resolve("release"), repo.resolve("main"), "main", None, None
    )
    whole = kept_fidelity(HistoryIndex(GitRepo(builder.path), root), parts)
    assert whole is not None and whole.section == built.section and whole.result == built.result
    assert built.section.tables and built.section.data and built.section.findings
    head = kept_fidelity(HistoryIndex(GitRepo(builder.path), root), parts, whole=False)
    assert head is not None and head.result == built.result
    assert head.section.findings == built.section.findings
    assert head.section.not_verified == built.section.not_verified
    assert head.section.summary == built.section.summary
    assert not head.section.tables and not head.section.data and not head.section.details


def test_fragments_round_trip_and_bytes_that_are_not_the_kept_ones_are_left_out(builder, tmp_path):
    """``keep_fragments`` keeps one run's texts in place of the last run's; ``fragments`` gives
    back the ones asked for that are kept, each only with the very bytes kept."""
    from harness.infra.history_fragments import fragments, keep_fragments

    _history(builder)
    repo, root = GitRepo(builder.path), tmp_path / "index"
    idx = HistoryIndex(repo, root)
    assert fragments(idx, ["k1"]) == {}  # (nothing kept yet)
    texts = {"k1": b'{\n  "a": 1\n}', "k2": '{"\u00e9": "\\\\xe9"}'.encode(), "k3": b""}
    keep_fragments(idx, texts)
    again = HistoryIndex(repo, root)
    assert fragments(again, ["k2", "k1", "k9", "k1"]) == {"k1": texts["k1"], "k2": texts["k2"]}
    assert again.served["fragments"] == 2 and fragments(again, []) == {}
    (pack,) = root.rglob("fragments-*.pack")
    raw = pack.read_bytes()
    pack.write_bytes(raw.replace(b'"a": 1', b'"a": 2'))  # same length, other bytes
    assert fragments(HistoryIndex(repo, root), ["k1", "k2"]) == {"k2": texts["k2"]}
    # The next run's texts replace the last run's (their pack too).
    keep_fragments(HistoryIndex(repo, root), {"k4": b"[]"})
    assert fragments(HistoryIndex(repo, root), ["k1", "k2", "k4"]) == {"k4": b"[]"}
    assert [p.name for p in root.rglob("fragments-*.pack")] != [pack.name]
    assert len(list(root.rglob("fragments-*.pack"))) == 1
    # Another harness's table (its stamp) is not read.
    (table,) = root.rglob("fragments.json")
    data = json.loads(table.read_bytes())
    data.pop("digest")
    _reseal(table, {**data, "stamp": "another"})
    assert fragments(HistoryIndex(repo, root), ["k4"]) == {}


def test_a_new_pick_s_report_writes_the_kept_picks_entries_as_kept(builder, tmp_path, monkeypatch):
    """A re-run after a new pick (``fidelity --format json``) writes each kept pick's unchanged
    entry of ``data.picks`` from the text the last run kept, and its report is the bytes of a run
    without the cache; a pick whose entry changed is rendered again."""
    base, rest = _history(builder)

    def report(*extra: str) -> str:
        return _json_report(builder, base, tmp_path, *extra)

    first = report()
    assert first == report("--no-cache")  # (cold: every entry rendered and kept)
    before = json.loads(first)["sections"][0]["data"]["picks"]
    builder.cherry_pick(rest[0], "-x")  # one new pick
    from harness.infra import history_fragments

    served: list[int] = []
    real = history_fragments.fragments

    def counted(index, keys):
        got = real(index, keys)
        served.append(len(got))
        return got

    from harness.cli import main

    monkeypatch.setattr(history_fragments, "fragments", counted)  # (the in-process run below)
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "n.json"
    argv = ["fidelity", f"{base}..release", "--source", "main", "--repo", str(builder.path)]
    assert main([*argv, "--format", "json", "--output", str(out), "--fail-on", "never"]) == 0
    doc = json.loads(out.read_bytes())
    doc.pop("command")
    assert json.dumps(doc) == report("--no-cache")
    picks = doc["sections"][0]["data"]["picks"]
    # The picks of a.py, which the new pick changes too, have new end states (other picks):
    # their entries are rendered again, with the new pick's; the others are the kept text.
    unchanged = [p for p in picks if p in before]
    assert len(picks) == 5 and len(unchanged) == 2 and served == [2]
