"""The private work area: created 0700, refused when planted, shared or a link; run folders by lock."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from harness.infra import workarea

SCENARIO = """refs: {{head: main}}
probes:
  - {{id: p, kind: python, file: {probe}, function: run, rows: {{n: [1]}}}}
"""


def _repo_and_scenario(builder, tmp_path: Path) -> Path:
    builder.commit("one", {"m.py": "x = 1\n"})
    probe = tmp_path / "p.py"
    probe.write_text("UNDER_TEST = ['m']\ndef run(n):\n    import m\n    return m.x * n\n")
    scen = tmp_path / "s.yaml"
    scen.write_text(SCENARIO.format(probe=probe))
    return scen


def test_a_fresh_work_area_and_cache_are_created_private(
    builder, run_cli, tmp_path, monkeypatch
) -> None:
    scen = _repo_and_scenario(builder, tmp_path)
    monkeypatch.setenv("HARNESS_WORK_DIR", str(tmp_path / "w"))
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "c"))
    code, _, err = run_cli("probe", str(scen), "--repo", str(builder.path), "--format", "json")
    assert code == 0, err
    for p in (tmp_path / "w", tmp_path / "c"):
        assert stat.S_IMODE(p.stat().st_mode) == 0o700
    assert list((tmp_path / "w" / "trees").glob("*.json"))
    assert not list((tmp_path / "w" / "runs").iterdir()), (
        "the run folder is removed when the run ends"
    )


def _plant(tmp_path: Path, monkeypatch, how: str, which: str) -> Path:
    planted = tmp_path / f"planted-{which}"
    (planted / "trees").mkdir(parents=True)
    (planted / "trees" / ("0" * 24)).mkdir()
    (planted / "trees" / ("0" * 24) / "m.py").write_text("raise SystemExit('planted code ran')\n")
    if how == "world-writable":
        planted.chmod(0o777)
    elif how == "group-writable":
        planted.chmod(0o770)
    elif how == "other-owner":
        if os.getuid() != 0:
            pytest.skip("changing a folder's owner needs root")
        os.chown(planted, 65534, 65534)
        planted.chmod(0o700)
    elif how == "symlink":
        link = tmp_path / f"link-{which}"
        link.symlink_to(planted, target_is_directory=True)
        planted = link
    elif how == "a-file":
        planted = tmp_path / f"file-{which}"
        planted.write_text("x")
    monkeypatch.setenv("HARNESS_WORK_DIR" if which == "work" else "HARNESS_CACHE_DIR", str(planted))
    return planted


@pytest.mark.parametrize("which", ["work", "cache"])
@pytest.mark.parametrize(
    "how", ["world-writable", "group-writable", "other-owner", "symlink", "a-file"]
)
def test_a_planted_or_shared_area_is_refused_before_any_work(  # the cache: not used
    builder, run_cli, tmp_path, monkeypatch, how: str, which: str
) -> None:
    scen = _repo_and_scenario(builder, tmp_path)
    planted = _plant(tmp_path, monkeypatch, how, which)
    before = sorted(str(p) for p in Path(planted).rglob("*")) if Path(planted).is_dir() else []
    code, out, err = run_cli("probe", str(scen), "--repo", str(builder.path), "--format", "json")
    if which == "work":
        assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    else:  # a refused cache is neither read nor written: one line, and the run goes on (issue 41)
        assert code == 0 and json.loads(out)["sections"] and "Traceback" not in err, err
        assert "keeps no cache" in err and "planted code ran" not in out + err
    assert "refusing" in err and str(planted) in err
    after = sorted(str(p) for p in Path(planted).rglob("*")) if Path(planted).is_dir() else []
    assert after == before, "nothing is written into a refused area"


def test_planted_default_area_under_tmpdir_is_refused(builder, tmp_path, monkeypatch) -> None:
    """The default $TMPDIR/harness-<uid>, made world-writable by someone else, is not used."""
    scen = _repo_and_scenario(builder, tmp_path)
    tmpdir = tmp_path / "tmp"
    planted = tmpdir / f"harness-{os.getuid()}"
    planted.mkdir(parents=True)
    planted.chmod(0o777)
    env = {k: v for k, v in os.environ.items() if k != "HARNESS_WORK_DIR"}
    env["TMPDIR"] = str(tmpdir)
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "probe", str(scen), "--repo", str(builder.path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "world-writable" in proc.stderr
    assert list(planted.iterdir()) == []


def test_run_folders_of_dead_runs_are_removed_and_live_ones_kept(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HARNESS_WORK_DIR", str(tmp_path / "w"))
    runs = tmp_path / "w" / "runs"
    runs.mkdir(parents=True)
    (runs / "999999-0").mkdir()
    (runs / "999999-0" / "harness-select-x").mkdir()
    (runs / "999999-0.lock").write_text("999999")  # nobody holds it: its run died
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import fcntl, os, sys, time\n"
                f"fd = os.open({str(runs / 'live-0.lock')!r}, os.O_RDWR | os.O_CREAT)\n"
                "fcntl.flock(fd, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(30)\n"
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        (runs / "live-0").mkdir()
        workarea.check_areas()
        assert sorted(p.name for p in runs.iterdir()) == ["live-0", "live-0.lock"]
    finally:
        holder.kill()
        holder.wait()
    workarea.check_areas()
    assert list(runs.iterdir()) == []


@pytest.mark.parametrize("mode", [0o777, 0o775])
def test_a_loose_engine_store_is_refused(tmp_path, monkeypatch, run_cli, mode: int) -> None:
    """Engine environments hold code the harness runs: a store another user can write is refused."""
    store = tmp_path / "engines"
    store.mkdir()
    store.chmod(mode)
    monkeypatch.setenv("HARNESS_ENGINE_DIR", str(store))
    code, out, err = run_cli("engine", "list")
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert "engine directory" in err and "writable" in err and not list(store.iterdir())


def test_a_private_engine_store_is_listed(tmp_path, monkeypatch, run_cli) -> None:
    store = tmp_path / "engines"
    store.mkdir(mode=0o700)
    monkeypatch.setenv("HARNESS_ENGINE_DIR", str(store))
    code, _, err = run_cli("engine", "list")
    assert code == 0, err


def _victim(tmp_path: Path) -> tuple[Path, list[str]]:
    """A folder of someone's data, with sub-folders a run-folder cleaner would take for dead runs."""
    victim = tmp_path / "victim"
    for name in ("123-0", "photos", "999999-1"):
        (victim / name).mkdir(parents=True)
        (victim / name / "keep.txt").write_text("precious\n")
    (victim / "999999-1.lock").write_text("999999")
    return victim, sorted(str(p) for p in victim.rglob("*"))


