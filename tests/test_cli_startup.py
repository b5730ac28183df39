"""Start-up: ``harness --help`` lists every verb without importing any verb or heavy library."""

from __future__ import annotations

import json
import subprocess
import sys

from harness import commands

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


def test_a_verb_still_gets_its_own_parser(run_cli):
    code, out, err = run_cli("fidelity", "--help")
    assert code == 0 and "--source REF" in out


# Modules a verb's ``--help`` imports (the parser of one verb: what every run of it pays before any
# work), measured 2026-12-06 with some room; a verb whose list grows past its budget fails here.
# Heavy libraries (YAML, rich, GitPython, Ray) load once a run needs them, except where the verb's
# own module reads YAML to build its parser's choices (lanes, mutate, pin, probe).
BUDGET = {
    "backports": 80,
    "cache": 60,
    "compare": 90,
    "demo": 95,
    "drift": 100,
    "engine": 100,
    "fidelity": 80,
    "lanes": 135,
    "mutate": 150,
    "pin": 120,
    "probe": 150,
    "select": 125,
    "shape": 105,
    "sweep": 130,
    "tests": 85,
    "trace": 100,
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
