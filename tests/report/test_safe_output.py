"""Repository data cannot drive a terminal or ping people: escapes stripped, @mentions neutralised."""

from __future__ import annotations

import json
from pathlib import Path

from harness.report.safe import ZWJ, clean, shown

EVIL_AUTHOR = "Eve \x1b[31mRed\x1b[0m <eve@example.com>"
SUBJECT = "Fix the cache (@someone please look) \x1b]0;pwned\x07"


def _repo(builder) -> None:
    builder.commit("init", {"app.py": "x = 1\n"})
    builder.branch("release")
    builder.commit(SUBJECT, {"app.py": "x = 2\n"}, author=EVIL_AUTHOR)
    source = builder.repo.head.commit.hexsha
    builder.checkout("release")
    builder.cherry_pick(source, "-x")
    builder.branch("backport")
    builder.checkout("main")


def test_all_formats_strip_escapes_and_quiet_mentions(builder, run_cli, tmp_path: Path) -> None:
    _repo(builder)
    out = tmp_path / "out"
    code, stdout, err = run_cli(
        "compare",
        "main~1",
        "backport",
        "--source",
        "main",
        "--repo",
        str(builder.path),
        "--output-dir",
        str(out),
        "--format",
        "term",
        "--full",
    )
    assert code in (0, 1), err
    assert "\x1b" not in stdout and "Red" in stdout and "someone" in stdout
    for name in ("report.md", "comment.md", "report.html"):
        text = (out / name).read_text(encoding="utf-8")
        assert "\x1b" not in text and "\x07" not in text, name
        assert "someone" in text and "@someone" not in text and f"@{ZWJ}someone" in text, name
        assert "]0;pwned" not in text, name
    raw = (out / "report.json").read_text(encoding="utf-8")
    assert "\x1b" not in raw and "\\u001b" in raw  # escaped in the text, kept in the data
    doc = json.loads(raw)
    rows = [r for s in doc["sections"] if s["id"] == "shape" for r in s["data"]["rows"]]
    assert any("\x1b[31m" in r["author"] for r in rows)
    assert any("@someone" in json.dumps(s, ensure_ascii=False) for s in doc["sections"])


def test_clean_and_shown() -> None:
    assert clean("a\x1b[1;31mb\x1b[0m\x1b]8;;http://x\x1b\\c\x00\x7f\u202ed\te\n") == "abcd\te\n"
    assert shown("cc @alice and mail a@b") == f"cc @{ZWJ}alice and mail a@{ZWJ}b"
    assert shown("@ alone") == "@ alone"
