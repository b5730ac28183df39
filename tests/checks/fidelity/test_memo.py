"""Per-pick memos (checks/fidelity/memo.py): a re-run after a new pick recalls what the other picks
kept and gives the answer a run without the index gives, also where the new pick changes what an
old pick's answer depends on (the similarity search's other picks, a follow-up it now carries,
HEAD's file at a path old picks touch); a damaged memo is dropped, never used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.checks.fidelity import source as source_module
from harness.checks.fidelity.check import fidelity_check
from harness.git import GitRepo
from harness.infra.history_index import HistoryIndex
from harness.testing.repos import RepoBuilder

LINES = "".join(f"value_{i} = compute({i}, 'unique text {i}')\n" for i in range(12))


def _run(path: Path, base: str, root: Path | None):
    repo = GitRepo(path)
    index = HistoryIndex(repo, root) if root is not None else None
    checked = fidelity_check(repo, base, "release", "main", index=index)
    if index is not None:
        index.save()
    return checked, index


def _same_as_plain(path: Path, base: str, root: Path) -> HistoryIndex:
    plain, _ = _run(path, base, None)
    got, idx = _run(path, base, root)
    assert got.section == plain.section and got.result == plain.result
    assert idx is not None and not idx.rebuilt
    return idx


def _memo_files(root: Path) -> dict[str, Path]:
    (folder,) = [p for p in root.iterdir() if p.is_dir()]
    return {p.stem.removeprefix("memo-"): p for p in folder.glob("memo-*.json")}


def _drop_answers(root: Path) -> None:
    for p in root.rglob("results/*.json"):
        p.unlink()


def _shared(builder: RepoBuilder) -> tuple[str, list[str]]:
    """Picks that share a file (their end-state rows read each other's lines), a unit with a
    later follow-up, and main's commits not picked yet."""
    body = "".join(f"line_{i} = {i}\n" for i in range(40))
    builder.commit("base", {"a.py": body, "b.py": body})
    builder.branch("release")
    one = builder.commit("Fix a (#1)", {"a.py": body.replace("line_3 = 3", "line_3 = 300")})
    two = builder.commit(
        "Fix b (#2)", {"b.py": body.replace("line_5 = 5", "line_5 = 500\nline_5b = 5")}
    )
    follow = builder.commit(
        "Follow-up to #2: keep b's new line\n\nFixes: " + two[:12],
        {"b.py": body.replace("line_5 = 5", "line_5 = 501\nline_5b = 5")},
    )
    more = builder.commit("Fix a again (#3)", {"a.py": body.replace("line_3 = 3", "line_3 = 3")})
    later = builder.commit(
        "Tune a (#4)",
        {"a.py": body.replace("line_3 = 3", "line_3 = 300").replace("line_9 = 9", "line_9 = 90")},
    )
    builder.checkout("release")
    base = builder.rev("HEAD")
    builder.cherry_pick(one, "-x")
    builder.cherry_pick(two, "-x")
    return base, [follow, more, later]


def test_a_new_pick_recalls_the_others_and_gives_the_plain_answer(builder, tmp_path):
    base, (follow, _, later) = _shared(builder)
    root = tmp_path / "index"
    _same_as_plain(builder.path, base, root)
    kinds = _memo_files(root)
    assert {"resolution", "followups", "end-state"} <= set(kinds)
    # The follow-up of #2 is listed while no pick carries it.
    checked, _ = _run(builder.path, base, None)
    assert follow in {f["sha"] for f in checked.section.data["follow_ups"]}
    # A new pick of the follow-up: no longer listed, though the unit's memo still holds it.
    builder.cherry_pick(follow, "-x")
    idx = _same_as_plain(builder.path, base, root)
    assert idx.served["recalled"] >= 2  # the two earlier picks' resolutions at least
    checked, _ = _run(builder.path, base, root)
    assert follow not in {f["sha"] for f in checked.section.data["follow_ups"]}
    # A new pick at a path an earlier pick changed: HEAD's a.py moved, that pick's row is new.
    builder.cherry_pick(later, "-x")
    _same_as_plain(builder.path, base, root)
    # A pick that names nothing: the history's paths are read now. The earlier picks named their
    # sources, so their kept answers still hold; the new one is searched by content.
    builder.commit("Tune a", {"a.py": (builder.path / "a.py").read_text() + "tail = 1\n"})
    idx = _same_as_plain(builder.path, base, root)
    assert idx.served.get("recalled resolution") == 4


@pytest.mark.parametrize("kind", ["resolution", "followups", "end-state", "entry"])
def test_a_damaged_memo_entry_is_dropped_and_computed_again(builder, tmp_path, kind):
    base, (follow, _, _) = _shared(builder)
    builder.cherry_pick(follow, "-x")
    # A pick without the source's second file: whether its parent has it (the "entry" memo).
    b = (builder.path / "b.py").read_text().replace("line_30 = 30", "line_30 = 3")
    builder.checkout("main")
    builder.commit("Fix b's end (#6)", {"b.py": b, "notes.md": "b's end\n"})
    builder.checkout("release")
    builder.commit("Fix b's end (#6)", {"b.py": b})
    root = tmp_path / "index"
    plain, _ = _run(builder.path, base, None)
    _run(builder.path, base, root)
    path = _memo_files(root)[kind]
    data = json.loads(path.read_text())
    for entry in data["entries"].values():
        entry[1] = {"planted": True}
    path.write_text(json.dumps(data))
    _drop_answers(root)
    got, idx = _run(builder.path, base, root)
    assert got.section == plain.section
    assert idx is not None and any(f"memo-{kind}.json" in r for r in idx.rebuilt)
    assert idx.served["remembered"] > 0  # computed again, and kept again
    again, idx = _run(builder.path, base, root)
    assert again.section == plain.section and idx is not None and not idx.rebuilt


def test_similarity_answers_hold_only_for_the_same_searched_picks(builder, tmp_path, monkeypatch):
    """A line carried by more candidates than ``_COMMON_LINE`` is no evidence: a new pick searched
    by similarity brings candidates that change an earlier pick's answer."""
    monkeypatch.setattr(source_module, "_COMMON_LINE", 1)
    base_text = "".join(f"keep_{i} = {i}\n" for i in range(30))
    builder.commit("base", {"a.py": base_text, "c.py": base_text})
    builder.branch("release")
    s1 = base_text + LINES
    builder.commit("Add the computed values", {"a.py": s1})
    builder.commit("Add the computed values elsewhere", {"c.py": base_text + LINES + "x = 1\n"})
    builder.checkout("release")
    base = builder.rev("HEAD")
    # Content-only copies, each adapted (one line more): found by similarity alone.
    builder.commit("Backport values", {"a.py": s1 + "extra_a = 1\n"})
    root = tmp_path / "index"
    _same_as_plain(builder.path, base, root)
    first, _ = _run(builder.path, base, None)
    assert first.section.data["picks"][0]["source_via"] == "similarity"
    builder.commit("Backport values elsewhere", {"c.py": base_text + LINES + "extra_c = 1\n"})
    _drop_answers(root)
    _same_as_plain(builder.path, base, root)
    after, _ = _run(builder.path, base, None)
    # The case this test is about: the earlier pick's answer did change.
    assert after.section.data["picks"][0] != first.section.data["picks"][0]


def test_an_end_state_row_is_computed_again_when_heads_file_moves(builder, tmp_path):
    """HEAD's file changes without a pick changing it (main merged back into the release): the
    earlier pick's end-state row is not the one kept."""
    body = "".join(f"line_{i} = {i}\n" for i in range(40))
    builder.commit("base", {"a.py": body})
    builder.branch("release")
    fix = builder.commit("Fix a (#1)", {"a.py": body.replace("line_3 = 3", "line_3 = 300")})
    builder.commit(
        "Tune a (#2)",
        {"a.py": body.replace("line_3 = 3", "line_3 = 300").replace("line_20 = 20", "line_20 = 2")},
    )
    builder.checkout("release")
    base = builder.rev("HEAD")
    builder.cherry_pick(fix, "-x")
    root = tmp_path / "index"
    _same_as_plain(builder.path, base, root)
    before, _ = _run(builder.path, base, None)
    builder.merge("main", "Merge main back into the release")
    _drop_answers(root)
    _same_as_plain(builder.path, base, root)
    after, _ = _run(builder.path, base, None)
    (row_before,) = before.section.data["picks"][0]["end_state"]
    (row_after,) = after.section.data["picks"][0]["end_state"]
    assert row_before["head_blob"] != row_after["head_blob"]


def test_memos_stay_within_their_bounds(builder, tmp_path, monkeypatch):
    from harness.infra import history_index as hi

    monkeypatch.setattr(hi, "MAX_MEMO", 3)
    base, later = _shared(builder)
    root = tmp_path / "index"
    for sha in later:
        builder.cherry_pick(sha, "-x")
        _same_as_plain(builder.path, base, root)
        _drop_answers(root)
    for kind, path in _memo_files(root).items():
        assert len(json.loads(path.read_text())["entries"]) <= 3, kind
        assert path.stat().st_mode & 0o077 == 0  # private, as the rest of the cache


def test_a_searched_pick_is_searched_again_once_titles_are_read(builder, tmp_path):
    """A pick whose PR number names nothing is searched by content; while every pick names a
    source the merges' PR titles are not read, and it is found by similarity. Once a pick that
    names nothing joins, titles are read and the same pick is found by its PR's title: its kept
    answer (searched without them) is not used."""
    body = "".join(f"thing_{i} = compute({i})\n" for i in range(30))
    builder.commit("base", {"a.py": body, "b.py": body})
    builder.branch("release")
    builder.branch("feat")
    builder.checkout("feat")
    improved = body.replace("thing_4 = compute(4)", "thing_4 = compute(4, fast=True)")
    improved = improved.replace("thing_9 = compute(9)", "thing_9 = compute(9, fast=True)")
    builder.commit("Add the fast path", {"a.py": improved})
    builder.checkout("main")
    builder.merge("feat", "Merge pull request #7 from someone/feat\n\nImprove the thing")
    other = body.replace("thing_20 = compute(20)", "thing_20 = compute(20, 2)")
    builder.commit("Tune b", {"b.py": other})
    builder.checkout("release")
    base = builder.rev("HEAD")
    adapted = improved.replace("thing_12 = compute(12)", "thing_12 = compute(12)  # kept")
    builder.commit("Improve the thing (#99)", {"a.py": adapted})
    root = tmp_path / "index"
    _same_as_plain(builder.path, base, root)
    before, _ = _run(builder.path, base, None)
    builder.commit("Tune b on the release", {"b.py": other})  # names nothing: titles are read
    _drop_answers(root)
    _same_as_plain(builder.path, base, root)
    after, _ = _run(builder.path, base, None)
    was, now = (c.section.data["picks"][0]["found_by"] for c in (before, after))
    # The case this test is about: the same pick, found another way once titles are read.
    assert was != now == "title"
