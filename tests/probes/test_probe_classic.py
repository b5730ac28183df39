"""The classic: min_tokens with a hidden stop string split across two tokens."""

from __future__ import annotations

import json

from harness.checks.probe_table import SAME, probe_sections
from harness.git.repo import GitRepo
from harness.infra.cache import Cache
from harness.inputs.scenario import load_scenario
from harness.report.model import Code
from harness.testing.decoder_repo import PROBES_DIR, build_decoder_repo, scenario_text


def _first_leak(cells: list[dict]) -> int:
    return next(i for i, c in enumerate(cells) if "delta" in (c["value"] or ""))


def test_classic_boundary_moves_by_one_row(builder, tmp_path):
    build_decoder_repo(builder)
    before = builder.snapshot()
    sc = tmp_path / "s.yaml"
    sc.write_text(scenario_text(PROBES_DIR / "demo_decoder_probe.py"))
    sections = probe_sections(GitRepo(builder.path), load_scenario(sc))
    assert builder.snapshot() == before
    leak = sections[0]
    cells = leak.data["cells"]
    assert all(c["status"] == "ok" for col in cells.values() for c in col)
    # head reads the count before the increment: the leak starts one row earlier than in the control.
    assert _first_leak(cells["control"]) - _first_leak(cells["head"]) == 1
    assert _first_leak(cells["base"]) == _first_leak(cells["control"]) == 3
    table = leak.tables[0]
    assert table.columns == ["row", "base", "head", "control"]
    for r in (0, 1):  # rows 0 and 1 do not move
        assert table.rows[r][2:] == [SAME, SAME]
    assert table.rows[2][2] == Code(repr("hi delta epsilon zeta")) and table.rows[2][3] == Code(
        "'hi'"
    )
    assert "control column: control" in table.control
    assert "rows that did not move: min_tokens=0; min_tokens=1; min_tokens=3" in table.control
    # the expectation "head same as control" fails exactly at min_tokens=2
    (finding,) = [f for f in leak.findings if f.kind == "probe-expectation"]
    assert (
        finding.severity == "P1"
        and "min_tokens=2" in finding.detail
        and "min_tokens=3" not in finding.detail
    )
    # module path proofs: decoder.py from each column's own tree
    proofs = {r[0]: r[-1].text for r in leak.tables[1].rows}
    assert proofs == {n: "module decoder → decoder.py" for n in ("base", "head", "control")}
    # edit proofs: landed, and the user's copy did not change
    edits = sections[-1]
    assert edits.id == "probe-edits"
    assert all(c.ok for c in edits.controls)
    row = edits.tables[0].rows[0]
    assert row[1] == "decoder.py" and row[2] != row[3] and row[4] == row[5]


def test_warm_run_is_cached_and_byte_identical(builder, tmp_path):
    build_decoder_repo(builder)
    sc = tmp_path / "s.yaml"
    sc.write_text(scenario_text(PROBES_DIR / "demo_decoder_probe.py"))
    repo, scenario = GitRepo(builder.path), load_scenario(sc)
    cold_cache, warm_cache = Cache(), Cache()
    cold = probe_sections(repo, scenario, cache=cold_cache)
    warm = probe_sections(repo, scenario, cache=warm_cache)
    assert warm_cache.misses == 0 and warm_cache.hits >= 12

    # the results are byte-identical; only the provenance says where each cell came from
    def dump(ss: list) -> str:
        data = [{k: v for k, v in s.data.items() if k != "cache"} for s in ss]
        tables = [
            [
                [r[:6] + r[7:] if t.columns[6:7] == ["cells (cache key)"] else r for r in t.rows]
                for t in s.tables
            ]
            for s in ss
        ]
        return json.dumps([data, tables], default=str)

    assert dump(cold) == dump(warm)
    cold_prov, warm_prov = cold[0].data["cache"], warm[0].data["cache"]
    assert {c["from"] for col in cold_prov.values() for c in col} == {"run"}
    assert {c["from"] for col in warm_prov.values() for c in col} == {"cache"}
    assert [[c["key"] for c in col] for col in cold_prov.values()] == [
        [c["key"] for c in col] for col in warm_prov.values()
    ]
    assert (
        "from cache: " in warm[0].tables[1].rows[0][6]
        and "measured: " in cold[0].tables[1].rows[0][6]
    )
    # a changed probe file is a different definition: no cache hits for its cells
    probe = tmp_path / "p.py"
    probe.write_text((PROBES_DIR / "demo_decoder_probe.py").read_text() + "\n# changed\n")
    sc.write_text(scenario_text(probe))
    third = Cache()
    probe_sections(repo, load_scenario(sc), cache=third)
    assert third.hits == 3  # only the column edit proofs


def test_cli_probe_markdown(builder, tmp_path, run_cli):
    build_decoder_repo(builder)
    sc = tmp_path / "s.yaml"
    sc.write_text(scenario_text(PROBES_DIR / "demo_decoder_probe.py"))
    code, out, err = run_cli("probe", str(sc), "--repo", str(builder.path), "--format", "md")
    assert code == 1, err  # the P1 expectation finding blocks
    assert "| min\\_tokens=0 | `'hi'` | same | same |" in out
    code, out, err = run_cli("probe", str(sc), "--repo", str(builder.path), "--probe", "nope")
    assert code == 2 and "--probe nope: no such probe" in err


def test_no_cache_measures_every_cell_and_says_so(builder, tmp_path, run_cli):
    build_decoder_repo(builder)
    sc = tmp_path / "s.yaml"
    sc.write_text(scenario_text(PROBES_DIR / "demo_decoder_probe.py"))

    def sources(*extra: str) -> set[str]:
        code, out, err = run_cli(
            "probe", str(sc), "--repo", str(builder.path), "--format", "json", *extra
        )
        assert code == 1, err
        data = json.loads(out)["sections"][0]["data"]
        return {c["from"] for col in data["cache"].values() for c in col}

    assert sources() == {"run"}
    assert sources() == {"cache"}
    assert sources("--no-cache") == {"run"}
    assert sources() == {"cache"}  # --no-cache wrote nothing, the earlier entries still serve
    # compare takes --no-cache too: every probe cell measured afresh
    out_dir = tmp_path / "report"
    code, _, err = run_cli(
        "compare",
        "--no-fidelity",
        "main",
        "pr",
        "--repo",
        str(builder.path),
        "--scenario",
        str(sc),
        "--format",
        "none",
        "--output",
        str(out_dir),
        "--no-cache",
    )
    report = json.loads((out_dir / "report.json").read_text())
    probe = next(
        s for s in report["sections"] if s["id"].startswith("probe-") and "cache" in s["data"]
    )
    assert {c["from"] for col in probe["data"]["cache"].values() for c in col} == {"run"}, err
