"""harness/infra/digest.py: a kept file's digest of its own bytes, written as it streams."""

from __future__ import annotations

import json

import pytest

from harness.infra.digest import opened, say_mismatch, seal, sealed_text


def test_a_sealed_object_reads_back_and_streams_as_it_does_whole() -> None:
    value = {"stamp": ["f", "c"], "key": "k", "value": {"a": [1, "é", None]}}
    text = json.dumps(value)
    whole = sealed_text(text)
    parts = "".join(seal(iter([text[:5], "", text[5:20], text[20:]])))
    assert whole == parts and opened(whole.encode())
    back = json.loads(whole)
    assert back.pop("digest") and back == value


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[:-1],  # cut short
        lambda b: b[: len(b) // 2],
        lambda b: b.replace(b'"k"', b'"j"'),  # another well-formed answer
        lambda b: b[:3] + bytes([b[3] ^ 1]) + b[4:],  # a flipped bit
        lambda b: b.replace(b'"digest"', b'"dig3st"'),
        lambda b: b + b"\n",
        lambda b: b"",
    ],
)
def test_any_change_fails_the_digest(damage) -> None:
    raw = sealed_text(json.dumps({"key": "k", "value": [1, 2]})).encode()
    assert opened(raw) and not opened(damage(raw))


def test_only_a_non_empty_object_is_sealed() -> None:
    for text in ("{}", "[1]", "", '"x"'):
        with pytest.raises(ValueError):
            sealed_text(text)


def test_the_note_is_said_once_per_file_version(capsys) -> None:
    say_mismatch("history/x/index.json", (1, 2))
    say_mismatch("history/x/index.json", (1, 2))
    say_mismatch("history/x/index.json", (1, 3))  # rewritten since, and damaged again
    err = capsys.readouterr().err
    assert err.count("kept answer for history/x/index.json did not match its digest") == 2
