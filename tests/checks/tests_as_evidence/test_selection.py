"""`harness select`: lane counts from one real pytest collection pass per ref."""

from __future__ import annotations

import json

from harness.checks.tests_as_evidence.selection import (
    CONTROL_ALL,
    CONTROL_NONE,
    Lane,
    collect_ref,
    selection_section,
)
from harness.git.repo import GitRepo

PYPROJECT = """\
[tool.pytest.ini_options]
addopts = "-m 'not slow' -x"
markers = ["slow: slow tests", "gpu: needs a gpu"]
"""

TEST_A = """\
import pytest

@pytest.mark.slow
def test_slow(): pass

@pytest.mark.gpu
def test_gpu(): pass

def test_plain(): pass

@pytest.mark.parametrize("x", [1, 2, 3])
def test_param(x): pass
"""

# The project's own hook marks tests by name: counts must come from the items after it ran.
CONFTEST = """\
import pytest

def pytest_collection_modifyitems(config, items):
    for item in items:
        if "param" in item.nodeid:
            item.add_marker(pytest.mark.slow)
"""

LANES = [
    Lane("unit", "not slow and not gpu"),
    Lane("gpu", "gpu"),
    Lane("slow", "slow"),
    Lane("nightly", "nightly"),
]


def _base(builder):
    return builder.commit(
        "suite",
        {"pyproject.toml": PYPROJECT, "tests/test_a.py": TEST_A, "tests/conftest.py": CONFTEST},
    )


def test_counts_follow_project_hooks_and_ignore_addopts(builder):
    _base(builder)
    before = builder.snapshot()
    col = collect_ref(GitRepo(builder.path), "HEAD", LANES, ["tests/test_a.py", "tests"])
    # addopts' "-m 'not slow'" would have dropped 4 items; the conftest hook made test_param slow.
    assert col.total == 6
    assert col.counts["unit"] == 1
    assert col.counts["gpu"] == 1
    assert col.counts["slow"] == 4
    assert col.counts["nightly"] == 0
    assert col.counts[CONTROL_ALL] == 6 and col.counts[CONTROL_NONE] == 0
    assert col.files["tests/test_a.py"]["slow"] == 4
    assert col.files["tests"]["__all__"] == 6
    assert col.errors == []
    assert builder.snapshot() == before
    assert not (builder.path / ".pytest_cache").exists()


def test_collection_error_is_listed_and_counted_apart(builder):
    _base(builder)
    builder.commit(
        "broken file",
        {"tests/test_broken.py": "import no_such_module_here\n\ndef test_x(): pass\n"},
    )
    col = collect_ref(GitRepo(builder.path), "HEAD", LANES)
    assert col.exit_code != 0
    assert [e["nodeid"] for e in col.errors] == ["tests/test_broken.py"]
    assert "no_such_module_here" in col.errors[0]["message"]
    assert col.total == 6  # the other file is still counted
    section = selection_section([col], LANES)
    kinds = [f.kind for f in section.findings]
    assert "collection-error" in kinds
    assert any(t.title.startswith("Collection errors") for t in section.tables)


def test_lane_matching_nothing_and_unknown_markers(builder):
    _base(builder)
    builder.commit(
        "odd marker",
        {"tests/test_b.py": "import pytest\n\n@pytest.mark.weird\ndef test_w(): pass\n"},
    )
    col = collect_ref(GitRepo(builder.path), "HEAD", LANES)
    assert col.unknown_used == {"weird": 1}
    assert col.unknown_in_lanes == {"nightly": ["nightly"]}
    section = selection_section([col], LANES)
    titles = [f.title for f in section.findings]
    assert "lane nightly (nightly) selects no test at HEAD" in titles
    assert any("unregistered marker(s) nightly" in t for t in titles)
    assert section.controls[0].ok is True


def test_two_refs_give_delta_and_changed_files(builder, run_cli, tmp_path):
    base = _base(builder)
    builder.commit(
        "more gpu",
        {
            "tests/test_c.py": "import pytest\n\n@pytest.mark.gpu\ndef test_c1(): pass\n\n"
            "@pytest.mark.gpu\ndef test_c2(): pass\n"
        },
    )
    before = builder.snapshot()
    out = tmp_path / "sel.json"
    code, _, err = run_cli(
        "select",
        "--repo",
        str(builder.path),
        "--ref",
        base,
        "--ref",
        "HEAD",
        "--lane",
        "gpu=gpu",
        "--lane",
        "unit=not slow and not gpu",
        "--format",
        "json",
        "--output",
        str(out),
    )
    assert code == 0, err
    data = json.loads(out.read_text())
    section = next(s for s in data["sections"] if s["id"] == "selection")
    lane_rows = {r[0]: r[2:] for r in section["tables"][0]["rows"]}
    assert lane_rows["gpu"] == [1, 3, "+2"]
    assert lane_rows["unit"] == [1, 1, "same"]
    per_file = section["tables"][1]
    assert {r[0] for r in per_file["rows"]} == {"tests/test_c.py"}
    assert builder.snapshot() == before


