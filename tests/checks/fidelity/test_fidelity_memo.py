"""Per-pick memos (checks/fidelity/memo.py): a key is the sha256 of the JSON text of its kind,
scope and parts, however it is written; a pick's comparison with its sources (its files and
status) is kept by the pick and its sources, the sources' lines left out."""

from __future__ import annotations

import hashlib
import json
import random
import shutil

from harness.checks.fidelity.memo import Memo


def _want(kind: object, scope: list[object], parts: list[object]) -> str:
    text = json.dumps([kind, scope, parts], ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def test_a_key_is_the_digest_of_the_json_text_written_in_c_or_not():
    """Strings alone (the fast path: no json.dumps a call) and anything else (numbers, None, a
    nested list) give the key ``json.dumps`` gives: memos kept before are found."""
    r = random.Random(3)
    chars = ["a", "\udce9", "é", "\n", '"', "\\", "\x00", "\U0001f600", " ", "\ud800", "\x7f"]

    def text() -> str:
        return "".join(r.choice(chars) for _ in range(r.randint(0, 6)))

    for _ in range(5000):
        scope: list[object] = [text() for _ in range(r.randint(0, 3))]
        parts: list[object] = [text() for _ in range(r.randint(0, 4))]
        if r.random() < 0.2:
            scope.append(r.choice([None, 3, ["x"]]))
        if r.random() < 0.2:
            parts.append(r.choice([None, 7, [text()]]))
        kind = text()
        assert Memo(None, scope)._key(kind, parts) == _want(kind, scope, parts)


def _two_picks(builder):
    body = "".join(f"v_{i} = {i}\n" for i in range(20))
    builder.commit("base", {"a.py": body, "b.py": body})
    builder.branch("release")
    same = builder.commit("Set v_3 (#1)", {"a.py": body.replace("v_3 = 3", "v_3 = 33")})
    moved = (builder.path / "a.py").read_text().replace("v_9 = 9", "v_9 = 99")
    other = builder.commit("Set v_9 (#2)", {"a.py": moved, "b.py": body + "extra = 1\n"})
    builder.checkout("release")
    base = builder.rev("HEAD")
    builder.cherry_pick(same, "-x")
    adapted = (builder.path / "a.py").read_text().replace("v_9 = 9", "v_9 = 98")
    msg = f"Set v_9 (#2)\n\n(cherry picked from commit {other})"
    builder.commit(msg, {"a.py": adapted, "b.py": body + "extra = 1\n"})
    return base


def test_a_pick_s_comparison_is_kept_by_the_pick_and_its_sources(builder, tmp_path):
    """A second run recalls each sourced pick's comparison and status (no source diff read, no
    line counted again) and builds the same section; a kept value of another shape is not
    used."""
    from harness.checks.fidelity.check import fidelity_check
    from harness.git import GitRepo
    from harness.infra.history_index import HistoryIndex

    base = _two_picks(builder)
    repo, root = GitRepo(builder.path), tmp_path / "index"

    def run():
        for kept in root.glob("*/results"):  # (else the whole answer is served, as it was kept)
            shutil.rmtree(kept)
        index = HistoryIndex(repo, root)
        section = fidelity_check(repo, base, "release", "main", index=index).section
        index.save()
        return section, index

    first, index = run()
    statuses = [p["status"] for p in first.data["picks"]]
    assert statuses == ["identical", "adapted"]
    assert index.served.get("recalled compared", 0) == 0
    again, index = run()
    assert again == first and index.served["recalled compared"] == 2
    # A kept value that is no comparison (another code's, an edit) is dropped and compared again.
    for key in list(index._memo("compared")):
        index.remember("compared", key, ["mostly fine", []])
    index.save()
    third, index = run()
    assert third == first and index.served.get("recalled compared", 0) == 0
    assert "memo-compared.json: an entry of the wrong shape" in index.rebuilt


def test_a_kept_comparison_is_the_comparison_less_the_source_s_lines(builder):
    """``kept_form``/``from_kept``: every field the check reads comes back (through JSON); the
    pick's sides are made again from its diff; a source's lines are counted, never readable."""
    import json as jsonlib

    import pytest

    from harness.checks.fidelity.compare import (
        LinesNotKept,
        compare_files,
        from_kept,
        kept_form,
        pick_status,
        valid_kept,
    )
    from harness.git import GitRepo
    from harness.git.patch import diff_many

    _two_picks(builder)
    repo = GitRepo(builder.path)
    # Each pick with its source, and with the other's (files the other side lacks: no source).
    pairs = [("release~1", "main~1"), ("release", "main"), ("release", "main~1")]
    for pick, src in ((builder.rev(p), builder.rev(s)) for p, s in pairs):
        pf, sf = (p.files for p in diff_many(repo, [(pick, None), (src, None)]))
        files = compare_files(pf, sf)
        value = jsonlib.loads(jsonlib.dumps(kept_form(files, pick_status(files, True))))
        assert valid_kept(value) and not valid_kept([value[0], [[*value[1][0][:7]]]])
        back, status = from_kept(value, pf)
        assert status == pick_status(files, True)
        for a, b in zip(files, back, strict=True):
            assert (a.path, a.status, a.same, a.note, a.only_pick, a.only_source) == (
                b.path, b.status, b.same, b.note, b.only_pick, b.only_source,
            )  # fmt: skip
            if a.pick is not None and b.pick is not None:  # (made again from the pick's diff)
                fields = ("path", "old_path", "status", "added", "removed", "binary", "new_blob")
                assert [getattr(a.pick, x) for x in fields] == [getattr(b.pick, x) for x in fields]
                assert len(b.pick.body) == len(a.pick.body)  # (its context: counted)
            assert (a.pick is None) == (b.pick is None)
            assert (a.source is None) == (b.source is None)
            if a.source is None or b.source is None:
                continue
            assert a.source.figures() == b.source.figures()
            assert (a.source.path, a.source.old_path, a.source.new_blob) == (
                b.source.path, b.source.old_path, b.source.new_blob,
            )  # fmt: skip
            assert len(b.source.added) == len(a.source.added)
            assert isinstance(b.source.added, LinesNotKept)
            with pytest.raises(RuntimeError, match="not kept"):
                list(b.source.added)


def test_a_kept_comparison_is_named_by_what_each_source_was_diffed_against():
    """A merge source diffed against its first parent (the history names it) and the same commit
    diffed against nothing (a ``--map`` source outside that history) are other comparisons."""
    from harness.checks.fidelity.resolve import compared_key

    pick, merge, other = "a" * 40, "b" * 40, "c" * 40
    plain = compared_key({}, pick, [merge, other])
    first = compared_key({merge: "d" * 40}, pick, [merge, other])
    memo = Memo(None, [])
    assert plain != first and memo._key("compared", plain) != memo._key("compared", first)
    assert compared_key({merge: "d" * 40}, pick, [other]) == compared_key({}, pick, [other])
