"""The HTML report in a real headless browser (Debian's chromium; .ci/run installs it).

The page is the demo's report.html with one probe script appended in a copy: after layout it
measures the page width at a 1280 px window, resolves every in-page link, and looks for marks
shown without a text label; chromium's ``--dump-dom`` prints the result. Skipped with the reason
when no chromium is installed.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

PROBE = """<script>
window.addEventListener('load', () => {
  const doc = document.documentElement;
  const links = [...document.querySelectorAll('a[href^="#"]')];
  const broken = links.map(a => a.getAttribute('href').slice(1))
                      .filter(id => !document.getElementById(decodeURIComponent(id)));
  // a mark must carry a word (PASS/FAIL/INFO), never an emoji alone (CI browsers have no emoji font)
  const bare = [...document.querySelectorAll('li, td, span, p')]
      .filter(e => /[\\u2705\\u274c]/u.test(e.textContent) && !/PASS|FAIL|INFO/.test(e.textContent));
  const out = document.createElement('pre');
  out.id = 'harness-probe';
  const findings = document.querySelectorAll('[id^="finding-"]').length;
  out.textContent = JSON.stringify({scroll: doc.scrollWidth, inner: window.innerWidth, links: links.length,
                                    broken: broken, bare: bare.length, findings: findings});
  document.body.appendChild(out);
});
</script>"""


def _browser() -> str | None:
    return (
        shutil.which("chromium")
        or shutil.which("chromium-browser")
        or shutil.which("google-chrome")
    )


@pytest.fixture(scope="module")
def demo_html(tmp_path_factory) -> Path:
    from harness.cli import main

    out = tmp_path_factory.mktemp("demo-html")
    main(["demo", "--dir", str(out / "demo")])
    found = sorted(out.rglob("report.html"))
    assert found, "demo wrote no report.html"
    return found[0]


def _measure(browser: str, page: Path, width: int) -> dict:
    probe = page.with_name("probe.html")
    probe.write_text(
        page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8"
    )
    proc = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--window-size={width},900",
            "--virtual-time-budget=3000",
            "--dump-dom",
            probe.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    m = re.search(r'<pre id="harness-probe">(.*?)</pre>', proc.stdout, re.S)
    assert m, f"chromium printed no probe result: {proc.stderr[-500:]}"
    return json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))


@pytest.mark.parametrize("width", [1280, 1400])
def test_demo_report_in_a_real_browser(demo_html, width):
    browser = _browser()
    if browser is None:
        pytest.skip("no chromium installed (apt-get install chromium; .ci/run does)")
    got = _measure(browser, demo_html, width)
    assert got["scroll"] <= got["inner"], f"the page scrolls sideways at {width} px: {got}"
    assert got["broken"] == [], f"in-page links with no target: {got['broken'][:5]}"
    assert got["bare"] == 0, "a mark is shown without a text label"
    assert got["links"] > 0 and got["findings"] > 0, "finding ids are not linked to their sections"
