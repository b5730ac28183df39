"""comment.md: a real range whose report.md exceeds GitHub's comment limit still yields a comment that fits."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.git.writer import CommitSpec, write_repo
from harness.report.comment import LIMIT, MARKER

N_PICKS = 120
WORDS = "the scheduler must keep the prefix cache warm while the tokenizer streams partial multibyte output"


def _big_range(path: Path) -> None:
    """main: N source commits (4 lines each in its own file); release: picks that carry 2 of the 4 lines."""
    files = {f"pkg/mod_{i:03d}.py": f"# module {i}\n" for i in range(N_PICKS)}
    commits = [CommitSpec("init", "main", "init\n", files)]
    for i in range(N_PICKS):
        body = "".join(f"value_{i}_{k} = {k}  # {WORDS}\n" for k in range(4))
        commits.append(
            CommitSpec(
                f"s{i}",
                "main",
                f"Fix {WORDS} in module {i} (#{1000 + i})\n",
                {f"pkg/mod_{i:03d}.py": f"# module {i}\n{body}"},
                parents=["init" if i == 0 else f"s{i - 1}"],
                author_time=1_767_225_600 + 60 * i,
            )
        )
    prev = "init"
    for i in range(N_PICKS):
        body = "".join(f"value_{i}_{k} = {k}  # {WORDS}\n" for k in range(2))
        commits.append(
            CommitSpec(
                f"p{i}",
                "release",
                f"[release] Fix {WORDS} in module {i} (#{1000 + i})\n",
                {f"pkg/mod_{i:03d}.py": f"# module {i}\n{body}"},
                parents=[prev],
                author_time=1_768_225_600 + 60 * i,
            )
        )
        prev = f"p{i}"
    write_repo(path, commits, {"base": "init", "backport": prev}, "main")


@pytest.fixture(scope="module")
def big_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from harness.cli import main

    root = tmp_path_factory.mktemp("big")
    _big_range(root / "repo")
    out = root / "out"
    code = main(
        [
            "compare",
            "base",
            "backport",
            "--source",
            "main",
            "--repo",
            str(root / "repo"),
            "--output-dir",
            str(out),
            "--format",
            "none",
        ]
    )
    assert code == 1  # every pick is a subset: blocked
    return out


def test_report_md_of_the_range_exceeds_the_limit(big_report: Path) -> None:
    assert len((big_report / "report.md").read_text(encoding="utf-8")) > LIMIT


def test_comment_fits_and_says_what_was_cut(big_report: Path) -> None:
    text = (big_report / "comment.md").read_text(encoding="utf-8")
    assert len(text) <= LIMIT
    assert text.startswith(MARKER + "\n")
    assert "**Verdict:** BLOCKED" in text
    assert "Cut to fit a pull request comment" in text
    assert "Full report: report.md" in text
    assert "table row(s)" in text or "sections left out" in text or "tables and controls" in text


def test_comment_of_the_demo_is_whole_and_names_the_actions(demo_dir: Path) -> None:
    text = (demo_dir / "comment.md").read_text(encoding="utf-8")
    assert "Cut to fit" not in text
    assert "**Action:** `cherry-pick -x 87c541f3 58ad6816 onto backport/42`" in text
    assert text.count("**Action:**") == 4


def test_ci_doc_finds_the_sticky_comment_by_the_marker() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "ci.md").read_text(encoding="utf-8")
    assert (
        MARKER in doc
        and "comment.md" in doc
        and "GITHUB_STEP_SUMMARY" in doc
        and "upload-artifact" in doc
    )


def test_comment_is_deterministic(big_report: Path, tmp_path: Path) -> None:
    from harness.cli import main

    again = tmp_path / "again"
    assert (
        main(
            [
                "compare",
                "base..backport",
                "--source",
                "main",
                "--repo",
                str(big_report.parent / "repo"),
                "--output-dir",
                str(again),
                "--format",
                "none",
                # Measured again like the first run: a warm run differs in its provenance lines.
                "--no-cache",
            ]
        )
        == 1
    )

    def undated(p):
        return [
            x
            for x in p.read_text(encoding="utf-8").splitlines()
            if not x.startswith("<sub>Generated")
        ]  # noqa: E731

    assert undated(again / "comment.md") == undated(big_report / "comment.md")


def test_report_url_is_a_working_link(demo_dir: Path, tmp_path: Path) -> None:
    from harness.cli import main

    url = "https://github.com/o/r_x/actions/runs/42"
    assert (
        main(
            [
                "compare",
                "release/1.0..backport/42",
                "--source",
                "main",
                "--repo",
                str(demo_dir / "repo"),
                "--output-dir",
                str(tmp_path / "o"),
                "--format",
                "none",
                "--report-url",
                url,
            ]
        )
        == 1
    )
    assert f"Full report: <{url}>." in (tmp_path / "o" / "comment.md").read_text(encoding="utf-8")


def test_a_trimmed_comment_keeps_the_evidence_of_the_findings_that_matter() -> None:
    """#26: cut to fit, a section keeps the tables its checks weigh (the follow-up table backing a
    P1) before noise tables, and lists its P1 findings before P2s and info."""
    from harness.report.comment import render
    from harness.report.model import Finding, Report, Section, Table

    noise = [
        Table(f"{i}. release commit {i}", ["file", "note"], [[f"doc/r{i}.rst", "x" * 200]] * 30)
        for i in range(8)
    ]
    follow = Table("Follow-ups on main not picked", ["follow-up"], [["abc fix it"]], weight=2)
    findings = [Finding("pick-adapted", "P2", f"p2 number {i}", key=str(i)) for i in range(14)]
    findings += [Finding("follow-up-not-picked", "P1", "THE P1 FOLLOW-UP", key="p1")]
    section = Section(
        "fidelity",
        "Cherry-pick fidelity",
        tables=[Table("Picks", ["pick"], [["a"]]), *noise, follow],
        findings=findings,
    )
    out = render(Report("t", "", [section]), limit=12_000)
    assert len(out) <= 12_000
    assert "Cut to fit" in out
    assert "Follow-ups on main not picked" in out and "THE P1 FOLLOW-UP" in out
    assert "7. release commit 7" not in out
