"""A file over the size limit in the reviewed repository (a generated data file, a dump) is binary
to every diff the harness asks for and is never read whole: before, a 300 MB text file in a pick
cost 105 s and 9.6 GB of memory. The limit is git's core.bigFileThreshold, set on every call."""

from __future__ import annotations

import json

from harness.checks.fidelity.check import fidelity_section
from harness.checks.trace import trace_check
from harness.git import GitRepo
from harness.git.repo import BIG_FILE

LIMIT = 64 << 10  # the tests lower the limit; one test keeps the real one


def _big(n_lines: int, changed: int | None = None) -> str:
    return "".join(
        f"row {i} {'CHANGED' if i == changed else 'of a large generated file'}\n"
        for i in range(n_lines)
    )


def _two_picks(builder) -> tuple[str, str]:
    """Two picks of a big file: the second changes what the first added."""
    builder.commit("base", {"f.txt": "base\n"})
    builder.branch("release")
    builder.commit("Add data (#5)", {"data.txt": _big(10_000)})
    builder.commit("Fix data (#6)", {"data.txt": _big(10_000, changed=5)})
    builder.checkout("release")
    base = builder.rev("HEAD")
    builder.cherry_pick(builder.rev("main~1"), "-x")
    builder.cherry_pick(builder.rev("main"), "-x")
    return base, "release"


def test_a_big_file_is_compared_by_blob_and_never_read_whole(builder, monkeypatch) -> None:
    base, head = _two_picks(builder)
    repo = GitRepo(builder.path)
    repo.big_file = LIMIT
    asked: list[str] = []
    iter_blobs = repo.iter_blobs
    monkeypatch.setattr(repo, "iter_blobs", lambda specs: asked.extend(specs) or iter_blobs(specs))
    section = fidelity_section(repo, base, head, "main")
    picks = section.data["picks"]
    assert [f["status"] for p in picks for f in p["files"]] == ["binary", "binary"]
    # The first pick's end state differs (the second pick changed the file): by blob id, and
    # put down to the other pick, which left exactly HEAD's blob.
    assert [e["status"] for p in picks for e in p["end_state"]] == ["other-picks", "same"]
    assert not [f for f in section.findings if f.severity in ("P1", "P2")]
    sizes = {oid: len(data or b"") for oid, data in zip(asked, iter_blobs(asked), strict=True)}
    assert all(n <= LIMIT for n in sizes.values())


def test_under_the_limit_the_same_file_is_diffed_line_by_line(builder) -> None:
    base, head = _two_picks(builder)
    section = fidelity_section(GitRepo(builder.path), base, head, "main")
    picks = section.data["picks"]
    assert [f["status"] for p in picks for f in p["files"]] == ["identical", "identical"]
    assert [(f["pick"]["added"], f["pick"]["removed"]) for f in picks[1]["files"]] == [(1, 1)]
    assert [e["status"] for p in picks for e in p["end_state"]] == ["other-picks", "same"]


def test_a_big_file_that_differs_by_itself_is_still_a_finding(builder) -> None:
    builder.commit("base", {"f.txt": "base\n"})
    builder.branch("release")
    builder.commit("Add data (#5)", {"data.txt": _big(10_000)})
    builder.checkout("release")
    base = builder.rev("HEAD")
    builder.commit("Add data (#5)", {"data.txt": _big(10_000, changed=7)})  # not what main added
    repo = GitRepo(builder.path)
    repo.big_file = LIMIT
    section = fidelity_section(repo, base, "release", "main")
    (pick,) = section.data["picks"]
    assert [e["status"] for e in pick["end_state"]] == ["binary-differs"]
    assert any(f.severity == "P2" for f in section.findings)


def test_trace_does_not_read_back_a_big_file(builder) -> None:
    builder.commit(
        "base", {"small.py": "needle = 1\n", "data.txt": _big(10_000, changed=3) + "needle\n"}
    )
    repo = GitRepo(builder.path)
    repo.big_file = LIMIT
    done = trace_check(repo, "needle", ["HEAD"])
    assert [row[2] for row in done.section.tables[0].rows] == [2]  # git grep counts both files
    control = next(c for c in done.section.controls if c.name == "hits read back from the blobs")
    assert control.ok and "1 of 1 file(s)" in control.result and "not read back" in control.result


