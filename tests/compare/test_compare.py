"""`harness compare` end to end on the demo repository: sections, findings, gate, ledger, bytes."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from harness import demo

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "demo.yaml"
REFS = ["release/1.0", "backport/42"]
SOURCE = ["--source", "main", "--source-branch", "pr/42"]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def _state(repo: Path) -> tuple:
    return (
        _git(repo, "rev-parse", "HEAD"),
        _git(repo, "for-each-ref"),
        _git(repo, "status", "--porcelain"),
        _git(repo, "stash", "list"),
        (repo / ".git" / "config").read_bytes(),
        (repo / ".git" / "index").read_bytes(),
        sorted(p.name for p in (repo / ".git").iterdir()),
    )


@pytest.fixture(scope="module")
def demo_env(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("compare")
    mp = pytest.MonkeyPatch()
    mp.setenv("HARNESS_CACHE_DIR", str(tmp / "cache"))
    mp.setenv("HARNESS_WORK_DIR", str(tmp / "work"))
    repo = tmp / "repo"
    demo.build(repo)
    yield {"tmp": tmp, "repo": repo}
    mp.undo()


@pytest.fixture(scope="module")
def first_round(demo_env: dict) -> dict:
    from harness.cli import main

    out = demo_env["tmp"] / "round1"
    before = _state(demo_env["repo"])
    code = main(
        [
            "compare",
            *REFS,
            "--repo",
            str(demo_env["repo"]),
            *SOURCE,
            "--scenario",
            str(SCENARIO),
            "--output",
            str(out),
            "--format",
            "none",
        ]
    )
    after = _state(demo_env["repo"])
    doc = json.loads((out / "report.json").read_text())
    return {"code": code, "out": out, "doc": doc, "before": before, "after": after}


def _findings(doc: dict) -> list[dict]:
    return [f for s in doc["sections"] for f in s["findings"]]


def test_every_section_is_present(first_round: dict) -> None:
    ids = [s["id"] for s in first_round["doc"]["sections"]]
    for expected in (
        "fidelity",
        "drift",
        "shape",
        "trace",
        "pin",
        "lanes",
        "selection",
        "probe-stop-leak",
        "probe-cancel-n",
        "mutation",
    ):
        assert any(i == expected or i.startswith(expected) for i in ids), (expected, ids)
    md = (first_round["out"] / "report.md").read_text()
    assert md.startswith("# Backport review")
    assert "**Verdict:** BLOCKED" in md
    assert md.rstrip().splitlines()[-1].startswith("- ")  # ends with the not-verified list
    assert "## Not verified" in md and "<details>" in md
    html = (first_round["out"] / "report.html").read_text()
    assert (
        html.startswith("<!doctype html>")
        and "<script" not in html
        and "http" not in html.split("<body>")[0]
    )


def test_expected_findings_and_gate(first_round: dict) -> None:
    assert first_round["code"] == 1
    kinds = [f["kind"] for f in _findings(first_round["doc"])]
    assert kinds.count("missing-commit") == 2
    assert kinds.count("probe-expectation") == 2  # the leak row and the n>1 cancellation
    # c3 is pinned by no test; c4 is pinned by the nightly test: the scenario's mutation selection
    # says so for its tests, the tests section for the whole suite
    assert kinds.count("gap-not-pinned") == 1
    assert kinds.count("tests-gap-not-pinned") == 1
    fid = next(s for s in first_round["doc"]["sections"] if s["id"] == "fidelity")
    statuses = {p["subject"].split("]")[1].strip(): p["status"] for p in fid["data"]["picks"]}
    assert statuses == {
        "Fix typo in README (#40) (#55)": "identical",
        "Fix min_tokens handling (#42) (#57)": "subset",
    }


def test_user_repository_unchanged(first_round: dict) -> None:
    assert first_round["before"] == first_round["after"]


def test_rerun_gives_identical_bytes_except_the_dated_header(
    demo_env: dict, first_round: dict
) -> None:
    """Same inputs, same bytes; a warm round differs from the cold one only in the dated header and
    in saying that its probe cells came from the cache (under the same keys)."""
    from harness.cli import main

    out = first_round["out"]  # same inputs, same command line
    names = ("report.md", "report.json", "report.html")
    rounds = [{name: (out / name).read_text() for name in names}]
    for _ in range(2):
        code = main(
            [
                "compare",
                *REFS,
                "--repo",
                str(demo_env["repo"]),
                *SOURCE,
                "--scenario",
                str(SCENARIO),
                "--output",
                str(out),
                "--format",
                "none",
            ]
        )
        assert code == first_round["code"]
        rounds.append({name: (out / name).read_text() for name in names})
    dated = re.compile(
        r"Generated \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ|\"generated\": \"[^\"]*\"|"
        r"<p class=\"legend\">[^<]*<code>"
    )
    provenance = re.compile(r"measured: |from cache: |\"from\": \"(run|cache)\"")
    cold, warm, again = rounds
    for name in names:
        assert dated.sub("", warm[name]) == dated.sub("", again[name]), name
        assert (
            dated.sub("", cold[name]) != cold[name]
        )  # the header really is dated (the regex matched)
        assert provenance.sub("", dated.sub("", cold[name])) == provenance.sub(
            "", dated.sub("", warm[name])
        ), name
    assert "measured: " in cold["report.md"] and "measured: " not in warm["report.md"]
    assert "from cache: " in warm["report.md"]


def test_ledger_across_rounds(demo_env: dict, first_round: dict, tmp_path: Path) -> None:
    from harness.cli import main

    repo = demo_env["repo"]
    prev = str(first_round["out"] / "report.json")
    # Round 2, same head, same scenario: every finding is still present.
    out2 = tmp_path / "round2"
    main(
        [
            "compare",
            *REFS,
            "--repo",
            str(repo),
            *SOURCE,
            "--scenario",
            str(SCENARIO),
            "--output",
            str(out2),
            "--format",
            "none",
            "--previous",
            prev,
        ]
    )
    doc2 = json.loads((out2 / "report.json").read_text())
    statuses = {f["status"] for s in doc2["sections"] if s["id"] != "ledger" for f in s["findings"]}
    assert statuses == {"still present"}

    # Round 3: the head gains the missing decoder fix (c3) → the leak finding is resolved.
    clone = tmp_path / "fixed"
    shutil.copytree(repo, clone)
    _git(clone, "checkout", "-q", "backport/42")
    c3 = _git(clone, "rev-parse", "pr/42~1").strip()
    subprocess.run(
        [
            "git",
            "-C",
            str(clone),
            "-c",
            "user.name=R",
            "-c",
            "user.email=r@example.com",
            "cherry-pick",
            "-x",
            c3,
        ],
        check=True,
        capture_output=True,
    )
    out3 = tmp_path / "round3"
    main(
        [
            "compare",
            *REFS,
            "--repo",
            str(clone),
            *SOURCE,
            "--scenario",
            str(SCENARIO),
            "--output",
            str(out3),
            "--format",
            "none",
            "--previous",
            prev,
        ]
    )
    doc3 = json.loads((out3 / "report.json").read_text())
    ledger = next(s for s in doc3["sections"] if s["id"] == "ledger")
    leak = next(f for f in _findings(first_round["doc"]) if "leaks the hidden stop" in f["title"])
    gone = {f["id"]: f["status"] for f in ledger["findings"]}
    assert gone.get(leak["id"]) == "resolved"
    assert ledger["data"]["counts"]["resolved"] >= 1

    # Round 4: same head as round 1 but the scenario drops the cancellation probe → retracted.
    scen = tmp_path / "demo.yaml"
    text = SCENARIO.read_text()
    text = text[: text.index("  - id: cancel-n")] + text[text.index("traces:") :]
    scen.write_text(text.replace("../probes/", str(ROOT / "probes") + "/"))
    out4 = tmp_path / "round4"
    main(
        [
            "compare",
            *REFS,
            "--repo",
            str(repo),
            *SOURCE,
            "--scenario",
            str(scen),
            "--output",
            str(out4),
            "--format",
            "none",
            "--previous",
            prev,
        ]
    )
    doc4 = json.loads((out4 / "report.json").read_text())
    cancel = next(f for f in _findings(first_round["doc"]) if "cancellation" in f["title"])
    ledger4 = next(s for s in doc4["sections"] if s["id"] == "ledger")
    assert {f["id"]: f["status"] for f in ledger4["findings"]}[cancel["id"]] == "retracted"


def test_policy_waivers_blocking_kinds_and_fail_on(
    demo_env: dict, first_round: dict, tmp_path: Path
) -> None:
    from harness.cli import main

    repo = str(demo_env["repo"])
    blocking = {f["kind"] for f in _findings(first_round["doc"]) if f["severity"] == "P1"}
    waive_all = tmp_path / "waive.yaml"
    waive_all.write_text(
        "waivers:\n"
        + "".join(
            f"  - kind: {k}\n    reason: tracked elsewhere\n    expires: 2027-06-30\n"
            for k in sorted(blocking)
        )
    )
    args = ["compare", *REFS, "--repo", repo, *SOURCE, "--format", "none"]
    assert (
        main(
            [
                *args,
                "--output",
                str(tmp_path / "a"),
                "--policy",
                str(waive_all),
                "--today",
                "2027-01-01",
                "--scenario",
                str(SCENARIO),
            ]
        )
        == 0
    )
    # The same waivers after their expiry no longer apply, and the report says so.
    assert (
        main(
            [
                *args,
                "--output",
                str(tmp_path / "b"),
                "--policy",
                str(waive_all),
                "--today",
                "2027-07-01",
                "--scenario",
                str(SCENARIO),
            ]
        )
        == 1
    )
    assert "expired on 2027-06-30" in (tmp_path / "b" / "report.md").read_text()
    # Without a scenario: fidelity's missing commits still block; --fail-on never lets it pass.
    assert main([*args, "--output", str(tmp_path / "c")]) == 1
    assert main([*args, "--output", str(tmp_path / "d"), "--fail-on", "never"]) == 0
    # A policy can make a P2 kind block.
    block = tmp_path / "block.yaml"
    block.write_text("fail_on: never\nblock: [shape-signoff]\n")
    assert (
        main(
            [
                "compare",
                "--no-fidelity",
                *REFS,
                "--repo",
                repo,
                "--format",
                "none",
                "--output",
                str(tmp_path / "e"),
                "--policy",
                str(block),
            ]
        )
        == 0
    )  # fail_on never still wins over blocking kinds…
    block.write_text("block: [shape-signoff]\n")
    assert (
        main(
            [
                "compare",
                "--no-fidelity",
                "release/1.0",
                "backport/42~1",
                "--repo",
                repo,
                "--format",
                "none",
                "--output",
                str(tmp_path / "f"),
                "--policy",
                str(block),
            ]
        )
        == 1
    )


def test_bad_input_is_one_line_exit_2_and_writes_nothing(
    demo_env: dict, tmp_path: Path, run_cli
) -> None:
    repo = str(demo_env["repo"])
    out = tmp_path / "never"
    code, _, err = run_cli(
        "compare", "release/1.0", "no-such-ref", "--repo", repo, "--output", str(out)
    )
    assert code == 2 and err.count("\n") == 1 and "no-such-ref" in err
    bad = tmp_path / "bad.yaml"
    bad.write_text("refs: {base: release/1.0}\ntraces:\n  - strin: x\n")
    code, _, err = run_cli(
        "compare", *REFS, "--repo", repo, "--scenario", str(bad), "--output", str(out)
    )
    assert code == 2 and err.count("\n") == 1 and f"{bad}:3" in err
    policy = tmp_path / "policy.yaml"
    policy.write_text("waivers:\n  - kind: x\n")
    code, _, err = run_cli(
        "compare", *REFS, "--repo", repo, "--policy", str(policy), "--output", str(out)
    )
    assert code == 2 and "reason" in err
    assert not out.exists()


def test_demo_command_writes_the_reports(
    tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    code, out, err = run_cli("demo", "--dir", str(tmp_path / "d"), "--format", "md")
    assert code == 0, err
    assert out.startswith("# Backport review") and "BLOCKED" in out
    for name in ("report.md", "report.json", "report.html"):
        assert (tmp_path / "d" / name).is_file()
    code, _, err = run_cli("demo", "--dir", str(tmp_path / "d"), "--format", "none", "--gate")
    assert code == 1


def test_every_table_carries_its_control_and_every_section_its_limits(first_round: dict) -> None:
    sections = first_round["doc"]["sections"]
    assert len(sections) >= 10
    for s in sections:
        assert s["not_verified"], f"section {s['id']} does not say what it did not verify"
        for t in s["tables"]:
            assert t["control"].strip(), f"table {t['title']!r} of section {s['id']} has no control"
    assert first_round["doc"]["not_verified"]  # and the report ends with the whole list


def test_default_output_never_lands_in_the_users_work_tree(
    demo_env: dict, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from harness.commands.compare import default_output
    from harness.git import GitRepo

    def sha8(text: str) -> str:
        return hashlib.sha1(text.encode()).hexdigest()[:8]

    repo = GitRepo(demo_env["repo"])
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(demo_env["repo"])
    inside = default_output(repo, "release/1.0", "backport/42")
    folder = f"repo-{sha8(str(Path(demo_env['repo']).resolve()))}"
    range_ = f"release_1.0-{sha8('release/1.0')}..backport_42-{sha8('backport/42')}"
    assert inside == tmp_path / "cache" / "harness" / "reports" / folder / range_
    monkeypatch.chdir(tmp_path)
    assert default_output(repo, "release/1.0", "backport/42") == Path("reports") / range_
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(demo_env["repo"]), str(tmp_path / "b.git")], check=True
    )
    bare = GitRepo(tmp_path / "b.git")
    monkeypatch.chdir(tmp_path / "b.git")
    folder = f"b.git-{sha8(str((tmp_path / 'b.git').resolve()))}"
    assert (
        default_output(bare, "a", "b")
        == tmp_path / "cache" / "harness" / "reports" / folder / "a..b"
    )


def test_two_ranges_or_two_repositories_never_share_a_default_report_folder(
    demo_env: dict, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``release/1.0`` and ``release_1.0`` (and ``release/ü`` and ``release``) were one folder, and
    so were two repositories of one name: a run wrote over the other's report. A 250-character
    branch now names a folder too."""
    from harness.commands.compare import default_output
    from harness.git import GitRepo

    repo = GitRepo(demo_env["repo"])
    monkeypatch.chdir(tmp_path)
    pairs = [("release/1.0", "release_1.0"), ("release/ü", "release"), ("a..b", "a__b")]
    for one, other in pairs:
        assert default_output(repo, one, "x") != default_output(repo, other, "x")
    long = default_output(repo, "topic/" + "x" * 250, "y")
    assert len(long.name) < 120 and long.name.endswith("..y")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    twins = []
    for parent in ("one", "two"):
        clone = tmp_path / parent / "repo"
        subprocess.run(["git", "clone", "-q", str(demo_env["repo"]), str(clone)], check=True)
        monkeypatch.chdir(clone)
        twins.append(default_output(GitRepo(clone), "main", "release"))
    assert twins[0] != twins[1] and twins[0].name == twins[1].name == "main..release"


