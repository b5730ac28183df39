"""The module path proof as read by mutation, sweep and the tests section: which entries were
imported from outside the tree, whether the proof holds, and one proof over several runs."""

from __future__ import annotations

from harness.envs import proof

IN_TREE = {"status": "in tree", "module": "calc.core", "file": "src/calc/core.py"}
SHADOWED = {"status": "shadowed", "module": "calc.util", "file": "/site-packages/calc/util.py"}
ABSENT = {"status": "not imported", "module": None, "file": None}


def test_shadowed_entries_and_where_they_came_from_keep_the_proofs_order():
    proofs = {"src/calc/util.py": SHADOWED, "src/calc/core.py": IN_TREE, "z.py": dict(SHADOWED)}
    assert list(proof.shadowed(proofs)) == ["src/calc/util.py", "z.py"]
    assert proof.outside(proofs) == [
        "src/calc/util.py: /site-packages/calc/util.py",
        "z.py: /site-packages/calc/util.py",
    ]
    assert proof.outside({"src/calc/core.py": IN_TREE}) == []


def test_the_proof_holds_only_when_every_module_came_from_the_tree():
    assert proof.held({"a.py": IN_TREE, "b.py": IN_TREE}) is True
    assert proof.held({"a.py": IN_TREE, "b.py": SHADOWED}) is False
    assert proof.held({"a.py": IN_TREE, "b.py": ABSENT}) is None
    assert proof.held({}) is None


def test_one_proof_over_runs_keeps_the_worst_entry_per_file():
    runs = [{"b.py": IN_TREE, "a.py": IN_TREE}, {"a.py": SHADOWED}, {"b.py": ABSENT}]
    assert proof.merge(runs) == {"a.py": SHADOWED, "b.py": ABSENT}
    assert list(proof.merge(runs)) == ["a.py", "b.py"]  # sorted by file
    assert proof.merge([{"a.py": SHADOWED}, {"a.py": IN_TREE}]) == {"a.py": SHADOWED}
    assert proof.merge([]) == {}
