"""The one-pass JSON writer gives the bytes of the three-walk pipeline it replaced."""

from __future__ import annotations

import collections
import copy
import json
import random
import re
from dataclasses import dataclass, fields, is_dataclass

from harness.report.jsontext import dump_utf8, dumps
from harness.report.model import Code, Finding, Sha, Table
from harness.report.printable import printable


@dataclass
class _Pair:
    a: object = None
    b: object = None


@dataclass(frozen=True)
class _Frozen:
    x: object = None


_Named = collections.namedtuple("_Named", "p q")
# Surrogate-escaped bytes (\udce9), other surrogates, DEL, C1, bidi overrides, C0 controls, quotes.
_CHARS = ["a", "é", "\udce9", "\ud800", "\udc10", "\x7f", "\x85", "\u202e", "\x1b", "\n", '"']
_CHARS += ["\\", "·", "\U0001f600", "\u2066", "\udcff", "\udc80", "\t", "\x00"]


def to_jsonable(obj: object) -> object:
    """The conversion the JSON renderer used before (removed from the package with it)."""
    if isinstance(obj, Sha):
        return obj.sha
    if isinstance(obj, Code):
        return obj.text
    if is_dataclass(obj) and not isinstance(obj, type):
        return {
            f.name: to_jsonable(getattr(obj, f.name))
            for f in fields(obj)
            if f.metadata.get("rendered", True)  # a field added since (Finding.anchors) is not
        }
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    return obj


def json_escape_controls(doc: str) -> str:
    """DEL, C1 controls and bidi overrides as \\u escapes (what the renderer did before)."""
    return re.sub(
        r"[\x7f-\x9f\u202a-\u202e\u2066-\u2069]", lambda m: f"\\u{ord(m.group(0)):04x}", doc
    )


def _pipeline(obj: object) -> str:
    """What the JSON renderer did before: escape in place, convert, dump, escape controls."""
    escaped = printable(copy.deepcopy(obj))
    text = json.dumps(to_jsonable(escaped), indent=2, ensure_ascii=False)
    return json_escape_controls(text)


def _value(r: random.Random, depth: int = 0) -> object:
    def text() -> str:
        return "".join(r.choice(_CHARS) for _ in range(r.randint(0, 6)))

    kind = r.randint(0, 15 if depth < 4 else 6)
    leaves = [
        text,
        lambda: r.randint(-(10**6), 10**20),
        lambda: r.choice([0.5, -1.25, 1e300, float("nan"), float("inf"), -float("inf"), -0.0]),
        lambda: r.choice([True, False, None]),
        lambda: Sha(text()),
        lambda: Code(text()),
        lambda: "",
    ]
    if kind < len(leaves):
        return leaves[kind]()
    inner = lambda: _value(r, depth + 1)  # noqa: E731
    return [
        lambda: [inner() for _ in range(r.randint(0, 4))],
        lambda: tuple(inner() for _ in range(r.randint(0, 3))),
        lambda: {text(): inner() for _ in range(r.randint(0, 3))},
        lambda: _Pair(inner(), inner()),
        lambda: _Frozen(inner()),
        lambda: _Named(inner(), inner()),
        lambda: Table(text(), [text()], [[inner(), inner()]], text()),
        lambda: {r.randint(0, 5): inner(), text(): inner()},
        # an end state's classed lines: tuples of strings, some empty (written without a walk)
        lambda: [tuple(text() for _ in range(r.randint(0, 3))) for _ in range(r.randint(1, 4))],
    ][kind - len(leaves)]()


def test_same_bytes_as_the_three_walk_pipeline_on_random_documents():
    r = random.Random(13)
    for _ in range(3000):
        doc = {"x": _value(r), "y": [_value(r), _value(r)]}
        assert dumps(doc) == _pipeline(doc)


def test_report_objects_and_escapes():
    finding = Finding("kind", "P1", "caf\udce9 \u202e", detail="x\x7fy")
    text = dumps({"sections": [finding], "cell": Sha("ab" * 20), "empty": [], "none": {}})
    assert json.loads(text)["sections"][0]["title"] == "caf\\xe9 \u202e"
    assert "\\u202e" in text and "\\u007f" in text and "\udce9" not in text
    assert '"empty": []' in text and '"none": {}' in text
    assert text == _pipeline(
        {"sections": [finding], "cell": Sha("ab" * 20), "empty": [], "none": {}}
    )


def test_utf8_pieces_are_the_text_encoded():
    """``dump_utf8`` (what ``--output`` writes) gives the bytes of ``dumps`` encoded, its pieces
    cut anywhere between parts: documents of a few parts and of many pieces."""
    r = random.Random(7)
    for _ in range(300):
        doc = {"x": _value(r), "y": [_value(r), _value(r)]}
        assert b"".join(dump_utf8(doc, end="\n")) == (dumps(doc) + "\n").encode("utf-8")
    big = [{"k": _value(r), "rows": [[Code("p\udce9"), 1, None]]} for _ in range(3000)]
    pieces = dump_utf8(big, end="\n")
    assert len(pieces) > 1
    assert b"".join(pieces) == (dumps(big) + "\n").encode("utf-8")


def test_text_rendered_before_is_written_as_it_is_at_any_depth():
    """A part rendered earlier (``dumps_at`` at its depth, kept as bytes) gives the bytes of the
    part rendered in place: in pieces at its own depth, re-indented deeper or higher, in text."""
    from harness.report.jsontext import Rendered, dumps_at

    r = random.Random(11)
    for _ in range(200):
        part = {"k": _value(r), "rows": [[Code("p\udce9 \u202e"), 1, None]], "t": ("a", "b")}
        doc = {"top": 1, "sections": [part, {"x": _value(r)}]}
        want = dumps(doc) + "\n"
        for nl in ("\n    ", "\n", "\n      "):
            kept = Rendered(dumps_at(part, nl).encode("utf-8"), nl)
            given = {"top": 1, "sections": [kept, doc["sections"][1]]}
            assert b"".join(dump_utf8(given, end="\n")) == want.encode("utf-8"), nl
            assert dumps(given) + "\n" == want, nl


def test_a_section_rendered_before_gives_the_same_report_bytes():
    from harness.report.json import render_utf8, section_text
    from harness.report.model import Report, Section

    section = Section(
        "fidelity",
        "s",
        findings=[Finding("kind", "P1", "caf\udce9", detail="d")],
        tables=[Table("t", ["a", "b"], [[Code("x\x7f"), Sha("ab" * 20)]])],
    )
    other = Section("other", "o")
    report = Report("r", "harness x", [other, section], {"head": "h"})
    plain = b"".join(render_utf8(report))
    given = render_utf8(report, {id(section): section_text(section).encode("utf-8")})
    assert b"".join(given) == plain
    # A text that is not the section's would be written as it is: the id is what selects it.
    wrong = render_utf8(report, {id(other): section_text(section).encode("utf-8")})
    assert b"".join(wrong) != plain
