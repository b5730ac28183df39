"""`harness fidelity` end to end: formats, exit codes, bare repos, usage errors, read-only."""

from __future__ import annotations

import json

import pytest
from test_fidelity_repos import Scenario, build

from harness.testing.repos import RepoBuilder


@pytest.fixture(scope="module")
def scenario(tmp_path_factory) -> Scenario:
    return build(RepoBuilder(tmp_path_factory.mktemp("fidcli") / "repo"))


def _args(sc: Scenario, *extra: str) -> list[str]:
    return ["fidelity", f"{sc.base}..release", "--source", "main", "--repo", str(sc.b.path), *extra]


def test_json_keys_and_exit_code(scenario, run_cli):
    code, out, err = run_cli(*_args(scenario, "--format", "json"))
    assert code == 1, err  # P1: a subset pick lacks non-test lines
    doc = json.loads(out)
    assert doc["schema"] == "harness.report/1"
    picks = doc["sections"][0]["data"]["picks"]
    assert len(picks) == len(scenario.pick)
    for p in picks:
        assert {"pick", "source", "source_via", "status", "files"} <= set(p)
        for f in p["files"]:
            assert {"path", "status", "pick", "source"} <= set(f)
            for side in (f["pick"], f["source"]):
                assert side is None or set(side) == {
                    "added",
                    "removed",
                    "added_sha1",
                    "removed_sha1",
                }


def test_fail_on_never_and_p2(scenario, run_cli):
    assert run_cli(*_args(scenario, "--format", "json", "--fail-on", "never"))[0] == 0
    clean = [
        "fidelity",
        f"{scenario.base}..{scenario.pick['latin']}",
        "--source",
        "main",
        "--repo",
        str(scenario.b.path),
        "--format",
        "json",
    ]
    code, out, _ = run_cli(*clean)
    assert code == 1  # the subset and the whitespace-only picks are inside this range too
    only_identical = [
        "fidelity",
        f"{scenario.pick['adapted']}..{scenario.pick['latin']}",
        "--source",
        "main",
        "--repo",
        str(scenario.b.path),
        "--format",
        "json",
        "--fail-on",
        "p2",
    ]
    code, out, _ = run_cli(*only_identical)
    statuses = [p["status"] for p in json.loads(out)["sections"][0]["data"]["picks"]]
    assert statuses == ["identical", "identical"] and code == 0


def test_markdown_and_terminal(scenario, run_cli):
    code, md, _ = run_cli(*_args(scenario, "--format", "md"))
    assert "| file | status |" in md and "da39a3ee" in md and "<details>" in md
    assert "(\\#3009 and \\#3010)" in md
    code, term, _ = run_cli(*_args(scenario, "--format", "term"))
    assert "Cherry-pick fidelity" in term and "no-source" in term


def test_same_inputs_same_bytes(scenario, run_cli, tmp_path):
    out = tmp_path / "a.md"
    run_cli(*_args(scenario, "--format", "md", "--output", str(out)))
    first = out.read_bytes()
    run_cli(*_args(scenario, "--format", "md", "--output", str(out)))
    assert out.read_bytes() == first and len(first) > 0


def test_bare_repository(scenario, run_cli, tmp_path):
    from harness.testing.repos import bare_snapshot

    bare = scenario.b.bare_clone(tmp_path / "bare.git")
    before = bare_snapshot(bare)
    code, out, err = run_cli(
        "fidelity",
        f"{scenario.base}..release",
        "--source",
        "main",
        "--repo",
        str(bare),
        "--source-branch",
        "pr",
        "--format",
        "json",
    )
    assert code == 1, err
    assert bare_snapshot(bare) == before
    data = json.loads(out)["sections"][0]["data"]
    assert data["cut_point"] == scenario.pr[1]
    assert {p["pick"]: p["status"] for p in data["picks"]}[scenario.pick["ws"]] == "whitespace-only"


