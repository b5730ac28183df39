"""``records``: a log's NUL-framed records read the same by the column-by-column path (records
without a file list) and the scanning one, on real logs and edge shapes."""

from __future__ import annotations

import pytest

from harness.git.records import _scan, log_format, records
from harness.git.repo import GitRepo


def _both(text: str, fields: int) -> tuple[list, list]:
    fast = [(list(h), list(r)) for h, r in records(text, fields)]
    return fast, [(list(h), list(r)) for h, r in _scan(text.split("\0"), fields)]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\0a\0b\0",
        "\0a\0\0",  # an empty last field
        "\0a\0b",  # no closing NUL
        "\0a\0b\0\0c\0d\0",
        "\0a\0b\0\nx\0y\0\0c\0d\0",  # a file list after the first record
        "\0\0\0",
        "x\0",
        "\0a\0b\0\0c",  # cut short
        "\0a\0\0\nx\0\0\0d\0\ny\0z\0",  # empty fields beside file lists
        "\0a\0b\0\n\0y\0",  # a file list's newline alone before its first name
        "\0a\0b\0\nx\0y",  # a file list, no closing NUL
        "\0a\0b\0\nx\0\0c",  # a file list, then a record cut short
    ],
)
def test_edge_shapes(text):
    fast, scanned = _both(text, 2)
    assert fast == scanned
    # each record's fields come as the scanning path gives them where there are file lists
    if any(r for _, r in scanned):
        assert all(isinstance(h, list) for h, _ in records(text, 2))


def test_real_logs(builder):
    builder.commit("one", {"a": "1\n", "b": "2\n"})
    builder.commit("two", {"a": "3\n"})
    builder.commit("three\n\nbody line\n\nmore", {"c": "4\n"})
    repo = GitRepo(builder.path)
    fields = ("%H", "%P", "%at", "%ct", "%s")
    for extra in ([], ["--name-only"], ["--reverse"]):
        text = repo.run_text(["log", "-z", log_format(*fields), *extra, "HEAD"])
        fast, scanned = _both(text, len(fields))
        assert fast == scanned and len(fast) == 3
        assert all(r for _, r in fast) == bool(extra == ["--name-only"])
    text = repo.run_text(["log", "-z", log_format("%H", "%b"), "HEAD"])
    fast, scanned = _both(text, 2)
    assert fast == scanned and [h[1] for h, _ in fast][0] == "body line\n\nmore\n"
