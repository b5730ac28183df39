"""Patterns applied to the reviewed repository's text match in linear time, and find what the
patterns they replaced found (those are kept here as the reference, run only on short inputs)."""

from __future__ import annotations

import random
import re

import pytest

from harness.checks.fidelity.followups import _FIXES

OLD_FIXES = re.compile(r"^\s*fixes:\s*([0-9a-f]{7,64})\b", re.IGNORECASE | re.MULTILINE)

BODIES = [
    "Fixes: abcdef1\n",
    "Some text\n\n\n   Fixes: 0123456789abcdef\nmore",
    "\n\n\t\nFIXES:\n\n deadbeef00\n",
    "not at the start fixes: abcdef1\n",
    "a\u2028 fixes: abcdef12\r\n  Fixes: 1234567 trailing\n",
    "\f\vfixes:abcdef1",
    "",
]


@pytest.mark.parametrize("body", BODIES)
def test_fixes_finds_what_the_old_pattern_found(body: str) -> None:
    assert _FIXES.findall(body) == OLD_FIXES.findall(body)


def test_fixes_on_a_body_of_blank_lines() -> None:
    # The old pattern took ~3 s for 20,000 newlines and grew with the square of the length; this
    # body would have taken hours. Asserted by result only (no timing): a regression hangs here.
    body = "\n" * 2_000_000 + "Fixes: abcdef1\n"
    assert _FIXES.findall(body) == ["abcdef1"]


OLD_SOB = re.compile(r"^\s*signed-off-by:\s*(.*?)\s*<([^>]*)>\s*$", re.I | re.M)
OLD_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
OLD_KEY = re.compile(r"^\s*([A-Za-z0-9_\-\"'. ]+?)\s*=")


def _strings(alphabet: str, count: int, longest: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(0, longest))) for _ in range(count)
    ]


def test_signoffs_read_what_the_old_pattern_read_line_by_line() -> None:
    from harness.checks.shape import parse_signoffs

    words = _strings(" \t<>ab@.\u00a0", 3000, 12, 1)
    lines = [
        f"{pre}Signed-off-by:{w}" for pre, w in zip(_strings(" \t", 3000, 2, 2), words, strict=True)
    ]
    lines += ["signed-off-by: A B <a@b.c>", "SIGNED-OFF-BY:<x>", "Signed-off-by: A <a> <b>"]
    for line in lines:
        old = [(m.group(1), m.group(2)) for m in OLD_SOB.finditer(line)]
        assert parse_signoffs(line) == old, repr(line)
    # A message of well-formed trailers reads the same; the old pattern also ran a name or an
    # email over line ends ("<a\nb>"), which no longer counts as a sign-off.
    message = "Fix it\n\nBody.\n\nSigned-off-by: A B <a@b.c>\n  Signed-off-by: C <c@d>  \n\n"
    old = [(m.group(1), m.group(2)) for m in OLD_SOB.finditer(message)]
    assert parse_signoffs(message) == old == [("A B", "a@b.c"), ("C", "c@d")]
    assert parse_signoffs("Signed-off-by: A <a\nb>\n") == []


def _parts(name: str | None) -> list[str] | None:
    return None if name is None else [p.strip().strip("\"'") for p in name.split(".")]


def test_toml_lines_read_what_the_old_patterns_read() -> None:
    from harness.checks.pins import toml_header, toml_key

    for line in _strings("[] #a.\t=\"'x", 20000, 10, 3):
        old = OLD_HEADER.match(line)
        assert _parts(toml_header(line)) == _parts(old.group(1) if old else None), repr(line)
        old = OLD_KEY.match(line)
        assert _parts(toml_key(line)) == _parts(old.group(1) if old else None), repr(line)


def test_long_lines_of_spaces() -> None:
    # The old header pattern took 4 s on "[" and 2,000 spaces, 30 s on 4,000 (cubic); the old
    # sign-off pattern grew with the square of the blank lines. Asserted by result only.
    from harness.checks.pins import toml_header, toml_key
    from harness.checks.shape import parse_signoffs

    spaces = " " * 1_000_000
    assert toml_header("[" + spaces + "]x") is None
    assert toml_header("[" + spaces + "tool]") == "tool"
    assert toml_key(spaces + "x") is None
    assert parse_signoffs("\n" * 1_000_000 + "Signed-off-by: A" + spaces + "<a@b>\n") == [
        ("A", "a@b")
    ]


OLD_MENTION = re.compile(
    r"^\s*-?\s*[\"']?([A-Za-z0-9_.-]*(?:marker|pytest_mark)[A-Za-z0-9_.-]*)[\"']?\s*:", re.I
)


def test_marker_keys_read_what_the_old_pattern_read() -> None:
    from harness.checks.lanes.workflow import marker_key

    lines = _strings(" -\"':ma", 20000, 9, 4) + _strings(" -'\tx:", 5000, 6, 5)
    lines = [ln.replace("ma", "marker") for ln in lines] + [
        "  - markers: unit",
        '    "pytest_mark": "x"',
        "-MARKERS :",
        "--marker:",
        "markers",
    ]
    for line in lines:
        old = OLD_MENTION.match(line)
        assert marker_key(line) == (old.group(1) if old else None), repr(line)


def test_marker_key_on_long_lines() -> None:
    from harness.checks.lanes.workflow import marker_key

    assert marker_key(" " * 1_000_000 + "x") is None
    assert marker_key("marker" * 200_000 + "x") is None
    assert marker_key(" " * 1_000_000 + "- markers: a") == "markers"
