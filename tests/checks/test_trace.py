"""harness trace: a fixed string per ref without checkout, and the commits of a range that change it."""

from __future__ import annotations

import json

from harness.checks.trace import trace_range, trace_refs, trace_section
from harness.git.repo import GitRepo


def _repo(builder):
    builder.commit(
        "base",
        {
            "src/a.py": "use_old_api()\nx = 1\n",
            "src/b.py": "use_old_api()  # twice use_old_api()\n",
            "docs/n.md": "use_old_api is deprecated\n",
        },
    )
    builder.branch("release")
    builder.commit("port a", {"src/a.py": "use_new_api()\nx = 1\n"})
    return builder


def test_counts_and_hits_per_ref_json_rows(builder, run_cli):
    _repo(builder)
    snap = builder.snapshot()
    code, out, err = run_cli(
        "trace",
        "--repo",
        str(builder.path),
        "use_old_api",
        "--refs",
        "release",
        "main",
        "--format",
        "json",
    )
    assert code == 0, err
    sec = json.loads(out)["sections"][0]
    rows = sec["data"]["rows"]
    assert [(r["ref"], r["count"]) for r in rows] == [("release", 3), ("main", 2)]
    assert rows[1]["hits"] == [{"path": "docs/n.md", "line": 1}, {"path": "src/b.py", "line": 1}]
    assert all(c["ok"] is not False for c in sec["controls"])
    assert sec["controls"][0]["ok"] is True
    assert builder.snapshot() == snap


def test_zero_is_a_row_with_a_positive_control(builder):
    _repo(builder)
    repo = GitRepo(builder.path)
    section = trace_section(repo, "use_new_api", ["release", "main"], under="src")
    assert [r[2] for r in section.tables[0].rows] == [0, 1]
    zero = next(c for c in section.controls if c.name.startswith("zero rows"))
    assert zero.ok is True and "release" in zero.result
    assert [f.kind for f in section.findings] == ["trace-split"]


def test_under_limits_paths(builder):
    _repo(builder)
    rows = trace_refs(GitRepo(builder.path), "use_old_api", ["main"], under="src")
    assert [(h.path, h.line) for h in rows[0].hits] == [("src/b.py", 1)]


def test_range_names_adding_and_removing_commits(builder, run_cli):
    _repo(builder)
    add = builder.commit("add", {"src/c.py": "use_new_api()\n"})
    rng = trace_range(GitRepo(builder.path), "use_new_api", "release..main")
    assert [(c.subject, c.before, c.after, c.change) for c in rng.changes] == [
        ("port a", 0, 1, "added"),
        ("add", 1, 2, "added"),
    ]
    assert rng.changes[1].sha == add and (rng.count_base, rng.count_head) == (0, 2)
    code, out, _ = run_cli(
        "trace",
        "--repo",
        str(builder.path),
        "use_old_api",
        "--refs",
        "main",
        "--range",
        "release..main",
        "--format",
        "json",
        "--fail-on",
        "p2",
    )
    sec = json.loads(out)["sections"][0]
    assert sec["data"]["range"]["commits"][0]["change"] == "removed"
    assert any(
        f["kind"] == "trace-still-present" and f["severity"] == "P2" for f in sec["findings"]
    )
    arithmetic = next(c for c in sec["controls"] if c["name"] == "range arithmetic")
    assert arithmetic["ok"] is True
    assert code == 1


def test_non_utf8_and_binary_content(builder):
    builder.commit("bytes", {"latin.txt": b"caf\xe9 NEEDLE\n", "blob.bin": b"\x00\x01NEEDLE\x00"})
    rows = trace_refs(GitRepo(builder.path), "NEEDLE", ["HEAD"])
    assert [(h.path, h.text) for h in rows[0].hits] == [("latin.txt", b"caf\xe9 NEEDLE")]
    section = trace_section(GitRepo(builder.path), "NEEDLE", ["HEAD"])
    assert section.controls[0].ok is True


def test_option_like_ref_and_unknown_ref(builder, run_cli, tmp_path):
    _repo(builder)
    builder.repo.git.update_ref("refs/heads/--upload-pack=x", "release")
    code, out, err = run_cli(
        "trace",
        "--repo",
        str(builder.path),
        "use_old_api",
        "--refs=--upload-pack=x",
        "--format",
        "json",
    )
    assert code == 0, err
    assert json.loads(out)["sections"][0]["data"]["rows"][0]["count"] == 3
    code, out, err = run_cli(
        "trace",
        "--repo",
        str(builder.path),
        "--refs",
        "main",
        "--format",
        "json",
        "--",
        "--upload-pack=x",
    )
    assert code == 0, err  # a needle that looks like an option is searched for, not run
    assert json.loads(out)["sections"][0]["data"]["needle"] == "--upload-pack=x"
    out_file = tmp_path / "r.md"
    code, _, err = run_cli(
        "trace",
        "--repo",
        str(builder.path),
        "x",
        "--refs",
        "main",
        "nope",
        "--output",
        str(out_file),
    )
    assert code == 2 and len(err.strip().splitlines()) == 1 and not out_file.exists()
    code, _, err = run_cli(
        "trace", "--repo", str(builder.path), "x", "--refs", "main", "--range", "main"
    )
    assert code == 2 and len(err.strip().splitlines()) == 1


def test_bare_repository(builder, tmp_path):
    _repo(builder)
    bare = builder.bare_clone(tmp_path / "bare.git")
    rows = trace_refs(GitRepo(bare), "use_old_api", ["release", "main"])
    assert [r.count for r in rows] == [3, 2]
