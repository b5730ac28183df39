"""Per-pick memos (checks/fidelity/memo.py): a key is the sha256 of the JSON text of its kind,
scope and parts, however it is written; a pick's status is kept by the pick and its sources."""

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


def test_a_pick_s_status_is_kept_by_the_pick_and_its_sources(builder, tmp_path):
    """A second run recalls each sourced pick's status (no line counted again) and says the same;
    a kept value that is no status is not used."""
    from harness.checks.fidelity.check import fidelity_check
    from harness.git import GitRepo
    from harness.infra.history_index import HistoryIndex

    body = "".join(f"v_{i} = {i}\n" for i in range(20))
    builder.commit("base", {"a.py": body})
    builder.branch("release")
    same = builder.commit("Set v_3 (#1)", {"a.py": body.replace("v_3 = 3", "v_3 = 33")})
    other = builder.commit(
        "Set v_9 (#2)", {"a.py": (builder.path / "a.py").read_text().replace("v_9 = 9", "v_9 = 99")}
    )
    builder.checkout("release")
    base = builder.rev("HEAD")
    builder.cherry_pick(same, "-x")
    adapted = (builder.path / "a.py").read_text().replace("v_9 = 9", "v_9 = 98")
    builder.commit(f"Set v_9 (#2)\n\n(cherry picked from commit {other})", {"a.py": adapted})
    repo, root = GitRepo(builder.path), tmp_path / "index"

    def run() -> tuple[list[str], HistoryIndex]:
        for kept in root.glob("*/results"):  # (else the whole answer is served, as it was kept)
            shutil.rmtree(kept)
        index = HistoryIndex(repo, root)
        section = fidelity_check(repo, base, "release", "main", index=index).section
        index.save()
        return [p["status"] for p in section.data["picks"]], index

    first, index = run()
    assert first == ["identical", "adapted"] and index.served.get("recalled status", 0) == 0
    again, index = run()
    assert again == first and index.served["recalled status"] == 2
    # A kept value that is no status (another code's, an edit) is dropped and computed again.
    for key in list(index._memo("status")):
        index.remember("status", key, "mostly fine")
    index.save()
    third, index = run()
    assert third == first and index.served.get("recalled status", 0) == 0
    assert "memo-status.json: an entry of the wrong shape" in index.rebuilt