@pytest.mark.parametrize(
    "bad",
    [
        ["--source", "no-such-branch"],
        ["--source", "main", "--source-branch", "nope"],
        ["--source", "main", "--map", "garbage"],
        ["--source", "main", "--map", "main=main"],
        ["--source", "--upload-pack=evil"],
    ],
)
def test_usage_errors_exit_2_and_write_nothing(scenario, run_cli, tmp_path, bad):
    out = tmp_path / "report.md"
    argv = [
        "fidelity",
        f"{scenario.base}..release",
        "--repo",
        str(scenario.b.path),
        *bad,
        "--output",
        str(out),
    ]
    code, stdout, err = run_cli(*argv)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and not out.exists() and stdout == ""


def test_unknown_range_exit_2(scenario, run_cli):
    code, _, err = run_cli(
        "fidelity", "nope..release", "--source", "main", "--repo", str(scenario.b.path)
    )
    assert code == 2 and "nope" in err


def test_repository_is_unchanged(scenario, run_cli, tmp_path):
    before = scenario.b.snapshot()
    run_cli(
        *_args(
            scenario,
            "--source-branch",
            "pr",
            "--format",
            "json",
            "--output",
            str(tmp_path / "r.json"),
        )
    )
    assert scenario.b.snapshot() == before


def test_non_utf8_file_name_and_subject(builder, run_cli, tmp_path):
    name = b"caf\xe9.txt".decode("utf-8", "surrogateescape")
    builder.commit("base", {"a.txt": "a\n"})
    builder.branch("release")
    src = builder.commit("add a latin-1 name (#7)", {name: b"bytes \xff\n"})
    builder.checkout("release")
    base = builder.rev("HEAD")
    builder.cherry_pick(src, "-x")
    out = tmp_path / "r.json"
    code, _, err = run_cli(
        "fidelity",
        f"{base}..release",
        "--source",
        "main",
        "--repo",
        str(builder.path),
        "--format",
        "json",
        "--output",
        str(out),
    )
    assert code == 0, err
    pick = json.loads(out.read_text(encoding="utf-8"))["sections"][0]["data"]["picks"][0]
    assert (
        pick["status"] == "identical" and pick["files"][0]["path"] == "caf\\xe9.txt"
    )  # escaped, not U+FFFD