def test_a_pick_of_a_file_over_16_mib_runs_as_a_user_runs_it(builder, run_cli, tmp_path) -> None:
    builder.commit("base", {"f.txt": "base\n"})
    builder.branch("release")
    big = _big(BIG_FILE // 30 + 1000)
    assert len(big) > BIG_FILE
    builder.commit("Add data (#5)", {"data.txt": big})
    builder.checkout("release")
    builder.cherry_pick(builder.rev("main"), "-x")
    out = tmp_path / "report.md"
    code, _, err = run_cli(
        "fidelity", "main..release", "--repo", str(builder.path), "--source", "main",
        "--format", "md", "--output", str(out),
    )  # fmt: skip
    assert code == 0, err
    assert "| `data.txt` | binary |" in out.read_text()


def test_a_pick_that_moved_many_files_pairs_them_by_lookup(builder, monkeypatch) -> None:
    """The source added files under vendor/, the pick others under third_party/: each pick file is
    looked up among the source's lone files by path, then by content, not searched (3000 such
    files took 55 s: every pick file compared with every source file)."""
    import harness.checks.fidelity.compare as fc

    n = 300
    builder.commit("base", {"f.txt": "base\n"})
    builder.branch("release")
    builder.commit("Vendor it (#7)", {f"vendor/m{i}.py": f"x_{i} = {i}\n" for i in range(n)})
    builder.checkout("release")
    base = builder.rev("HEAD")
    # Half moved as they were (paired by content), half changed on the way (not paired).
    moved = {f"third_party/m{i}.py": f"x_{i} = {i if i % 2 else -i}\n" for i in range(1, n)}
    builder.commit("Vendor it (#7)", moved)
    calls = []
    tokens = fc.Side.tokens
    monkeypatch.setattr(fc.Side, "tokens", lambda self: calls.append(1) or tokens(self))
    section = fidelity_section(GitRepo(builder.path), base, "release", "main")
    (pick,) = section.data["picks"]
    statuses = [f["status"] for f in pick["files"]]
    paired = n // 2  # the odd ones
    assert statuses.count("extra-in-pick") == n - 1 - paired
    assert statuses.count("missing-from-pick") == n - paired
    assert len(calls) < 10 * n  # each file once for the lookup, not once per pair of files


def test_a_line_of_a_megabyte_is_shown_cut_and_counted_whole(builder, run_cli, tmp_path) -> None:
    """A minified bundle is one line: the report shows its first characters and how many more
    there are; the ± counts and checksums are over the whole line."""
    import hashlib

    from harness.report.safe import LINE_SHOWN, line_shown

    builder.commit("base", {"f.txt": "base\n"})
    builder.branch("release")
    builder.commit("Add bundle (#5)", {"min.js": "var a=" + "x" * 1_000_000 + ";\n"})
    builder.checkout("release")
    base = builder.rev("HEAD")
    picked = "var a=" + "y" * 1_000_000 + ";"
    builder.commit("Add bundle (#5)", {"min.js": picked + "\n"})
    out = tmp_path / "out"
    code, _, err = run_cli(
        "compare", base, "release", "--repo", str(builder.path), "--source", "main",
        "--output-dir", str(out), "--format", "none", "--fail-on", "never",
    )  # fmt: skip
    assert code == 0, err
    for name in ("report.md", "report.json", "report.html", "comment.md"):
        assert (out / name).stat().st_size < 200_000, name
    doc = json.loads((out / "report.json").read_text())
    (pick,) = doc["sections"][0]["data"]["picks"]
    (f,) = pick["files"]
    assert f["pick"]["added"] == 1
    assert f["pick"]["added_sha1"] == hashlib.sha1((picked + "\n").encode()).hexdigest()[:8]
    assert f["only_in_pick"] == [line_shown(("+" + picked).encode())]
    assert f["only_in_pick"][0].endswith(f"… ({len(picked) + 1 - LINE_SHOWN} more characters)")


def test_many_differing_lines_are_capped_in_the_json_with_a_count(
    builder, run_cli, tmp_path
) -> None:
    """A vendoring pick of thousands of lines: each file's only_in_pick / only_in_source list keeps
    the first JSON_LINES lines and says how many more there are (before, every line: a 20k-file
    pick made a 45 MB report.json); the ± counts cover every line."""
    from harness.checks.fidelity.section import JSON_LINES

    n = JSON_LINES + 350
    builder.commit("base", {"f.txt": "base\n"})
    builder.branch("release")
    builder.commit("Vendor lib (#5)", {"lib.py": "".join(f"source {i}\n" for i in range(n))})
    builder.checkout("release")
    base = builder.rev("HEAD")
    builder.commit("Vendor lib (#5)", {"lib.py": "".join(f"picked {i}\n" for i in range(n))})
    code, _, err = run_cli(
        "fidelity", f"{base}..release", "--repo", str(builder.path), "--source", "main",
        "--format", "json", "--output", str(tmp_path / "report.json"), "--fail-on", "never",
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads((tmp_path / "report.json").read_text())
    (pick,) = doc["sections"][0]["data"]["picks"]
    (f,) = pick["files"]
    assert f["pick"]["added"] == n and f["source"]["added"] == n
    assert f["only_in_pick"] == [f"+picked {i}" for i in range(JSON_LINES)]
    assert f["only_in_pick_left_out"] == n - JSON_LINES
    assert f["only_in_source"] == [f"+source {i}" for i in range(JSON_LINES)]
    assert f["only_in_source_left_out"] == n - JSON_LINES


def test_a_short_list_is_whole_and_has_no_count(builder, run_cli, tmp_path) -> None:
    from harness.checks.fidelity.section import JSON_LINES

    n = JSON_LINES
    builder.commit("base", {"f.txt": "base\n"})
    builder.branch("release")
    builder.commit("Vendor lib (#5)", {"lib.py": "".join(f"source {i}\n" for i in range(n))})
    builder.checkout("release")
    base = builder.rev("HEAD")
    builder.commit("Vendor lib (#5)", {"lib.py": "".join(f"picked {i}\n" for i in range(n))})
    code, _, err = run_cli(
        "fidelity", f"{base}..release", "--repo", str(builder.path), "--source", "main",
        "--format", "json", "--output", str(tmp_path / "report.json"), "--fail-on", "never",
    )  # fmt: skip
    assert code == 0, err
    (pick,) = json.loads((tmp_path / "report.json").read_text())["sections"][0]["data"]["picks"]
    (f,) = pick["files"]
    assert len(f["only_in_pick"]) == n and "only_in_pick_left_out" not in f