@pytest.mark.parametrize("inner", ["runs", "trees", "pycache"])
def test_a_link_inside_the_work_area_is_refused_and_nothing_is_deleted_through_it(
    builder, run_cli, tmp_path, monkeypatch, inner: str
) -> None:
    """Before, ``W/runs -> victim`` made the run delete every sub-folder of the victim (exit 0)."""
    scen = _repo_and_scenario(builder, tmp_path)
    victim, before = _victim(tmp_path)
    work = tmp_path / "w"
    work.mkdir(mode=0o700)
    (work / inner).symlink_to(victim, target_is_directory=True)
    monkeypatch.setenv("HARNESS_WORK_DIR", str(work))
    code, out, err = run_cli("probe", str(scen), "--repo", str(builder.path), "--format", "json")
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    assert "symbolic link" in err and str(work / inner) in err
    assert sorted(str(p) for p in victim.rglob("*")) == before, "nothing deleted or written there"
    assert sorted(p.name for p in work.iterdir()) == [inner]


def test_a_link_deeper_in_the_cache_is_not_used_and_the_run_goes_on(
    builder, run_cli, tmp_path, monkeypatch
) -> None:
    """A cache holding a link is never read or written (issue 41: one line, the same result)."""
    scen = _repo_and_scenario(builder, tmp_path)
    clean = tmp_path / "clean"
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(clean))
    _, expected, _ = run_cli("probe", str(scen), "--repo", str(builder.path), "--format", "json")
    victim, before = _victim(tmp_path)
    cache = tmp_path / "c"
    (cache / "probes").mkdir(parents=True, mode=0o700)
    cache.chmod(0o700)
    (cache / "probes" / "ab").symlink_to(victim, target_is_directory=True)
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(cache))
    listing = sorted(str(p) for p in cache.rglob("*"))
    code, out, err = run_cli("probe", str(scen), "--repo", str(builder.path), "--format", "json")
    assert code in (0, 1) and "Traceback" not in err, err
    said = [ln for ln in err.splitlines() if "cache directory" in ln]
    assert len(said) == 1 and "symbolic link" in said[0] and "keeps no cache" in said[0]
    strip = ("generated", "command")
    assert {k: v for k, v in json.loads(out).items() if k not in strip} == {
        k: v for k, v in json.loads(expected).items() if k not in strip
    }
    assert sorted(str(p) for p in victim.rglob("*")) == before
    assert sorted(str(p) for p in cache.rglob("*")) == listing  # nothing written there


