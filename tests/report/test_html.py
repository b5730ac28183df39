"""HTML: marks readable without an emoji font, causes with their actions (the browser checks are in
test_html_browser.py)."""

from __future__ import annotations

from pathlib import Path


def test_marks_are_text_not_emoji(demo_dir: Path) -> None:
    html = (demo_dir / "report.html").read_text(encoding="utf-8")
    assert not any(glyph in html for glyph in ("✅", "❌", "ℹ️"))
    assert '<span class="mark PASS">PASS</span>' in html
    assert html.count('<div class="tw"><table>') == html.count("<table>")
    assert "cherry-pick -x 87c541f3 58ad6816 onto backport/42" in html
