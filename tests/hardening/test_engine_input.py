"""An engine version the package index does not have: one line, exit 2, no pip version dump."""

from __future__ import annotations

from pathlib import Path


def test_an_unknown_engine_release_is_one_line_and_exit_2(
    run_cli, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("HARNESS_ENGINE_DIR", str(tmp_path / "engines"))
    code, out, err = run_cli("engine", "check", "sglang==9.9.9", "--params", "{}")
    assert code == 2 and out == "", err
    assert err.splitlines()[-1] == "harness: sglang==9.9.9: no such release in the package index", (
        err
    )
    assert "from versions" not in err and "Traceback" not in err and "internal error" not in err
    leftovers = (
        [p.name for p in (tmp_path / "engines").iterdir()]
        if (tmp_path / "engines").exists()
        else []
    )
    assert not [n for n in leftovers if ".building" in n or n.startswith("sglang-9.9.9")], leftovers
