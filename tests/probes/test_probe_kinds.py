"""Each probe kind on a repository the test builds; failures become cells, not crashes."""

from __future__ import annotations

from harness.checks.probe_table import probe_sections
from harness.git.repo import GitRepo
from harness.infra.cache import Cache
from harness.inputs.scenario import load_scenario

MOD = """import os, sys, time

def behave(mode):
    if mode == "ok":
        return {"v": 1}
    if mode == "raise":
        raise ValueError("bad row")
    if mode == "sleep":
        time.sleep(30)
    if mode == "crash":
        os._exit(7)
    if mode == "flood":
        while True:
            sys.stdout.write("x" * 65536)
    if mode == "write":
        open("written.txt", "w").write("x")
        return "wrote"
    return mode
"""

HEAVY = """import torch  # not installed: the module cannot be imported

def scale(x):
    return helper(x) * FACTOR

class Sampler:
    def clamp(self, x):
        return min(x, self.limit)
"""


def _run(builder, tmp_path, probes_yaml, rows="{mode: [ok]}", extra="", snaps=None):
    builder.commit(
        "one",
        {
            "m.py": MOD,
            "heavy.py": HEAVY,
            "test_t.py": "def test_a():\n    assert 1\n\n"
            "def test_b():\n    import os\n    assert os.environ.get('WANT') == '1'\n",
        },
    )
    if snaps is not None:
        snaps.append(builder.snapshot())  # the repository as the run finds it
    sc = tmp_path / "s.yaml"
    sc.write_text(f"refs: {{head: main}}\nrows: {rows}\nprobes:\n{probes_yaml}\n{extra}")
    return probe_sections(GitRepo(builder.path), load_scenario(sc), cache=Cache())


def test_python_failures_are_cells(builder, tmp_path):
    snaps: list = []
    # timeout 8: generous for interpreter start-up on a loaded machine, far below the 30 s sleep row
    secs = _run(
        builder,
        tmp_path,
        "  - {id: p, kind: python, function: 'm:behave', timeout: 8}",
        rows="{mode: [ok, raise, sleep, after, crash, flood, write, last]}",
        snaps=snaps,
    )
    cells = secs[0].data["cells"]["head"]
    got = [(c["status"], c["value"]) for c in cells]
    assert got[0] == ("ok", {"v": 1})
    assert got[1][0] == "error" and "ValueError: bad row" in cells[1]["detail"]
    assert got[2][0] == "timeout"
    assert got[3] == ("ok", "after")  # rows after a timeout run in a fresh process
    assert got[4][0] == "crash" and "exit code 7" in cells[4]["detail"]
    assert got[5][0] == "error" and "flood" in cells[5]["detail"]
    assert got[6][0] == "error" and "wrote into the tree: written.txt" in cells[6]["detail"]
    assert got[7] == ("ok", "last")
    assert cells[0]["proof"] == {"module m": "m.py"}
    assert any(f.kind == "probe-cell-failed" for f in secs[0].findings)
    assert builder.snapshot() == snaps[0] and not (builder.path / "written.txt").exists()


def test_module_loaded_outside_the_tree_fails_the_cell(builder, tmp_path):
    secs = _run(
        builder, tmp_path, "  - {id: p, kind: python, function: 'm:behave', under_test: [json]}"
    )
    (cell,) = secs[0].data["cells"]["head"]
    assert cell["status"] == "error" and "outside the column's tree" in cell["detail"]
    assert any(c.ok is False for c in secs[0].controls if c.name.startswith("module path"))


def test_extract_runs_named_functions_with_stubs(builder, tmp_path):
    probe = """  - id: e
    kind: extract
    file: heavy.py
    functions: [scale, Sampler.clamp]
    prelude: |
      FACTOR = 10
      def helper(x):
          return x + 1
      def drive(x):
          s = Sampler(); s.limit = 25
          return s.clamp(scale(x))
    call: drive"""
    secs = _run(builder, tmp_path, probe, rows="{x: [0, 1, 2]}")
    cells = secs[0].data["cells"]["head"]
    assert [c["value"] for c in cells] == [10, 20, 25]
    sha = cells[0]["proof"]["extracted sha"]
    assert len(sha) == 40 and all(c["proof"]["extracted sha"] == sha for c in cells)


def test_command_and_pytest(builder, tmp_path):
    probes = """  - {id: c, kind: command, argv: ['{python}', -c, 'print("n=" + str({n} * 2))'], regex: 'n=(\\d+)'}
  - {id: x, kind: command, argv: ['{python}', -c, 'raise SystemExit({n})']}
  - {id: t, kind: pytest, nodes: [test_t.py], env: {WANT: '{n}'}}"""
    secs = _run(builder, tmp_path, probes, rows="{n: [1, 3]}")
    assert [c["value"] for c in secs[0].data["cells"]["head"]] == ["2", "6"]
    assert [c["value"] for c in secs[1].data["cells"]["head"]] == [1, 3]
    assert [c["value"] for c in secs[2].data["cells"]["head"]] == ["2 passed", "1 passed, 1 failed"]
