"""The HTML report's tables in a real headless browser: SHAs, numbers, status words and short words
stay on one line, status cells are coloured by tone, the verdict is a badge. Screenshots of the demo
report at each width are written to this test's tmp folder (the path is printed). Skipped with the
reason when no chromium is installed (.ci/run installs it)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from harness.infra import process

PROBE = """<script>
window.addEventListener('load', () => {
  const lines = el => {  // distinct line tops of the text inside an element
    const tops = new Set();
    const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      if (!n.textContent.trim()) continue;
      const r = document.createRange(); r.selectNodeContents(n);
      for (const rect of r.getClientRects()) if (rect.width > 0) tops.add(Math.round(rect.top));
    }
    return tops.size;
  };
  const cells = [...document.querySelectorAll('td')];
  const oneLine = cells.filter(td => td.classList.contains('sha') || td.classList.contains('st')
      || td.classList.contains('num') || /^\\S{1,12}$/.test(td.textContent.trim()));
  const broken = oneLine.filter(td => lines(td) > 1).map(td => td.textContent.trim());
  const st = [...document.querySelectorAll('td.st')];
  const plain = st.filter(td => getComputedStyle(td).backgroundColor === 'rgba(0, 0, 0, 0)');
  const badge = document.querySelector('.verdict .badge');
  const out = document.createElement('pre');
  out.id = 'harness-probe';
  out.textContent = JSON.stringify({
    checked: oneLine.length, broken: broken.slice(0, 20), nbroken: broken.length,
    statuses: [...new Set(st.map(td => td.className))].sort(), uncoloured: plain.length,
    badge: badge ? [badge.textContent, badge.className, lines(badge),
                    getComputedStyle(badge).backgroundColor] : null});
  document.body.appendChild(out);
});
</script>"""


def _browser() -> str | None:
    return (
        shutil.which("chromium")
        or shutil.which("chromium-browser")
        or shutil.which("google-chrome")
    )


def _chromium(browser: str, *args: str) -> str:
    proc = process.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return str(proc.stdout) + str(proc.stderr)


def measure(browser: str, page: Path, width: int) -> dict:
    probe = page.with_name(f"probe-{width}.html")
    probe.write_text(
        page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8"
    )
    out = _chromium(
        browser,
        f"--window-size={width},900",
        "--virtual-time-budget=3000",
        "--dump-dom",
        probe.as_uri(),
    )
    m = re.search(r'<pre id="harness-probe">(.*?)</pre>', out, re.S)
    assert m, f"chromium printed no probe result: {out[-500:]}"
    return json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))


@pytest.mark.parametrize("width", [1280, 800])
def test_demo_tables_keep_words_whole_and_colour_statuses(
    demo_dir: Path, tmp_path: Path, width: int
) -> None:
    browser = _browser()
    if browser is None:
        pytest.skip("no chromium installed (apt-get install chromium; .ci/run does)")
    page = tmp_path / "report.html"
    shutil.copy(demo_dir / "report.html", page)
    got = measure(browser, page, width)
    assert got["checked"] > 50, got
    assert got["nbroken"] == 0, f"cells broken over lines at {width} px: {got['broken']}"
    for status in ("st st-identical", "st st-adapted", "st st-subset", "st st-same"):
        assert status in got["statuses"], got["statuses"]
    assert got["uncoloured"] == 0
    text, classes, lines, colour = got["badge"]
    assert text == "BLOCKED" and "verdict-blocked" in classes and lines == 1
    assert colour not in ("rgba(0, 0, 0, 0)", "rgb(255, 255, 255)")
    shot = tmp_path / f"demo-report-{width}.png"
    _chromium(browser, f"--window-size={width},2400", f"--screenshot={shot}", page.as_uri())
    assert shot.is_file() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    print(f"screenshot: {shot}")
