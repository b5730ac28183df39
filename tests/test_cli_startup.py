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
