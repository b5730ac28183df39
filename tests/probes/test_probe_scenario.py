from __future__ import annotations

import pytest

from harness.inputs.scenario import ScenarioError, load_scenario, load_value, parse_rows

GOOD = """title: t
refs:
  base: main
  head: {ref: pr, description: the PR}
controls:
  ctl:
    ref: head
    edits:
      - {replace: "a", new: "b", path: x.py}
rows: {n: [0, 1], s: [x]}
traces: {anything: [1, 2]}
probes:
  - id: p
    kind: command
    argv: [echo, "{n}"]
expectations:
  - {column: head, same_as: ctl, row: {n: 1}}
"""


def _load(tmp_path, text):
    p = tmp_path / "s.yaml"
    p.write_text(text)
    return p, load_scenario(p)


def test_good_scenario(tmp_path):
    p, s = _load(tmp_path, GOOD)
    assert [(c.name, c.ref, c.role) for c in s.columns] == [
        ("base", "main", "ref"),
        ("head", "pr", "ref"),
        ("ctl", "pr", "control"),
    ]
    assert s.probes[0].rows == [{"n": 0, "s": "x"}, {"n": 1, "s": "x"}]
    assert s.expectations[0].rows == [{"n": 1}]
    assert s.extra["traces"].line == 11 and s.extra["traces"].plain() == {"anything": [1, 2]}


@pytest.mark.parametrize(
    "old,new,msg",
    [
        ("traces:", "tracez:", r":11: tracez: unknown key"),
        ("kind: command", "kind: nope", r":14: probes\[0\].kind: must be one of"),
        ('argv: [echo, "{n}"]', "argv: echo", r":15: probes\[0\].argv: expected a list"),
        ("same_as: ctl", "same_as: zz", r":17: expectations\[0\].same_as: must be one of"),
        (
            '{replace: "a", new: "b", path: x.py}',
            '{replace: "a", path: x.py}',
            r":9: controls.ctl.edits\[0\]: ",
        ),
        ("  - id: p\n", "  - id: p\n    bogus: 1\n", r":14: probes\[0\].bogus: unknown key"),
    ],
)
def test_errors_name_file_line_and_key(tmp_path, old, new, msg):
    assert old in GOOD
    with pytest.raises(ScenarioError, match=r"s\.yaml" + msg):
        _load(tmp_path, GOOD.replace(old, new))


def test_invalid_yaml_has_a_line(tmp_path):
    with pytest.raises(ScenarioError, match=r"s\.yaml:[23]: invalid YAML"):
        _load(tmp_path, "a: 1\nb: [\n")


def test_row_list_form(tmp_path):
    p = tmp_path / "r.yaml"
    p.write_text("rows:\n  - {a: 1}\n  - {a: 2, b: x}\n")
    assert parse_rows(load_value(p).map().req("rows")) == [{"a": 1}, {"a": 2, "b": "x"}]
