"""harness pin: values per ref with line numbers, from YAML, pyproject.toml and requirements files."""

from __future__ import annotations

import json

from harness.checks.pins import pin_section, read_pins
from harness.git.repo import GitRepo

V1 = """\
defaults: &d
  runtime_image_tag: v0.5.1-cu129
sglang:
  "cuda13.0":
    <<: *d
  "cuda12.9":
    runtime_image_tag: "v0.5.1-cu129"
"""
V2 = """\
# bumped
defaults: &d
  runtime_image_tag: v0.5.1-cu129
sglang:
  "cuda13.0":
    <<: *d
    runtime_image_tag: 'v0.5.2-cu130'
"""
PYPROJECT = """\
[project]
name = "sglang"
version = "0.5.2"
dependencies = [
  "torch==2.8.0",
  "sglang[all]>=0.5.1; python_version>'3.9'",
]
"""
KEY = 'sglang["cuda13.0"].runtime_image_tag'


def _repo(builder):
    builder.commit("v1", {"ci/pins.yml": V1})
    builder.branch("release", "HEAD")
    builder.commit(
        "v2",
        {
            "ci/pins.yml": V2,
            "pyproject.toml": PYPROJECT,
            "requirements-ci.txt": "-r base.txt\nsglang==0.4.9  # pinned\nflashinfer_python>=0.2\n",
        },
    )
    return builder


def _rows(out: str) -> list[dict]:
    return json.loads(out)["sections"][0]["data"]["rows"]


def test_yaml_pin_per_ref_with_lines_and_json_rows(builder, run_cli):
    _repo(builder)
    snap = builder.snapshot()
    code, out, err = run_cli(
        "pin",
        "--repo",
        str(builder.path),
        "ci/pins.yml",
        KEY,
        "--refs",
        "release",
        "main",
        "--format",
        "json",
    )
    assert code == 0, err
    rows = _rows(out)
    assert [(r["ref"], r["value"], r["line"]) for r in rows] == [
        ("release", "v0.5.1-cu129", 2),
        ("main", "v0.5.2-cu130", 7),
    ]
    assert rows[1]["raw"].strip() == "runtime_image_tag: 'v0.5.2-cu130'"
    doc = json.loads(out)
    assert doc["sections"][0]["controls"][0]["ok"] is True
    assert any(f["kind"] == "pin-differs" for f in doc["sections"][0]["findings"])
    assert builder.snapshot() == snap


def test_missing_file_and_key_are_cells(builder):
    _repo(builder)
    builder.commit("drop", {"other.yml": "a: 1\n"})
    builder.remove("ci/pins.yml")
    builder.commit("rm")
    rows = read_pins(GitRepo(builder.path), "ci/pins.yml", KEY, ["release", "main~1", "main"])
    assert [r.status for r in rows] == ["found", "found", "missing file"]
    rows = read_pins(GitRepo(builder.path), "ci/pins.yml", 'sglang["cuda14.0"].tag', ["release"])
    assert rows[0].status == "missing key" and "cuda13.0" in rows[0].note and rows[0].value is None


def test_pyproject_and_requirements_pins(builder):
    _repo(builder)
    repo = GitRepo(builder.path)
    assert [
        (r.value, r.line) for r in read_pins(repo, "pyproject.toml", "project.version", ["main"])
    ] == [("0.5.2", 3)]
    torch = read_pins(repo, "pyproject.toml", "torch", ["main"])[0]
    assert (torch.value, torch.line, torch.kind) == ("2.8.0", 5, "requirement")
    sg = read_pins(repo, "pyproject.toml", "sglang", ["main"])[0]
    assert (
        sg.value == "[all]>=0.5.1" and sg.line == 6
    )  # the `name = "sglang"` line is not a requirement
    req = read_pins(repo, "requirements-ci.txt", "sglang", ["main"])[0]
    assert (req.value, req.line) == ("0.4.9", 2)
    assert read_pins(repo, "requirements-ci.txt", "flashinfer-python", ["main"])[0].value == ">=0.2"
    assert read_pins(repo, "requirements-ci.txt", "vllm", ["main"])[0].status == "missing key"


def test_non_mapping_yaml_bad_yaml_and_non_utf8(builder):
    builder.commit(
        "odd", {"list.yml": "- a\n- b\n", "bad.yml": "a: [\n", "latin.yml": b"tag: caf\xe9\n"}
    )
    repo = GitRepo(builder.path)
    lst = read_pins(repo, "list.yml", "a", ["HEAD"])[0]
    assert lst.status == "missing key" and "not a mapping" in lst.note
    bad = read_pins(repo, "bad.yml", "a", ["HEAD"])[0]
    assert bad.status == "unreadable" and "line" in bad.note
    latin = read_pins(repo, "latin.yml", "tag", ["HEAD"])[0]
    assert latin.value == "caf\ufffd" and "UTF-8" in latin.note
    section = pin_section(repo, "latin.yml", "tag", ["HEAD"])
    assert section.tables[0].control and section.not_verified


def test_unknown_ref_exits_2_with_one_line_and_no_output(builder, run_cli, tmp_path):
    _repo(builder)
    out_file = tmp_path / "report.md"
    code, out, err = run_cli(
        "pin",
        "--repo",
        str(builder.path),
        "ci/pins.yml",
        KEY,
        "--refs",
        "main",
        "nope",
        "--output",
        str(out_file),
    )
    assert code == 2 and len(err.strip().splitlines()) == 1 and "nope" in err
    assert not out_file.exists()


def test_option_like_ref_is_a_ref_name(builder, run_cli):
    _repo(builder)
    builder.repo.git.update_ref("refs/heads/--upload-pack=x", "release")
    snap = builder.snapshot()
    code, out, err = run_cli(
        "pin",
        "--repo",
        str(builder.path),
        "ci/pins.yml",
        KEY,
        "--refs=--upload-pack=x",
        "--format",
        "json",
    )
    assert code == 0, err
    assert _rows(out)[0]["value"] == "v0.5.1-cu129"
    assert builder.snapshot() == snap


def test_toml_dates_and_numbers_are_shown_as_the_file_writes_them(builder):
    """A TOML datetime came out as Python prints it (``2024-01-01 00:00:00+00:00``) and ``inf`` as
    JSON's ``Infinity``: neither was on the line, so the section's own read-back control failed."""
    from harness.checks.pins import pin_check

    builder.commit(
        "one",
        {
            "pyproject.toml": "[tool.x]\nreleased = 2024-01-01T00:00:00Z  # day one\nlimit = inf\n"
            "count = 3\nratio = 1e3\nnames = ['a', 'b']\n"
        },
    )
    repo = GitRepo(builder.path)
    got = {
        key: read_pins(repo, "pyproject.toml", f"tool.x.{key}", ["main"])[0].value
        for key in ("released", "limit", "count", "ratio", "names")
    }
    assert got == {
        "released": "2024-01-01T00:00:00Z",
        "limit": "inf",
        "count": "3",
        "ratio": "1e3",
        "names": '["a", "b"]',
    }
    for key in ("released", "limit", "ratio"):
        (control,) = pin_check(repo, "pyproject.toml", f"tool.x.{key}", ["main"]).section.controls
        assert control.ok is True, (key, control)
