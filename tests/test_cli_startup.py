"""Start-up: ``harness --help`` lists every verb without importing any verb or heavy library."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness import cli, commands

PROBE = """
import contextlib, io, json, sys
import harness.cli
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    try:
        harness.cli.main(["--help"])
    except SystemExit:
        pass
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("git", "yaml", "rich")
               or m.startswith(("harness.commands.", "harness.checks", "harness.plan")))
print(json.dumps({"help": buf.getvalue(), "heavy": heavy}))
"""


def test_help_lists_every_verb_and_imports_none():
    out = json.loads(
        subprocess.run(
            [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True
        ).stdout
    )
    assert out["heavy"] == []
    summaries = commands.summaries()
    assert sorted(summaries) == commands.names() and all(summaries.values())
    for verb in commands.names():
        assert f"    {verb} " in out["help"]


# What `harness --help` and `harness` alone may import beyond a bare start of the same interpreter
# (issue 42: within 2x its time): the package, the CLI, the verb list and argparse with what it loads
# to print. The git layer, the process helpers and the libraries they bring load once a verb runs.
HELP_HARNESS = {"harness", "harness.cli", "harness.commands", "harness.errors"}
HELP_NEVER = (
    "harness.git",
    "harness.infra",
    "subprocess",
    "threading",
    "typing",
    "dataclasses",
    "pathlib",
    "inspect",
    "pkgutil",
    "shutil",
    "tempfile",
    "yaml",
    "rich",
    "git",
)
HELP_BUDGET = 16  # modules beyond the bare start: 13 with `-m` on CPython 3.11, 2026-12-06


def _imported(*argv: str) -> set[str]:
    """The modules a fresh interpreter imports running ``argv`` (its ``-X importtime`` lines)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *argv], capture_output=True, text=True, check=False
    )
    rows = (ln.removeprefix("import time:").split("|") for ln in proc.stderr.splitlines())
    return {r[2].strip() for r in rows if len(r) == 3 and r[0].strip().isdigit()}


def _entry_points() -> list[tuple[str, ...]]:
    script = os.path.join(os.path.dirname(sys.executable), "harness")  # the console script
    found = [("-m", "harness")]
    return found + [(script,)] if os.path.exists(script) else found


@pytest.mark.parametrize("args", [("--help",), ()], ids=["--help", "no-args"])
def test_help_imports_no_git_layer_process_helpers_or_heavy_library(args):
    bare = _imported("-c", "pass")
    for entry in _entry_points():
        new = _imported(*entry, *args) - bare
        assert {m for m in new if m.split(".")[0] == "harness"} == HELP_HARNESS, entry
        assert not [m for m in new if m.startswith(HELP_NEVER)], (entry, sorted(new))
        assert len(new) <= HELP_BUDGET, (entry, sorted(new))


@pytest.mark.parametrize("columns", [None, "50", "0", "-3", "wide", "200"])
def test_help_is_as_wide_as_argparse_makes_it(monkeypatch, columns):
    """argparse asks ``shutil`` for the width; the CLI reads it the same way without importing it."""
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert cli._columns() == shutil.get_terminal_size().columns


def test_summaries_are_what_the_whole_module_says():
    """``summaries`` parses each verb's HELP statement only; a parse of the whole module agrees."""
    whole = {}
    for name in commands.names():
        tree = ast.parse((Path(commands.__file__).parent / f"{name}.py").read_text("utf-8"))
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "HELP" for t in node.targets
            ):
                whole[name] = str(ast.literal_eval(node.value))
    assert commands.summaries() == whole


def test_a_failing_git_command_is_one_internal_error_line(builder, run_cli):
    """The CLI names ``GitError`` only once the git layer is loaded; a run that meets one still
    ends with exit 3 and one line."""
    builder.commit("one", {"a.py": "x = 1\n"})
    builder.commit("two", {"a.py": "x = 2\n"})
    blob = builder.rev("HEAD:a.py")
    (builder.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # git cannot read it
    code, _out, err = run_cli("drift", "HEAD~1", "HEAD", "--repo", str(builder.path))
    assert code == 3 and err.startswith("harness: internal error: git "), err
    assert len(err.splitlines()) == 1, err


def test_a_verb_still_gets_its_own_parser(run_cli):
    code, out, err = run_cli("fidelity", "--help")
    assert code == 0 and "--source REF" in out


# Modules a verb's ``--help`` imports (the parser of one verb: what every run of it pays before any
# work), measured 2026-12-06 with some room (about 10); a verb whose list grows past its budget fails
# here. Since the CLI names the git layer only once a verb loads it, cache's fell from 51 to 23.
# Heavy libraries (YAML, rich, GitPython, Ray) load once a run needs them, except where the verb's
# own module reads YAML to build its parser's choices (lanes, mutate, pin, probe).
BUDGET = {
    "backports": 77,
    "cache": 33,
    "compare": 88,
    "demo": 92,
    "drift": 96,
    "engine": 97,
    "fidelity": 78,
    "lanes": 132,
    "mutate": 150,
    "pin": 115,
    "probe": 149,
    "select": 123,
    "shape": 100,
    "sweep": 130,
    "tests": 82,
    "trace": 97,
}
YAML_AT_HELP = {"lanes", "mutate", "pin", "probe"}
COUNT = r"""
import contextlib, io, json, sys
before = set(sys.modules)
import harness.cli
with contextlib.redirect_stdout(io.StringIO()):
    try:
        harness.cli.main([sys.argv[1], "--help"])
    except SystemExit:
        pass
new = set(sys.modules) - before
heavy = {"yaml", "rich", "git", "ray", "jsonschema"}
print(json.dumps({"n": len(new), "heavy": sorted({m.split(".")[0] for m in new} & heavy)}))
"""


def test_each_verbs_imports_stay_within_their_budget():
    assert set(BUDGET) == set(commands.names()), "a new verb needs a budget here"
    over = {}
    for verb, budget in BUDGET.items():
        got = json.loads(
            subprocess.run(
                [sys.executable, "-c", COUNT, verb], capture_output=True, text=True, check=True
            ).stdout
        )
        allowed = {"yaml"} if verb in YAML_AT_HELP else set()
        if got["n"] > budget or set(got["heavy"]) - allowed:
            over[verb] = got
    assert over == {}, over


LEAN = """
import json, sys
from harness.infra.lean import dataclasses_without_inspect
dataclasses_without_inspect()
import dataclasses
loaded = ["inspect" in sys.modules]
@dataclasses.dataclass(frozen=True)
class Documented:
    "A class with its own docstring."
    a: int
loaded.append("inspect" in sys.modules)
@dataclasses.dataclass
class Bare:
    a: int
    b: str = "x"
import inspect
print(json.dumps([loaded, Bare.__doc__, type(inspect).__name__, hasattr(inspect, "signature")]))
"""


def test_dataclasses_load_without_inspect_until_a_class_needs_it():
    """infra/lean.py: ``inspect`` is imported at the first class without a docstring, whose
    ``__doc__`` is then what dataclasses always wrote; ``import inspect`` is the real module."""
    out = subprocess.run([sys.executable, "-c", LEAN], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    loaded, doc, kind, real = json.loads(out.stdout)
    assert loaded == [False, False]
    assert doc == "Bare(a: int, b: str = 'x')" and kind == "module" and real