def test_a_cache_others_can_write_is_not_used_and_the_run_goes_on(
    builder, run_cli, tmp_path, monkeypatch
) -> None:
    scen = _repo_and_scenario(builder, tmp_path)
    cache = tmp_path / "open"
    cache.mkdir()
    cache.chmod(0o777)
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(cache))
    code, out, err = run_cli("probe", str(scen), "--repo", str(builder.path), "--format", "json")
    assert code in (0, 1) and json.loads(out)["sections"], err
    assert "group- or world-writable" in err and "keeps no cache" in err
    assert list(cache.iterdir()) == []


@pytest.mark.parametrize("inner", ["runs", "trees"])
def test_a_foreign_owned_folder_inside_the_work_area_is_one_line(
    builder, run_cli, tmp_path, monkeypatch, inner: str
) -> None:
    """A ``runs/`` or ``trees/`` another user (root, for a normal user) owns: exit 2, not a
    PermissionError (exit 3). Run as a normal user when the tests run as root."""
    scen = _repo_and_scenario(builder, tmp_path)
    work = tmp_path / "w"
    work.mkdir(mode=0o700)
    (work / inner).mkdir(mode=0o700)
    if os.getuid() == 0:
        os.chown(work / inner, 65534, 65534)  # foreign to root, as root's is to a user
    else:
        pytest.skip("needs root to give the folder to another user")
    monkeypatch.setenv("HARNESS_WORK_DIR", str(work))
    code, out, err = run_cli("probe", str(scen), "--repo", str(builder.path), "--format", "json")
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    assert "owned by uid 65534" in err and str(work / inner) in err
    assert list((work / inner).iterdir()) == []


def test_the_cleaners_never_delete_through_a_link(tmp_path) -> None:
    """Called directly (as library code may), the run and tree cleaners skip links themselves."""
    from harness.infra.stale_trees import clean_stale

    victim, before = _victim(tmp_path)
    (victim / ("0" * 24)).mkdir()
    (victim / ("0" * 24) / "keep.txt").write_text("precious\n")
    before = sorted(str(p) for p in victim.rglob("*"))
    assert workarea.clean_runs(tmp_path / "victim-link") == []
    (tmp_path / "victim-link").symlink_to(victim, target_is_directory=True)
    assert workarea.clean_runs(tmp_path / "victim-link") == []
    assert clean_stale(tmp_path / "victim-link") == []
    real = tmp_path / "real"
    real.mkdir()
    (real / "555555-0").symlink_to(victim / "123-0", target_is_directory=True)
    (real / ("1" * 24)).symlink_to(victim / ("0" * 24), target_is_directory=True)
    workarea.clean_runs(real)
    clean_stale(real)
    assert sorted(str(p) for p in victim.rglob("*")) == before
