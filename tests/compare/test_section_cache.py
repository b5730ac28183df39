"""Sections that only read git (fidelity, drift, shape, conflicts) are cached by content: a warm
`compare` gives the cold report's bytes except the provenance line, and a moved ref is measured
again."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness import demo
from harness.infra.cache import Cache, cached_section
from harness.report.model import Code, Control, Finding, Section, Sha, Table

CACHED = {"fidelity", "drift", "shape", "conflicts", "lanes", "tests"}


def _compare(repo: Path, out: Path, head: str = demo.REFS["head"]) -> dict:
    from harness.cli import main

    code = main(
        [
            "compare",
            demo.REFS["base"],
            head,
            "--repo",
            str(repo),
            "--source",
            demo.REFS["source"],
            "--output-dir",
            str(out),
            "--fail-on",
            "never",
        ]
    )
    assert code == 0
    return json.loads((out / "report.json").read_text())


def _provenance(doc: dict) -> dict[str, str]:
    return {
        s["id"]: c["result"]
        for s in doc["sections"]
        for c in s["controls"]
        if c["name"] == "section cache"
    }


def _without_provenance(doc: dict) -> str:
    doc = json.loads(json.dumps(doc))
    doc.pop("generated", None)
    for s in doc["sections"]:
        s["controls"] = [c for c in s["controls"] if c["name"] != "section cache"]
    return json.dumps(doc, sort_keys=True)


@pytest.fixture
def demo_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    repo = tmp_path / "repo"
    demo.build(repo)
    return repo


def test_warm_compare_serves_git_sections_from_the_cache(demo_repo: Path, tmp_path: Path):
    cold = _compare(demo_repo, tmp_path / "cold")
    warm = _compare(demo_repo, tmp_path / "cold")  # same command line, bytes compared
    first, second = _provenance(cold), _provenance(warm)
    assert set(first) == CACHED
    assert all(v.startswith("measured: ") for v in first.values())
    assert all(v.startswith("from cache: ") for v in second.values())
    # The same key both times, and nothing but the provenance differs.
    assert {k: v.split()[-4] for k, v in first.items()} == {
        k: v.split()[-4] for k, v in second.items()
    }
    assert _without_provenance(cold) == _without_provenance(warm)
    assert "fidelity" in {s["id"] for s in warm["sections"]} and warm["sections"][0]["tables"]


def test_a_moved_head_is_measured_again(demo_repo: Path, tmp_path: Path):
    _compare(demo_repo, tmp_path / "cold")
    head = demo.REFS["head"]
    subprocess.run(
        ["git", "-C", str(demo_repo), "branch", "-f", "moved", f"{head}~1"],
        check=True,
        capture_output=True,
    )
    moved = _provenance(_compare(demo_repo, tmp_path / "moved", head="moved"))
    assert all(v.startswith("measured: ") for v in moved.values())


def test_encoding_keeps_tuples_keys_and_cells(tmp_path: Path):
    section = Section(
        "x",
        "X",
        "summary",
        [Table("t", ["a", "b"], [[Code("p.py"), Sha("ab" * 20)], [1, None]], control="c")],
        [Finding("k", "P2", "title", key="k1")],
        [Control("ok", "fine", True)],
        ["not this"],
        data={"lines": [("pre-existing", "+x")], "by_number": {7: ["a"]}, "f": 0.5},
    )
    cache = Cache(tmp_path, "sections")
    built: list[int] = []

    def build() -> Section:
        built.append(1)
        return Section(**{k: v for k, v in section.__dict__.items()})

    first = cached_section(cache, ("k",), build)
    second = cached_section(cache, ("k",), build)
    assert built == [1]  # the second came from the cache
    assert second.data == {"lines": [("pre-existing", "+x")], "by_number": {7: ["a"]}, "f": 0.5}
    assert second.tables == first.tables and second.findings == first.findings
    assert [c.name for c in second.controls] == ["ok", "section cache"]
    assert cached_section(Cache(tmp_path, "sections"), ("other",), build) is not None
    assert built == [1, 1]  # another key is built
