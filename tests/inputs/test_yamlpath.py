"""Key paths and line numbers over composed YAML nodes."""

from __future__ import annotations

import pytest

from harness.errors import UsageError
from harness.inputs import yamlpath

DOC = """\
base: &b
  tag: v1
  img: "x"
sglang:
  "cuda13.0":
    <<: *b
    runtime_image_tag: "v0.5.2-cu130"
  cuda12.9: *b
list:
  - first
  - second
on: push
empty:
"""


def _get(path: str):
    found = yamlpath.lookup(yamlpath.compose(DOC), yamlpath.parse_keypath(path))
    return (
        yamlpath.value_text(found.node),
        (yamlpath.line_of(found.node) if found.node is not None else None),
        found,
    )


@pytest.mark.parametrize(
    "path,segs",
    [
        ('sglang["cuda13.0"].runtime_image_tag', ["sglang", "cuda13.0", "runtime_image_tag"]),
        ("a['x.y'][0].b", ["a", "x.y", 0, "b"]),
        ('a["q\\"uote"]', ["a", 'q"uote']),
        ("plain", ["plain"]),
    ],
)
def test_parse_keypath(path, segs):
    assert yamlpath.parse_keypath(path) == segs
    assert yamlpath.parse_keypath(yamlpath.format_keypath(segs)) == segs


@pytest.mark.parametrize("bad", ["", "a..b", ".a", "a.", "a[x]", 'a["b"]c', " a"])
def test_bad_keypaths_are_usage_errors(bad):
    with pytest.raises(UsageError):
        yamlpath.parse_keypath(bad)


def test_values_and_lines_with_dots_anchors_and_merge_keys():
    assert _get('sglang["cuda13.0"].runtime_image_tag')[:2] == ("v0.5.2-cu130", 7)
    assert _get('sglang["cuda13.0"].tag')[:2] == ("v1", 2)  # via the merge key: the anchor's line
    assert _get('sglang["cuda12.9"].img')[:2] == ("x", 3)  # via an alias
    assert _get("list[1]")[:2] == ("second", 11)
    assert _get("on")[:2] == ("push", 12)  # not YAML 1.1's True
    assert _get("list")[0] == '["first", "second"]'
    value, line, found = _get("empty")
    assert value is None and line == 13 and found.node is not None


def test_missing_keys_say_where_the_walk_stopped():
    _, _, found = _get("sglang.cuda14")
    assert found.node is None and found.missing_at == "sglang" and "cuda13.0" in found.reason
    assert "not a list" in _get("base.tag[0]")[2].reason
    assert "no [5]" in _get("list[5]")[2].reason


def test_non_mapping_documents_and_bad_yaml():
    root = yamlpath.compose("- a\n- b\n")
    assert "not a mapping" in yamlpath.lookup(root, ["a"]).reason
    assert yamlpath.compose("") is None
    with pytest.raises(yamlpath.YamlError, match="line"):
        yamlpath.compose("a: [\n")


def test_non_utf8_is_decoded_with_replacement():
    text, replaced = yamlpath.decode(b"k: caf\xe9\n")
    assert (
        replaced and yamlpath.value_text(yamlpath.get(yamlpath.compose(text), "k")) == "caf\ufffd"
    )
    assert yamlpath.decode("k: café\n".encode()) == ("k: café\n", False)