def test_bad_lane_input_is_usage_error(builder, run_cli):
    _base(builder)
    code, _, err = run_cli("select", "--repo", str(builder.path), "--lane", "nolane")
    assert code == 2 and "NAME=EXPR" in err
    code, _, err = run_cli("select", "--repo", str(builder.path), "--lane", "x=slow and (")
    assert code == 2 and "invalid marker expression" in err
    code, _, err = run_cli("select", "--repo", str(builder.path), "--ref", "nope", "--lane", "a=b")
    assert code == 2 and "unknown ref" in err


WORKFLOW = """\
name: ci
on: [push]
jobs:
  fast:
    uses: ./.github/workflows/tests.yml
    with:
      markers: "not slow and not gpu"
  gpu:
    uses: ./.github/workflows/tests.yml
    with:
      markers: "gpu"
"""


def test_lanes_from_workflows(builder, run_cli, tmp_path):
    _base(builder)
    builder.commit("ci", {".github/workflows/ci.yml": WORKFLOW})
    out = tmp_path / "sel.json"
    code, _, err = run_cli(
        "select",
        "--repo",
        str(builder.path),
        "--lanes-from-workflows",
        "--format",
        "json",
        "--output",
        str(out),
    )
    assert code == 0, err
    section = json.loads(out.read_text())["sections"][0]
    lanes = {lane["expr"]: lane["name"] for lane in section["data"]["lanes"]}
    assert set(lanes) == {"not slow and not gpu", "gpu"}
    counts = section["data"]["refs"][0]["counts"]
    assert counts[lanes["not slow and not gpu"]] == 1 and counts[lanes["gpu"]] == 1


def test_setup_commands_generate_what_a_build_step_would(builder, run_cli):
    """A package whose version module is generated at build time imports only after --setup."""
    builder.commit(
        "pkg",
        {
            "src/pkg/__init__.py": "from pkg.version import __version__\n",
            "tests/test_v.py": "import pkg\n\ndef test_v():\n    assert pkg.__version__ == '0'\n",
        },
    )
    repo = GitRepo(builder.path)
    before = builder.snapshot()
    broken = collect_ref(repo, "HEAD", [Lane("all", "")])
    assert broken.total == 0 and broken.errors  # the generated module is missing from the tree
    gen = "printf '__version__ = \"0\"\\n' > src/pkg/version.py"
    fixed = collect_ref(repo, "HEAD", [Lane("all", "")], setup=[gen])
    assert fixed.total == 1 and not fixed.errors
    failing = collect_ref(repo, "HEAD", [Lane("all", "")], setup=["exit 3"])
    assert failing.errors == [
        {"nodeid": "(setup)", "message": "setup 'exit 3' exited 3: no output"}
    ]
    code, out, _ = run_cli(
        "mutate",
        "--repo",
        str(builder.path),
        "--tests",
        "tests",
        "--setup",
        gen,
        "--liveness",
        "tests/test_v.py",
        "== '0'",
        "== '1'",
        "--format",
        "json",
    )
    assert code == 0, out
    assert "liveness held" in json.dumps(json.loads(out))
    assert builder.snapshot() == before


# Marks from every place pytest takes them: a module's and a class's pytestmark, parametrize ids
# with their own marks, keyword arguments, a hook adding marks, and an item type of the project's
# own whose ``iter_markers`` makes a new mark at each call (its items are read one by one).
MARKS_CONFTEST = """\
import pytest

class YamlItem(pytest.Item):
    def runtest(self): pass

    def iter_markers(self, name=None):
        yield pytest.mark.from_walk.mark
        yield from super().iter_markers(name)

class YamlFile(pytest.File):
    def collect(self):
        for i in range(3):
            yield YamlItem.from_parent(self, name=f"y{i}")

def pytest_collect_file(parent, file_path):
    if file_path.suffix == ".yaml":
        return YamlFile.from_parent(parent, path=file_path)

def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.name.endswith("[3]"):
            item.add_marker("gpu")
"""

MARKS_TESTS = """\
import pytest

pytestmark = pytest.mark.module_wide

@pytest.mark.level(n=3)
def test_level3(): pass

@pytest.mark.level(n=[1, 2])
def test_level_list(): pass

@pytest.mark.parametrize(
    "x", [1, 2, pytest.param(3, marks=pytest.mark.slow), pytest.param(4, marks=pytest.mark.level(n=3))]
)
def test_param(x): pass

class TestGpu:
    pytestmark = pytest.mark.gpu

    def test_in(self): pass

    @pytest.mark.slow
    @pytest.mark.parametrize("y", range(3))
    def test_in_param(self, y): pass
"""

