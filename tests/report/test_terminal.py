"""Terminal view and progress: one screen by default, every table with --full, NO_COLOR, plain lines."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from harness.infra.progress import phase

CSI_COLOUR = re.compile(
    r"\x1b\[(?:[0-9;]*;)?(?:3[0-9]|4[0-9]|9[0-7])(?:;[0-9;]*)?m"
)  # colours, not bold/dim


def _compare(run_cli, demo_dir: Path, tmp_path: Path, *extra: str) -> tuple[int, str, str]:
    from harness.infra.resources import data_dir

    return run_cli(
        "compare",
        "release/1.0",
        "backport/42",
        "--source",
        "main",
        "--source-branch",
        "pr/42",
        "--repo",
        str(demo_dir / "repo"),
        "--scenario",
        str(data_dir("scenarios") / "demo.yaml"),
        "--output-dir",
        str(tmp_path / "out"),
        *extra,
    )


def test_default_view_is_one_screen_with_verdict_and_actions(
    run_cli, demo_dir: Path, tmp_path: Path
) -> None:
    code, out, err = _compare(run_cli, demo_dir, tmp_path)
    assert code == 1
    lines = out.splitlines()
    assert len(lines) <= 40, out
    assert next(i for i, line in enumerate(lines) if line.startswith("Verdict: BLOCKED")) <= 5
    assert "→ cherry-pick -x 87c541f3 58ad6816 onto backport/42" in out
    assert "Sections (" in out and "--full" in out
    assert "┃" not in out  # no tables
    assert "] cherry-pick fidelity: done in" in err  # plain progress lines: stderr is not a TTY


def test_full_view_has_every_table(run_cli, demo_dir: Path, tmp_path: Path) -> None:
    code, out, _ = _compare(run_cli, demo_dir, tmp_path, "--full")
    assert code == 1 and len(out.splitlines()) > 200
    assert "Verdict: BLOCKED" in out and "Not verified" in out and "┃" in out


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_shows_elapsed_time_and_honours_no_color(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("HARNESS_PROGRESS", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.delenv("NO_COLOR", raising=False)
    coloured = _Tty()
    with phase("collect tests at main", stream=coloured):
        pass
    assert "collect tests at main" in coloured.getvalue()
    assert re.search(r"done in \d+\.\ds", coloured.getvalue())  # the elapsed time, whatever it is
    assert CSI_COLOUR.search(coloured.getvalue())
    monkeypatch.setenv("NO_COLOR", "1")
    plain = _Tty()
    with phase("collect tests at main", stream=plain):
        with phase("inner", stream=plain):
            pass
    assert "done in" in plain.getvalue() and "inner" in plain.getvalue()
    assert not CSI_COLOUR.search(plain.getvalue())


def test_progress_off_a_terminal_is_plain_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARNESS_PROGRESS", raising=False)
    buf = io.StringIO()
    with pytest.raises(RuntimeError):
        with phase("mutmut over 2 changed function(s)", stream=buf):
            raise RuntimeError("boom")
    lines = buf.getvalue().splitlines()
    assert lines[0] == "harness: mutmut over 2 changed function(s) …" and len(lines) == 2
    assert re.fullmatch(
        r"harness: mutmut over 2 changed function\(s\): stopped in \d+\.\ds", lines[1]
    )
    assert "\x1b" not in buf.getvalue()


def test_the_default_view_stays_one_screen_on_a_large_report() -> None:
    """#26: 30 causes and 15 sections (real ranges gave 55–82 lines): at most 40 lines, P1 causes
    first, each one line of title and one of action, and the rest counted."""
    from harness.report.model import Cause, Finding, Report, Section
    from harness.report.terminal import render

    sections = []
    causes = []
    for i in range(15):
        sev = "P1" if i < 3 else "P2"
        fs = [Finding(f"k{i}", sev, f"finding {i} " + "x" * 300, key=str(i))]  # type: ignore[arg-type]
        sections.append(Section(f"s{i}", f"section {i}", findings=fs if i < 10 else []))
        if i < 10:
            causes.append(
                Cause(f"c{i}", sev, f"cause {i} " + "y" * 300, "do it " + "z" * 300, [fs[0].id])
            )  # type: ignore[arg-type]
    causes += [Cause(f"d{i}", "P2", f"more {i}", "act", []) for i in range(20)]
    report = Report("t", "harness compare " + "a" * 300, sections, verdict="BLOCKED", causes=causes)
    out = render(report)
    lines = out.splitlines()
    assert len(lines) <= 40, out
    assert all(f"cause {i}" in out for i in range(3))  # the P1 causes
    assert re.search(r"… \d+ more cause\(s\) \(\d+ P2\)", out)
    assert "more section(s) without open findings" in out
    assert "section 0" in out and "section 9" in out  # sections with open findings are shown
    full = render(report, full=True)
    assert "more 19" in full
