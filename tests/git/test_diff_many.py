"""diff_many: a batch split over several git processes gives each diff, in input order, exactly as
one process per commit would."""

from __future__ import annotations

import harness.git.patch as patch
from harness.git import GitRepo
from harness.git.patch import diff_many


def test_a_split_batch_keeps_input_order_and_content(builder, monkeypatch) -> None:
    shas = [
        builder.commit(f"c{i}", {f"f{i % 5}.py": "".join(f"line {i} {k}\n" for k in range(i + 1))})
        for i in range(40)
    ]
    repo = GitRepo(builder.path)
    asked = [(s, None) for s in reversed(shas)]  # not history order: the input order must hold
    monkeypatch.setattr(patch, "_WORKERS", 3)
    started: list[int] = []
    popen = repo.popen
    monkeypatch.setattr(repo, "popen", lambda args, **kw: started.append(1) or popen(args, **kw))
    split = diff_many(repo, asked)
    assert len(started) == 3  # the batch was split
    one_by_one = [diff_many(repo, [pair])[0] for pair in asked]
    assert [p.commit for p in split] == [s for s, _ in asked]
    assert split == one_by_one
    assert [p.commit for p in diff_many(repo, asked[:5])] == [s for s, _ in asked[:5]]