def test_several_scenarios_add_their_sections(demo_env: dict, tmp_path: Path) -> None:
    from harness.cli import main

    extra = tmp_path / "extra.yaml"
    extra.write_text(
        "traces:\n  - string: min_new_tokens\n    refs: [base, head]\n"
        "pins:\n  - file: pytest.ini\n    key: nosuch\n"
    )
    out = tmp_path / "two"
    code = main(
        [
            "compare",
            *REFS,
            "--repo",
            str(demo_env["repo"]),
            *SOURCE,
            "--scenario",
            str(SCENARIO),
            "--scenario",
            str(extra),
            "--output",
            str(out),
            "--format",
            "none",
        ]
    )
    doc = json.loads((out / "report.json").read_text())
    traces = [s for s in doc["sections"] if s["id"] == "trace"]
    assert code == 1 and len(traces) == 2
    assert [r["count"] for r in traces[1]["data"]["rows"]] == [
        0,
        1,
    ]  # only head's handler passes min_new_tokens
    assert "scenario 2" in doc["inputs"]


def test_no_report_lands_in_the_repository_whatever_home_or_output_say(
    builder, run_cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A repository holding the home folder (dotfiles), a relative ``XDG_CACHE_HOME``, and every
    verb's ``--output FILE`` inside the work tree or ``.git``: exit 2, one line, nothing written."""
    from harness.commands.compare import default_output
    from harness.git import GitRepo

    builder.commit("one", {"a.py": "x = 1\n"})
    builder.commit("two", {"a.py": "x = 2\n"})
    repo = GitRepo(builder.path)
    monkeypatch.chdir(builder.path)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative-cache")  # ignored: not an absolute path
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    folder = "repo-" + hashlib.sha1(str(Path(builder.path).resolve()).encode()).hexdigest()[:8]
    assert (
        default_output(repo, "a", "b") == tmp_path / "home/.cache/harness/reports" / folder / "a..b"
    )
    monkeypatch.setenv("HOME", str(builder.path))  # the repository is the home folder
    before = sorted(p.name for p in builder.path.iterdir())
    code, _, err = run_cli("compare", "HEAD~1..HEAD", "--no-fidelity", "--format", "none")
    assert code == 2 and "default report folder" in err and err.count("\n") == 1, err
    for out in (builder.path / "fid.md", builder.path / ".git" / "x.md"):
        code, _, err = run_cli(
            "shape", "HEAD~1..HEAD", "--format", "md", "--output", str(out), "--fail-on", "never"
        )
        assert code == 2 and "inside the repository" in err and err.count("\n") == 1, err
        assert not out.exists()
    assert sorted(p.name for p in builder.path.iterdir()) == before


def test_a_relative_cache_folder_is_used_from_where_it_was_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An interpreter built in the cache runs from trees and from ``/``: the cache's path is
    absolute (a relative ``HARNESS_CACHE_DIR`` was an internal error in the tests section)."""
    from harness.infra.workarea import cache_area

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HARNESS_CACHE_DIR", "relc")
    assert cache_area() == tmp_path / "relc"


def test_an_infinite_test_timeout_is_refused_as_a_usage_error(builder, run_cli) -> None:
    builder.commit("one", {"a.py": "x = 1\n"})
    for value in ("inf", "1e400", "nan"):
        code, _, err = run_cli(
            "tests", "HEAD..HEAD", "--source", "HEAD", "--repo", str(builder.path),
            "--test-timeout", value,
        )  # fmt: skip
        assert code == 2 and "--test-timeout" in err and "Traceback" not in err, err


def test_every_work_tree_of_the_repository_is_the_repository(
    builder, run_cli, tmp_path: Path
) -> None:
    """A linked worktree (``git worktree add``) and the main checkout are one repository: a report
    folder in either is refused, whichever of them ``--repo`` names."""
    from harness.git import GitRepo

    builder.commit("one", {"a.py": "x = 1\n"})
    builder.commit("two", {"a.py": "x = 2\n"})
    linked = tmp_path / "wt"
    subprocess.run(
        ["git", "-C", str(builder.path), "worktree", "add", "-q", "--detach", str(linked)],
        check=True,
    )
    main, other = GitRepo(builder.path), GitRepo(linked)
    assert main.owns(linked / "out") and other.owns(builder.path / "out")
    assert not other.owns(tmp_path / "elsewhere")
    for repo, into in ((linked, builder.path / "out"), (builder.path, linked / "out")):
        code, _, err = run_cli(
            "compare", "HEAD~1..HEAD", "--no-fidelity", "--repo", str(repo),
            "--output-dir", str(into), "--format", "none",
        )  # fmt: skip
        assert code == 2 and "inside the repository" in err, err
        assert not into.exists()


def test_a_report_inside_the_harness_work_area_is_refused(
    builder, run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A report folder under the work area's ``runs/`` was removed by the next run."""
    builder.commit("one", {"a.py": "x = 1\n"})
    builder.commit("two", {"a.py": "x = 2\n"})
    monkeypatch.setenv("HARNESS_WORK_DIR", str(tmp_path / "work"))
    for argv in (
        ["compare", "HEAD~1..HEAD", "--no-fidelity", "--output-dir", str(tmp_path / "work/runs/x")],
        ["shape", "HEAD~1..HEAD", "--format", "md", "--output", str(tmp_path / "work/r.md")],
    ):
        code, _, err = run_cli(*argv, "--repo", str(builder.path))
        assert code == 2 and "inside the harness's work area" in err and err.count("\n") == 1, err
    assert not (tmp_path / "work" / "runs" / "x").exists() and not (tmp_path / "work/r.md").exists()


def test_repo_naming_a_folder_inside_a_repository_says_so(builder, run_cli, tmp_path) -> None:
    builder.commit("one", {"pkg/a.py": "x = 1\n"})
    builder.commit("two", {"pkg/a.py": "x = 2\n"})
    code, _, err = run_cli("shape", "HEAD~1..HEAD", "--repo", str(builder.path / "pkg"))
    assert code == 2 and err.count("\n") == 1, err
    assert f"a folder inside the repository at {builder.path.resolve()}" in err
    (tmp_path / "plain").mkdir()
    code, _, err = run_cli("shape", "HEAD~1..HEAD", "--repo", str(tmp_path / "plain"))
    assert code == 2 and err.endswith("not a git repository\n"), err