def test_a_section_left_unescaped_renders_and_is_kept_as_an_escaped_one(
    builder, tmp_path, monkeypatch
):
    """The fidelity command asks for its section unescaped (``fidelity_check(escaped=False)``:
    its renderers escape as they write): its JSON is the bytes an escaped section gives, the
    answer it keeps is escaped (a later run served whole renders ``\\xe9`` in Markdown), and
    compare's callers still get an escaped section."""
    import os
    import subprocess
    import sys

    from harness.checks.fidelity.check import fidelity_check
    from harness.git import GitRepo
    from harness.infra.history_index import open_index, wait_for_writers
    from harness.report.json import section_text

    name = b"caf\xe9.txt".decode("utf-8", "surrogateescape")
    builder.commit("base", {"a.txt": "a\n"})
    builder.branch("release")
    src = builder.commit(b"caf\xe9 (#7)".decode("utf-8", "surrogateescape"), {name: b"x \xff\n"})
    builder.checkout("release")
    base = builder.rev("HEAD")
    builder.cherry_pick(src, "-x")
    repo = GitRepo(builder.path)
    raw = fidelity_check(repo, base, "release", "main", escaped=False).section
    done = fidelity_check(repo, base, "release", "main").section
    assert raw.data["picks"][0]["files"][0]["path"] == name  # (the control: left as it came)
    assert done.data["picks"][0]["files"][0]["path"] == "caf\\xe9.txt"
    assert section_text(raw) == section_text(done)

    env = {**os.environ, "HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("HARNESS_CACHE_WRITES", None)

    def cli(*extra: str) -> str:
        argv = ["fidelity", f"{base}..release", "--source", "main", "--repo", str(builder.path)]
        proc = subprocess.run(
            [sys.executable, "-m", "harness", *argv, *extra],
            env=env,
            capture_output=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.decode("utf-8")

    cold = json.loads(cli("--format", "json"))["sections"][0]
    assert cold == json.loads(section_text(done))
    wait_for_writers(tmp_path / "cache")
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    index = open_index(repo)
    kept = fidelity_check(repo, base, "release", "main", index=index).section
    assert index is not None and index.served["answers"] == 1
    assert kept.data["picks"][0]["files"][0]["path"] == "caf\\xe9.txt"
    served, fresh = cli("--format", "md"), cli("--format", "md", "--no-cache")
    assert "caf\\xe9.txt" in served and name not in served
    assert served.splitlines()[3:] == fresh.splitlines()[3:]


def test_a_long_path_that_is_not_utf8_gives_the_same_causes_cold_and_warm(builder, tmp_path):
    """The verdict's causes word and clip what the findings name (200 characters) before any
    renderer runs: they read it escaped (``\\xNN``) whether the section was built now or served
    whole from the index, so the report is the same bytes either way."""
    import os
    import subprocess
    import sys

    from harness.infra.history_index import wait_for_writers

    name = (b"caf\xe9_" * 30 + b".py").decode("utf-8", "surrogateescape")  # 30 bytes not UTF-8
    body = "".join(f"v_{i} = {i}\n" for i in range(20))
    builder.commit("base", {name: body})
    builder.branch("release")
    src = builder.commit("Set v_3 (#12)", {name: body.replace("v_3 = 3", "v_3 = 33")})
    builder.checkout("release")
    base = builder.rev("HEAD")
    msg = f"Set v_3 (#12)\n\n(cherry picked from commit {src})"
    builder.commit(msg, {name: body.replace("v_3 = 3", "v_3 = 34")})  # adapted: a finding
    env = {**os.environ, "HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("HARNESS_CACHE_WRITES", None)

    def report(*extra: str) -> dict:
        argv = ["fidelity", f"{base}..release", "--source", "main", "--repo", str(builder.path)]
        argv += ["--format", "json", "--fail-on", "never", *extra]
        proc = subprocess.run(
            [sys.executable, "-m", "harness", *argv], env=env, capture_output=True, timeout=120
        )
        assert proc.returncode == 0, proc.stderr
        wait_for_writers(tmp_path / "cache")
        doc = json.loads(proc.stdout)
        doc.pop("command")
        return doc

    cold, warm, plain = report(), report(), report("--no-cache")
    actions = [c["action"] for c in cold["causes"]]
    assert any("caf\\xe9_" in a and a.endswith("…") for a in actions), actions  # (clipped)
    assert cold == warm == plain


def test_two_picks_resolving_to_one_source_are_flagged(builder, run_cli):
    builder.commit("init", {"v.py": "VERSION = '1.0.dev'\n", "a.py": "x = 1\n"})
    builder.branch("release")
    builder.commit("Release 1.1 (#5)", {"v.py": "VERSION = '1.1'\n"})
    builder.checkout("release")
    builder.commit("release 1.0.1", {"v.py": "VERSION = '1.1'\n"})
    builder.commit("back to dev", {"v.py": "VERSION = '1.0.dev'\n"})
    builder.commit("release 1.0.2", {"v.py": "VERSION = '1.1'\n"})
    code, out, err = run_cli(
        "fidelity",
        "release~3..release",
        "--source",
        "main",
        "--repo",
        str(builder.path),
        "--format",
        "json",
        "--fail-on",
        "never",
    )
    assert code == 0, err
    import json as _json

    doc = _json.loads(out)
    section = doc["sections"][0]
    shared = [f for f in section["findings"] if f["kind"] == "shared-source"]
    assert len(shared) == 1 and shared[0]["title"].startswith(
        "picks 1, 3 resolve to the same source"
    )
