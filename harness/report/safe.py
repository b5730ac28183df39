"""Repository data made safe to show: no terminal escapes or control characters, no live @mentions.

Author names, subjects, paths and probe output come from the repository under review; a renderer
passes every such string through ``clean`` (and ``quiet`` where GitHub would notify someone)."""

from __future__ import annotations

from harness.infra.lean import lazy_re

# CSI (ESC [ … final), OSC (ESC ] … BEL or ST), other two-byte escapes, then lone control characters
# (tab and newline stay), DEL, C1 controls, and bidi overrides that reorder what a reviewer reads.
_ESCAPES = lazy_re(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[ -~]?|\x9b[0-?]*[ -/]*[@-~]"
)
_CONTROLS = lazy_re(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_MENTION = lazy_re(r"@(?=[A-Za-z0-9])")
ZWJ = "\u200d"


def clean(text: str) -> str:
    """Drop terminal escape sequences and control characters (tab and newline are kept)."""
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


def quiet(text: str) -> str:
    """``@name`` → ``@\u200dname``: shown the same, but GitHub notifies nobody."""
    return _MENTION.sub("@" + ZWJ, text)


def shown(text: str) -> str:
    """Both: what Markdown, HTML and the terminal print of repository data."""
    return quiet(clean(text))


LINE_SHOWN = 400  # characters of one repository line a report shows


def line_shown(line: bytes) -> str:
    """One line of the repository's files as a report shows it: decoded, and cut after
    LINE_SHOWN characters with the count of the rest (a minified bundle is one line of megabytes;
    counts and checksums are always over the whole line)."""
    text = line.decode("utf-8", "replace")
    if len(text) <= LINE_SHOWN:
        return text
    return f"{text[:LINE_SHOWN]}… ({len(text) - LINE_SHOWN} more characters)"
