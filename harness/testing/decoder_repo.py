"""The classic min_tokens / hidden stop string decoder, as a repository the tests build."""

from __future__ import annotations

from pathlib import Path

from harness.infra.resources import PROBES_DIR
from harness.testing.repos import RepoBuilder

__all__ = ["PROBES_DIR", "build_decoder_repo", "scenario_text"]

DECODER = '''"""Greedy detokenizer with hidden stop strings and a min_tokens floor."""


class Decoder:
    def __init__(self, stop, min_tokens=0):
        self.stop = list(stop)
        self.min_tokens = min_tokens
        self.count = 0
        self.text = ""

    def step(self, token):
        """Append one token; True when a stop string ended generation (it is hidden from the text)."""
        self.text += token
        self.count += 1
        checks_on = self.count > self.min_tokens
        if checks_on:
            window = self.text[-(len(token) + max(map(len, self.stop)) - 1):]
            for s in self.stop:
                i = window.find(s)
                if i >= 0:
                    self.text = self.text[: len(self.text) - len(window) + i]
                    return True
        return False
'''
INCREMENT = "        self.count += 1\n"
READ = "        checks_on = self.count > self.min_tokens\n"
HEAD_DECODER = DECODER.replace(INCREMENT + READ, READ + INCREMENT)
assert HEAD_DECODER != DECODER


def build_decoder_repo(builder: RepoBuilder) -> dict[str, str]:
    """main: correct decoder; branch pr: reads the count before the increment. Work tree stays on main."""
    base = builder.commit("decoder", {"decoder.py": DECODER, "README": "demo\n"})
    builder.branch("pr")
    builder.checkout("pr")
    head = builder.commit("read count before increment", {"decoder.py": HEAD_DECODER})
    builder.checkout("main")
    return {"base": base, "head": head}


def scenario_text(probe_file: Path, extra: str = "") -> str:
    return f"""title: classic
refs:
  base: main
  head: pr
controls:
  control:
    ref: head
    description: increment moved back above the read
    edits:
      - move: "self.count += 1"
        path: decoder.py
        above: "checks_on = self.count > self.min_tokens"
probes:
  - id: leak
    kind: python
    file: {probe_file}
    function: run
    rows: {{min_tokens: [0, 1, 2, 3]}}
    expect:
      - {{column: head, same_as: control, title: head leaks where control does not}}
{extra}"""
