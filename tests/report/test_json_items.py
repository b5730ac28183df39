"""A section's ``data`` items written as the text kept for an equal item (report/json_items.py):
the section's bytes are the ones rendered whole; an item's key names its content (values and their
types), an item that is not plain data has none."""

from __future__ import annotations

import random

from harness.report.json import section_text, section_utf8
from harness.report.json_items import item_key, items_text, with_items
from harness.report.jsontext import Rendered
from harness.report.model import Code, Section, Sha

_CHARS = ["a", "é", "\udce9", "\ud800", "\x7f", "\x85", "\u202e", "\n", '"', "\\", "\U0001f600"]


def _plain(r: random.Random, depth: int = 0) -> object:
    """Plain data as a pick's entry holds it: text (surrogates, controls), numbers, None, bools,
    lists, tuples (an end state's classed lines) and dicts."""

    def text() -> str:
        return "".join(r.choice(_CHARS) for _ in range(r.randint(0, 5)))

    kind = r.randint(0, 9 if depth < 3 else 5)
    return [
        text,
        lambda: r.randint(-5, 10**20),
        lambda: r.choice([0.5, -0.0, 1e300, float("inf")]),
        lambda: r.choice([True, False, None, 0, 1]),
        lambda: "",
        lambda: r.choice(["identical", "adapted"]),
        lambda: [_plain(r, depth + 1) for _ in range(r.randint(0, 3))],
        lambda: tuple(text() for _ in range(r.randint(0, 2))),
        lambda: {text(): _plain(r, depth + 1) for _ in range(r.randint(0, 3))},
        lambda: {"path": text(), "same": r.choice([True, 1]), "lines": [text()]},
    ][kind]()


def _section(picks: list[object]) -> Section:
    return Section("fidelity", "Cherry-pick fidelity", "s", data={"picks": picks, "after": [1]})


def test_items_written_from_kept_text_give_the_section_s_bytes():
    """Every way an entry's text arrives (rendered now, kept from an earlier run, a duplicate of
    another entry, no key at all) writes the bytes ``section_text`` writes of the section."""
    r = random.Random(5)
    for _ in range(400):
        picks = [_plain(r) for _ in range(r.randint(1, 5))]
        if r.random() < 0.3:
            picks.append(picks[0])  # an equal entry twice
        if r.random() < 0.2:
            picks.insert(0, {"cell": Code("x"), "sha": Sha("ab" * 20)})  # no key
        section = _section(picks)
        whole = section_text(section).encode("utf-8")
        keys = [item_key(p) for p in picks]
        items, texts = items_text(picks, keys, {})
        assert section_utf8(with_items(section, "picks", items)) == whole
        kept = {k: t for k, t in texts.items() if r.random() < 0.7}  # what an earlier run kept
        again, texts_again = items_text(picks, keys, kept)
        assert section_utf8(with_items(section, "picks", again)) == whole
        assert texts_again == texts
        assert section.data["picks"] is picks  # (the section itself is not changed)


def test_kept_text_is_what_is_written():
    """The kept text is used as it is (no rendering): a text kept under an item's key is the text
    the section gets for it, rendered item or not."""
    picks = [{"path": "a.py", "status": "identical"}]
    key = item_key(picks[0])
    assert key is not None
    items, texts = items_text(picks, [key], {key: b'{"kept": true}'})
    assert isinstance(items[0], Rendered) and texts == {key: b'{"kept": true}'}
    assert b'"picks": [\n          {"kept": true}\n' in section_utf8(
        with_items(_section(picks), "picks", items)
    )


def test_a_key_names_content_and_types():
    same = [{"a": [1, ("x", "\udce9")], "b": None}, {"a": [1, ("x", "\udce9")], "b": None}]
    assert same[0] is not same[1] and item_key(same[0]) == item_key(same[1])
    shared = "x" * 3
    assert item_key({"a": shared, "b": shared}) == item_key({"a": "xxx", "b": "x" * 3})
    different = [
        {"a": 1},
        {"a": True},
        {"a": 1.0},
        {"a": "1"},
        {"a": [1]},
        {"a": (1,)},
        {"b": 1},
        {"a": 1, "b": 2},
        {"b": 2, "a": 1},  # (the order a document writes its keys in)
        {"a": -0.0},
        {"a": 0.0},
    ]
    keys = [item_key(x) for x in different]
    assert None not in keys and len(set(keys)) == len(keys)
    assert item_key({"cell": Code("x")}) is None and item_key([Sha("a" * 40)]) is None

    class Text(str):
        pass

    assert item_key({"a": Text("x")}) is None  # (a subclass may render otherwise)