MARK_LANES = [
    Lane("unit", "not slow and not gpu"),
    Lane("gpu", "gpu"),
    Lane("slow gpu", "slow and gpu"),
    Lane("level 3", "level(n=3)"),
    Lane("level", "level"),
    Lane("module", "module_wide and not parametrize"),
    Lane("walk", "from_walk"),
]


def _pytest_m_count(tree, expr: str) -> int:
    """How many items pytest's own ``-m`` selects in ``tree`` (one plain run per expression)."""
    import re
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
        + ["-p", "no:randomly", "-m", expr],
        cwd=tree,
        capture_output=True,
        text=True,
    )
    found = re.search(r"(\d+)(?:/\d+)? tests? collected", proc.stdout)
    return int(found.group(1)) if found else 0


def test_marks_from_every_place_counted_as_pytest_m_does(builder, tmp_path):
    builder.commit(
        "marks",
        {
            "pytest.ini": "[pytest]\nmarkers =\n    slow: s\n    gpu: g\n    level(n): l\n",
            "tests/conftest.py": MARKS_CONFTEST,
            "tests/test_marks.py": MARKS_TESTS,
            "tests/data/cases.yaml": "a: 1\n",
        },
    )
    col = collect_ref(
        GitRepo(builder.path), "HEAD", MARK_LANES, ["tests/test_marks.py", "tests/data/cases.yaml"]
    )
    tree = tmp_path / "tree"
    from harness.git.tree import export_tree

    export_tree(GitRepo(builder.path), "HEAD", tree)
    assert col.total == 13 and col.errors == []
    for lane in MARK_LANES:
        assert col.counts[lane.name] == _pytest_m_count(tree, lane.expr), lane
    assert col.nodes["tests/test_marks.py::test_param[3]"] == ["(control: all)", "gpu", "slow gpu"]
    assert col.nodes["tests/test_marks.py::TestGpu::test_in"] == ["(control: all)", "gpu", "module"]
    assert col.nodes["tests/data/cases.yaml::y0"] == ["(control: all)", "unit", "walk"]
    assert col.files["tests/data/cases.yaml"] == {
        "__all__": 3,
        "(control: all)": 3,
        "unit": 3,
        "walk": 3,
    }
    assert col.unknown_used == {"from_walk": 3, "module_wide": 10}


def test_cold_and_cached_collections_side_by_side(builder, tmp_path, capsys):
    """A ref on record beside refs collected now: the interpreter described again (a child
    process, so meanwhile the trees are written and the first ref's collection starts, to be
    given up once its key is found on record), the cached one served and the trees removed."""
    from harness.checks.tests_as_evidence.selection import collect_refs
    from harness.envs import fingerprint
    from harness.infra import workarea
    from harness.infra.cache import Cache

    base = _base(builder)
    builder.commit(
        "more gpu", {"tests/test_c.py": "import pytest\n\n@pytest.mark.gpu\ndef test_c(): pass\n"}
    )
    repo = GitRepo(builder.path)
    cache = Cache(tmp_path / "cache", namespace="collections")
    fingerprint.describe.cache_clear()
    first = collect_refs(repo, [base], LANES, cache=cache)
    assert [c.cached for c in first] == [False]
    fingerprint.describe.cache_clear()
    (tmp_path / "cache" / "interpreters").rename(tmp_path / "interpreters-gone")
    capsys.readouterr()
    cols = collect_refs(repo, [base, "HEAD", "HEAD"], LANES, cache=cache)
    assert [c.cached for c in cols] == [True, False, False]
    said = capsys.readouterr().err
    assert f"collect tests at {base}" not in said and said.count("collect tests at HEAD …") == 2
    assert [c.counts["gpu"] for c in cols] == [1, 2, 2]
    assert cols[0].key == first[0].key and cols[1].key == cols[2].key
    assert [c.total for c in cols] == [6, 7, 7]
    assert not list(workarea.run_dir().glob("harness-tree-*"))
    again = collect_refs(repo, [base, "HEAD"], LANES, cache=cache)
    assert [c.cached for c in again] == [True, True]


def test_collection_past_its_timeout_is_killed_either_way(builder, tmp_path):
    """Started before its key is known (the interpreter described by a child process) or after,
    a collection past its timeout is killed and said to have run past it."""
    import time

    import pytest

    from harness.envs import fingerprint
    from harness.errors import UsageError
    from harness.infra.cache import Cache

    builder.commit("slow", {"tests/conftest.py": "import time\ntime.sleep(60)\n"})
    repo = GitRepo(builder.path)
    cache = Cache(tmp_path / "cache", namespace="collections")
    for fresh in (True, False):
        if fresh:
            fingerprint.describe.cache_clear()
        start = time.monotonic()
        with pytest.raises(UsageError, match="pytest collection at HEAD ran past 3s"):
            collect_ref(repo, "HEAD", LANES, timeout=3, cache=cache)
        assert time.monotonic() - start < 30
