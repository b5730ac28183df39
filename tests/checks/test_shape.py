"""harness shape: parents, identities and dates, sign-offs against the author, --same-tree."""

from __future__ import annotations

import json

import pytest

from harness.checks.shape import (
    EMAIL_ONLY,
    EXACT,
    NAME_ONLY,
    NOREPLY,
    OTHER,
    classify_signoff,
    compare_trees,
    shape_rows,
    shape_section,
)
from harness.git.repo import GitRepo

ANA = "Ana Dev <ana@corp.example>"


@pytest.mark.parametrize(
    "name,email,want",
    [
        ("Ana Dev", "ana@corp.example", EXACT),
        ("ana  dev", "ANA@corp.example", EXACT),
        ("Ana Dev", "123+ana@users.noreply.github.com", NOREPLY),
        ("Ana Dev", "ana@home.example", NAME_ONLY),
        ("A. Dev", "ana@corp.example", EMAIL_ONLY),
        ("Bob", "bob@corp.example", OTHER),
    ],
)
def test_classify_signoff(name, email, want):
    assert classify_signoff("Ana Dev", "ana@corp.example", name, email) == want


def _repo(builder):
    builder.commit("base", {"f": "1\n"})
    builder.branch("release")
    builder.commit("fix", {"f": "2\n"}, author=ANA)
    fix = builder.rev("HEAD")
    builder.checkout("release")
    builder.branch("pr")
    builder.checkout("pr")
    builder.cherry_pick(fix, "-x")
    builder.commit("ok\n\nSigned-off-by: Ana Dev <ana@corp.example>", {"g": "1\n"}, author=ANA)
    builder.commit(
        "swap\n\nSigned-off-by: Ana Dev <99+ana@users.noreply.github.com>", {"g": "2\n"}, author=ANA
    )
    builder.commit(
        "other\n\nSigned-off-by: Bob <bob@corp.example>\nSigned-off-by: Ana D <ana@home.example>",
        {"g": "3\n"},
        author=ANA,
    )
    builder.checkout("main")
    return fix


def test_rows_shape_and_every_signoff_mismatch(builder, run_cli):
    fix = _repo(builder)
    snap = builder.snapshot()
    rows = shape_rows(GitRepo(builder.path), "release", "pr")
    assert [r.commit.subject for r in rows] == ["fix", "ok", "swap", "other"]
    assert rows[0].picked_from == fix and rows[0].date_shape.startswith("authored before committed")
    assert [r.signoff_verdict for r in rows] == [
        "no Signed-off-by",
        "author signed off",
        f"author signed off ({NOREPLY})",
        "author did not sign off",
    ]
    code, out, err = run_cli(
        "shape", "--repo", str(builder.path), "release..pr", "--format", "json", "--fail-on", "p2"
    )
    assert code == 1, err
    sec = json.loads(out)["sections"][0]
    mism = [f for f in sec["findings"] if f["kind"] == "shape-signoff"]
    assert len(mism) == 2 and not any(rows[2].commit.sha[:12] in f["title"] for f in mism)
    note = [f for f in sec["findings"] if f["kind"] == "shape-signoff-name"]
    assert (
        len(note) == 1
        and note[0]["severity"] == "info"
        and "99+ana@users.noreply" in note[0]["detail"]
    )
    assert [s["match"] for s in sec["data"]["rows"][3]["signoffs"]] == [OTHER, OTHER]
    assert [c["ok"] for c in sec["controls"]] == [True, True, None]
    assert "3 of 4" in sec["controls"][2]["result"]
    assert builder.snapshot() == snap


def test_unsigned_project_gets_no_p2_for_missing_signoffs(builder):
    builder.commit("base", {"f": "1\n"})
    start = builder.rev("HEAD")
    for i in range(3):
        builder.commit(f"work {i}", {"f": f"{i}\n"}, author=ANA)
    builder.commit(
        "bump\n\nSigned-off-by: bot <support@github.com>",
        {"f": "x\n"},
        author="bot <1+bot@users.noreply.github.com>",
    )
    section = shape_section(GitRepo(builder.path), start, "main")
    assert [(f.kind, f.severity) for f in section.findings] == [
        ("shape-signoff-name", "info")
    ]  # same name, noreply
    assert "not treated as required" in section.controls[2].result


def test_merge_parents_are_named(builder):
    builder.commit("base", {"f": "1\n"})
    builder.branch("topic")
    builder.checkout("topic")
    builder.commit("topic work", {"t": "1\n"})
    builder.checkout("main")
    builder.commit("main work", {"m": "1\n"})
    start = builder.rev("HEAD~1")
    builder.merge("topic", "merge topic")
    rows = shape_rows(GitRepo(builder.path), start, "main")
    merge = [r for r in rows if r.commit.is_merge][0]
    assert len(merge.commit.parents) == 2 and set(merge.parent_names.values()) == {
        "main~1",
        "topic",
    }
    assert merge.signoff_verdict == "merge: not checked"
    section = shape_section(GitRepo(builder.path), start, "main")
    cell = next(r[1].text for r in section.tables[0].rows if r[0].sha == merge.commit.sha)
    assert "topic" in cell and "main~1" in cell


