"""Cache keys: two columns that differ in exactly one input a result depends on never share a key.

Every probe kind is covered (a new kind without a case here fails the first test). Keys are
computed the way ``run_probes`` computes them, over a repository the test builds.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from harness.columns.trees import identify
from harness.envs.fingerprint import interpreter_fingerprint
from harness.git.repo import GitRepo
from harness.inputs.scenario import load_scenario
from harness.probes.engine import cell_keys, definition_hash
from harness.probes.kinds import KeyColumn, get_kind, kind_names

ENGINES = "{a: sglang==0.5.18, b: sglang==0.5.22}"
QUESTIONS = "rows: {question: [distinct_ids, state_left]}"
PROBES = {
    "python": "{id: p, kind: python, file: PROBE_FILE, function: f}",
    "extract": "{id: p, kind: extract, file: m.py, functions: [f], call: f}",
    "command": "{id: p, kind: command, argv: ['{python}', -c, 'print(1)']}",
    "pytest": "{id: p, kind: pytest, nodes: [test_t.py]}",
    "sglang_params": f"{{id: p, kind: sglang_params, build: {{kind: python, file: PROBE_FILE, function: f}}, "
    f"engine: {ENGINES}}}",
    "sglang_n": f"{{id: p, kind: sglang_n, engine: {ENGINES}, {QUESTIONS}}}",
}
PINNED = {  # the same engine kinds, their version read from a file of each column's tree
    "sglang_params": "{id: p, kind: sglang_params, build: {kind: python, file: PROBE_FILE, function: f}, "
    "engine_pin: {file: pin.txt}}",
    "sglang_n": f"{{id: p, kind: sglang_n, engine_pin: {{file: pin.txt}}, {QUESTIONS}}}",
}


def test_every_kind_has_a_case():
    assert sorted(PROBES) == kind_names()


def test_every_kind_module_is_the_kind_it_is_named_after():
    """kind_names() lists modules without importing them: each must be a whole kind of that name."""
    import importlib

    for name in kind_names():
        mod = importlib.import_module(f"harness.probes.kinds.{name}")
        assert mod.KIND == name
        assert all(callable(getattr(mod, m)) for m in ("validate", "run")) and hasattr(
            mod, "FIELDS"
        )
        assert get_kind(name) is mod
    with pytest.raises(KeyError):
        get_kind("_common")


@pytest.fixture
def world(builder, tmp_path):
    """Two commits (different trees), and a scenario writer."""
    one = builder.commit(
        "one",
        {
            "m.py": "def f(**row):\n    return 1\n",
            "pin.txt": "sglang==0.5.18\n",
            "test_t.py": "def test_a():\n    assert 1\n",
        },
    )
    two = builder.commit("two", {"pin.txt": "sglang==0.5.22\n"})
    probe_file = tmp_path / "probe.py"
    probe_file.write_text("def f(**row):\n    return row\n")

    def scenario(
        probe: str, *, timeout: int = 30, columns: str = "{a: ONE, b: ONE}", controls: str = ""
    ) -> object:
        sc = tmp_path / "s.yaml"
        text = f"refs: {columns}\n{controls}rows: {{x: [0, 1]}}\nprobes:\n  - " + probe.replace(
            "PROBE_FILE", str(probe_file)
        ).replace("{id: p,", f"{{id: p, timeout: {timeout},")
        sc.write_text(text.replace("ONE", one).replace("TWO", two) + "\n")
        return load_scenario(sc)

    return GitRepo(builder.path), scenario, probe_file


def _keys(repo: GitRepo, scenario, column: str, interp: str) -> list[str]:
    probe = scenario.probes[0]
    col = next(c for c in scenario.columns if c.name == column)
    ident = identify(repo, col)
    kc = KeyColumn(col.name, ident.commit_sha, ident.tree_sha, ident.edits, repo, sys.executable)
    return cell_keys(probe, kc, ident, definition_hash(probe), interp)


CASES = sorted([(k, False) for k in PROBES] + [(k, True) for k in PINNED])


@pytest.mark.parametrize("kind,pinned", CASES, ids=[f"{k}{'-pin' if p else ''}" for k, p in CASES])
def test_one_changed_input_changes_every_key(world, kind, pinned):
    repo, scenario, probe_file = world
    text = (PINNED if pinned else PROBES)[kind]
    interp = interpreter_fingerprint(sys.executable)
    base = scenario(text)
    a = _keys(repo, base, "a", interp)
    assert len(set(a)) == 2  # rows differ

    def differs(other: list[str]) -> bool:
        return not set(other) & set(a)

    # the tree: column b at the second commit
    assert differs(_keys(repo, scenario(text, columns="{a: ONE, b: TWO}"), "b", interp))
    # the edits: a control built on a with one edit
    ctl = scenario(
        text,
        controls="controls:\n  c: {ref: a, edits: [{path: m.py, replace: 'return 1', "
        "new: 'return 2'}]}\n",
    )
    assert differs(_keys(repo, ctl, "c", interp))
    # the interpreter: the same Python outside the virtual environment (another prefix)
    base_python = getattr(sys, "_base_executable", sys.executable)
    other = interpreter_fingerprint(base_python)
    if other != interp:
        assert differs(_keys(repo, base, "a", other))
    # the definition: its timeout, and the probe file's content
    assert differs(_keys(repo, scenario(text, timeout=31), "a", interp))
    if "PROBE_FILE" in text:
        before = probe_file.read_text()
        probe_file.write_text(before + "# changed\n")
        try:
            assert differs(_keys(repo, scenario(text), "a", interp))
        finally:
            probe_file.write_text(before)
    # the column itself: same tree and edits, another name
    b = _keys(repo, base, "b", interp)
    if kind.startswith("sglang") and not pinned:
        assert differs(b)  # the engine mapping gives b another version: the defect of issue 16
    else:
        assert b == a  # nothing else depends on the name: equal trees share their cells


def test_engine_key_names_the_resolved_version(world):
    repo, scenario, _ = world
    from harness.probes.kinds import sglang_n, sglang_params

    s = scenario(PROBES["sglang_n"])
    col = s.columns[0]
    ident = identify(repo, col)
    kc = KeyColumn("b", ident.commit_sha, ident.tree_sha, ident.edits, repo, sys.executable)
    assert sglang_n.key_parts(s.probes[0], kc) == {"engine": "sglang==0.5.22", "runtime": "cpu"}
    pinned = scenario(PINNED["sglang_params"])
    part = sglang_params.key_parts(pinned.probes[0], dataclasses.replace(kc, name="a"))
    from harness.testing.repos import git_blob_sha

    assert part["blob"] == git_blob_sha(repo, b"sglang==0.5.18\n") and part["runtime"] == "params"
    assert Path(part["engine_pin"]).name == "pin.txt"
