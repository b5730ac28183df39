"""One command-line grammar: BASE..HEAD and BASE HEAD, repeatable --ref (--refs alias), --output /
--output-dir with the old spellings noted, --format none everywhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness import commands
from harness.cli import build_parser


@pytest.fixture
def repo(builder) -> Path:
    builder.commit("init", {"app.py": "A = 1\n", "pins.yml": "engine:\n  tag: v1\n"})
    builder.branch("release")
    builder.commit("bump", {"app.py": "A = 2\n", "pins.yml": "engine:\n  tag: v2\n"})
    source = builder.repo.head.commit.hexsha
    builder.branch("backport", "release")
    builder.checkout("backport")
    builder.cherry_pick(source, "-x")
    builder.checkout("main")
    return builder.path


RANGE_VERBS = [("fidelity", ["--source", "main"]), ("shape", []), ("drift", [])]


@pytest.mark.parametrize(("verb", "extra"), RANGE_VERBS)
def test_range_verbs_take_both_spellings(repo: Path, run_cli, verb: str, extra: list[str]) -> None:
    one = run_cli(verb, "release~0..backport", "--repo", str(repo), "--format", "json", *extra)
    two = run_cli(verb, "release~0", "backport", "--repo", str(repo), "--format", "json", *extra)
    assert one[0] == two[0] and one[0] in (0, 1), (one[2], two[2])

    def strip(out):
        return {k: v for k, v in json.loads(out).items() if k not in ("command", "generated")}  # noqa: E731

    assert strip(one[1]) == strip(two[1])
    bad = run_cli(verb, "release", "backport", "main", "--repo", str(repo), *extra)
    assert bad[0] == 2 and "BASE..HEAD or BASE HEAD" in bad[2] and bad[2].count("\n") == 1


def test_compare_takes_a_range_and_output_dir_with_the_old_spelling_noted(
    repo: Path, run_cli, tmp_path: Path
) -> None:
    code, _, err = run_cli(
        "compare",
        "--no-fidelity",
        "release..backport",
        "--repo",
        str(repo),
        "--output-dir",
        str(tmp_path / "a"),
        "--format",
        "none",
    )
    assert code == 0 and (tmp_path / "a" / "comment.md").is_file() and "note:" not in err
    code, _, err = run_cli(
        "compare",
        "--no-fidelity",
        "release",
        "backport",
        "--repo",
        str(repo),
        "--output",
        str(tmp_path / "b"),
        "--format",
        "none",
    )
    assert code == 0 and (tmp_path / "b" / "report.md").is_file()
    notes = [line for line in err.splitlines() if "note:" in line]
    assert notes == [
        "harness: note: --output DIR is now spelled --output-dir DIR (the old spelling still works)"
    ]


@pytest.mark.parametrize("verb", ["trace", "pin"])
def test_several_refs_repeat_ref_and_refs_is_an_alias(repo: Path, run_cli, verb: str) -> None:
    head = ["A = "] if verb == "trace" else ["pins.yml", "engine.tag"]
    repeated = run_cli(
        verb, *head, "--ref", "release", "--ref", "main", "--repo", str(repo), "--format", "json"
    )
    alias = run_cli(
        verb, *head, "--refs", "release", "main", "--repo", str(repo), "--format", "json"
    )
    assert repeated[0] == alias[0] == 0, repeated[2]
    assert json.loads(repeated[1])["sections"] == json.loads(alias[1])["sections"]
    none = run_cli(verb, *head, "--repo", str(repo))
    assert none[0] == 2 and "--ref" in none[2]


def test_format_none_prints_nothing_and_keeps_the_gate(repo: Path, run_cli, tmp_path: Path) -> None:
    code, out, _ = run_cli("shape", "release..backport", "--repo", str(repo), "--format", "none")
    assert code in (0, 1) and out == ""


def test_every_report_verb_offers_format_none() -> None:
    for name in commands.names():
        parser = build_parser(name)
        sub = next(a for a in parser._actions if a.dest == "verb").choices[name]
        if name == "engine":
            actions = [
                a
                for p in next(a for a in sub._actions if a.dest == "engine_action").choices.values()
                for a in p._actions
                if a.dest == "format"
            ]
            assert all("none" in a.choices for a in actions)
            continue
        fmt = [a for a in sub._actions if a.dest == "format"]
        assert fmt and "none" in fmt[0].choices, name


def test_readme_grammar_table_lists_every_verb() -> None:
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    table = readme.split("### One grammar", 1)[1].split("\n\n", 3)[2]
    for name in commands.names():
        assert f"| `{name}" in table, name


@pytest.mark.parametrize(("verb", "extra"), RANGE_VERBS)
def test_output_file_with_format_none_is_a_usage_error(
    repo: Path, run_cli, tmp_path: Path, verb: str, extra: list[str]
) -> None:
    out = tmp_path / "r.md"
    code, stdout, err = run_cli(
        verb,
        "release..backport",
        "--repo",
        str(repo),
        "--format",
        "none",
        "--output",
        str(out),
        *extra,
    )
    assert code == 2 and err.count("\n") == 1 and "--format none" in err, err
    assert not out.exists() and stdout == ""
    code, _, _ = run_cli(
        verb, "release..backport", "--repo", str(repo), "--output", str(out), *extra
    )
    assert code in (0, 1) and out.is_file()


@pytest.mark.parametrize("name", ["report.json", "out.md", "r.sarif"])
def test_old_output_naming_a_report_file_is_refused_not_made_a_folder(
    repo: Path, run_cli, tmp_path: Path, name: str
) -> None:
    out = tmp_path / name
    code, stdout, err = run_cli(
        "compare", "--no-fidelity", "release..backport", "--repo", str(repo), "--output", str(out)
    )
    assert code == 2 and err.count("\n") == 1 and "--output-dir DIR" in err, err
    assert not out.exists() and stdout == ""
    out.mkdir()  # an existing folder of that name is still a folder
    code, _, err = run_cli(
        "compare",
        "--no-fidelity",
        "release..backport",
        "--repo",
        str(repo),
        "--output",
        str(out),
        "--format",
        "none",
    )
    assert code == 0 and (out / "report.json").is_file(), err