def test_same_tree_despite_different_history(builder, run_cli):
    fix = _repo(builder)
    picked = builder.rev("pr~3")
    st = compare_trees(GitRepo(builder.path), fix, picked)
    assert st.identical  # the pick onto an unmoved release reproduces the same content
    assert {"commit", "committed", "message"} <= {k for k, _, _ in st.differences}
    builder.checkout("release")
    builder.branch("again")
    builder.checkout("again")
    builder.cherry_pick(fix)
    builder.checkout("main")
    st = compare_trees(GitRepo(builder.path), "pr~3", "again")
    assert st.identical and "commit" in [k for k, _, _ in st.differences]
    code, out, _ = run_cli(
        "shape",
        "--repo",
        str(builder.path),
        "release..again",
        "--same-tree",
        "pr~3",
        "again",
        "--format",
        "json",
    )
    data = json.loads(out)["sections"][0]["data"]["same_tree"]
    assert data["identical"] is True and data["changed"] == []
    code, out, _ = run_cli(
        "shape",
        "--repo",
        str(builder.path),
        "release..again",
        "--same-tree",
        "pr",
        "again",
        "--format",
        "json",
    )
    sec = json.loads(out)["sections"][0]
    assert sec["data"]["same_tree"]["identical"] is False
    assert {c["path"] for c in sec["data"]["same_tree"]["changed"]} == {"g"}
    assert any(f["kind"] == "shape-tree-differs" and f["severity"] == "P2" for f in sec["findings"])


def test_bad_ranges_and_option_like_refs(builder, run_cli, tmp_path):
    _repo(builder)
    out_file = tmp_path / "r.md"
    for spec in ("release", "release..nope", "release...pr"):
        code, _, err = run_cli(
            "shape", "--repo", str(builder.path), spec, "--output", str(out_file)
        )
        assert code == 2 and len(err.strip().splitlines()) == 1 and not out_file.exists()
    builder.repo.git.update_ref("refs/heads/--upload-pack=x", "release")
    code, out, err = run_cli(
        "shape", "--repo", str(builder.path), "--format", "json", "--", "--upload-pack=x..pr"
    )
    assert code == 0, err
    assert len(json.loads(out)["sections"][0]["data"]["rows"]) == 4


def test_bare_repository(builder, tmp_path):
    _repo(builder)
    bare = builder.bare_clone(tmp_path / "bare.git")
    assert len(shape_rows(GitRepo(bare), "release", "pr")) == 4


@pytest.mark.parametrize(
    "author,name,email,want",
    [
        ("ana@corp.example", "ana", "ANA@corp.example", EMAIL_ONLY),
        ("123+ana@users.noreply.github.com", "Ana", "ana@users.noreply.github.com", EMAIL_ONLY),
        ("ana@users.noreply.github.com", "Ana Dev", "77+Ana@users.noreply.github.com", EXACT),
        (
            "123+ana@users.noreply.github.com",
            "Ana Dev",
            "123+bob@users.noreply.github.com",
            NAME_ONLY,
        ),
        (
            "114+loadams@users.noreply.github.com",
            "Logan A.",
            "loadams@corp.example",
            NOREPLY,
        ),  # login = local part
        ("loadams@corp.example", "L", "9+LoAdams@users.noreply.github.com", NOREPLY),
        ("114+loadams@users.noreply.github.com", "Someone", "someone@corp.example", OTHER),
        (
            "ana@corp.example",
            "Ana Dev",
            "noreply@corp.example",
            NAME_ONLY,
        ),  # only GitHub's noreply stands for a person
        (
            "69+Can-Zhao@users.noreply.github.com",
            "can-zhao",
            "canz@corp.example",
            NOREPLY,
        ),  # the name is the login
        ("69+Can-Zhao@users.noreply.github.com", "can_zhao", "canz@corp.example", OTHER),
        (
            "ana@corp.example",
            "Ana Dev",
            "ana+ci@corp.example",
            NAME_ONLY,
        ),  # only GitHub noreply folds ID+
    ],
)
def test_dco_email_rule(author, name, email, want):
    assert classify_signoff("Ana Dev", author, name, email) == want


def test_dco_satisfied_gives_no_signoff_finding(builder, run_cli):
    """DCO holds when a Signed-off-by carries the author's email: names may differ (one info note), the
    GitHub noreply forms are one address; only a real email mismatch is P2."""
    builder.commit("base", {"f": "1\n"})
    start = builder.rev("HEAD")
    noreply = "Ana Dev <123+ana@users.noreply.github.com>"
    builder.commit("a\n\nSigned-off-by: Ana Dev <ana@corp.example>", {"f": "a\n"}, author=ANA)
    builder.commit("b\n\nSigned-off-by: ana <ANA@Corp.Example>", {"f": "b\n"}, author=ANA)
    builder.commit(
        "c\n\nSigned-off-by: Ana <ana@users.noreply.github.com>", {"f": "c\n"}, author=noreply
    )
    builder.commit(
        "d\n\nSigned-off-by: Bob <bob@corp.example>\nSigned-off-by: A. D. <ana@corp.example>",
        {"f": "d\n"},
        author=ANA,
    )
    code, out, err = run_cli(
        "shape",
        "--repo",
        str(builder.path),
        f"{start}..main",
        "--format",
        "json",
        "--fail-on",
        "p2",
    )
    assert code == 0, err
    sec = json.loads(out)["sections"][0]
    assert [f["kind"] for f in sec["findings"]] == ["shape-signoff-name"]
    names = sec["findings"][0]
    assert names["severity"] == "info" and names["title"].startswith("3 commit(s)")
    assert [r["signoff"] for r in sec["data"]["rows"]] == [
        "author signed off",
        "author signed off (name differs)",
        "author signed off (name differs)",
        "author signed off (name differs)",
    ]
    assert all(c["ok"] is not False for c in sec["controls"])
    builder.commit("e\n\nSigned-off-by: Ana Dev <ana@home.example>", {"f": "e\n"}, author=ANA)
    code, out, _ = run_cli(
        "shape",
        "--repo",
        str(builder.path),
        f"{start}..main",
        "--format",
        "json",
        "--fail-on",
        "p2",
    )
    mism = [f for f in json.loads(out)["sections"][0]["findings"] if f["kind"] == "shape-signoff"]
    assert code == 1 and len(mism) == 1 and mism[0]["severity"] == "P2"
