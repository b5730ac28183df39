"""Bad tests in a pull request are outcomes of their cells, never a crash of the harness and never
a pass: a test that hangs, one that calls os._exit, one that writes to $HOME, odd node ids, a
conftest that fails to import, a project with no test, an environment that cannot be built."""

from __future__ import annotations

import json
from pathlib import Path

from harness.testing import fix_repo
from harness.testing.network import need_index
from harness.testing.repos import RepoBuilder

BAD = {
    "tests/test_hang.py": "import time\n\n\ndef test_hang():\n    time.sleep(600)\n",
    "tests/test_exit.py": "import os\n\n\ndef test_exit():\n    os._exit(3)\n",
    "tests/test_home.py": (
        "from pathlib import Path\n\n\ndef test_home():\n"
        "    (Path.home() / 'touched-by-a-test').write_text('x')\n"
    ),
    "tests/test_odd.py": (
        "import pytest\nfrom calc.ops import clamp\n\n\n"
        "@pytest.mark.parametrize('x', [50], ids=['ünï cödé :: [x] -k'])\n"
        "def test_odd(x):\n    assert clamp(x, 0, 9) == 9\n"
    ),
}


def _repo(path: Path, pick_files: dict[str, str], base_extra: dict[str, str] | None = None) -> None:
    b = RepoBuilder(path)
    b.commit(
        "init",
        {
            "pyproject.toml": fix_repo.PYPROJECT,
            "src/calc/__init__.py": "",
            "src/calc/ops.py": fix_repo.OPS_BUG,
            "tests/test_ops.py": fix_repo.TEST_BASE,
            **(base_extra or {}),
        },
    )
    b.branch("release")
    main = b.commit("Fix clamp (#9)", {"src/calc/ops.py": fix_repo.OPS_C1, **pick_files})
    b.checkout("release")
    b.branch("backport")
    b.checkout("backport")
    b.commit(
        f"[release] Fix clamp (#9)\n\n(cherry picked from commit {main})",
        {"src/calc/ops.py": fix_repo.OPS_C1, **pick_files},
    )


def _tests(run_cli, repo: Path, *extra: str) -> tuple[int, dict, str]:
    code, out, err = run_cli(
        "tests",
        "release..backport",
        "--source",
        "main",
        "--repo",
        str(repo),
        "--format",
        "json",
        *extra,
    )
    assert code in (0, 1, 2), err
    return code, (json.loads(out) if out.strip() else {}), err


def test_hanging_exiting_and_home_writing_tests_are_outcomes(run_cli, tmp_path, monkeypatch):
    need_index()
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    repo = tmp_path / "repo"
    _repo(repo, BAD)
    code, report, err = _tests(run_cli, repo, "--test-timeout", "8")
    assert code in (0, 1), err
    section = report["sections"][0]
    rows = {t["nodeid"]: t for t in section["data"]["tests"]}
    # pytest's own node id (it escapes non-ASCII ids), as a plain pytest run prints it
    odd = "tests/test_odd.py::test_odd[\\xfcn\\xef c\\xf6d\\xe9 :: [x] -k]"
    assert rows[odd]["verdict"] == "proves-fix"
    for bad in ("tests/test_hang.py", "tests/test_exit.py"):
        assert rows[bad]["verdict"] == "env-error", rows.get(bad)
        assert rows[bad]["outcomes"]["head"] == "error"
    assert rows["tests/test_home.py::test_home"]["outcomes"]["head"] == "passed"
    assert not (home / "touched-by-a-test").exists()  # its HOME was the cell's own
    kinds = {f["kind"] for f in section["findings"]}
    assert "tests-env-error" in kinds
    assert any("timeout" in n for n in section["not_verified"] + [json.dumps(section)])


def test_a_conftest_that_fails_to_import_is_not_evidence(run_cli, tmp_path):
    need_index()
    repo = tmp_path / "repo"
    _repo(
        repo,
        {
            "tests/conftest.py": "raise RuntimeError('conftest broke')\n",
            "tests/test_new.py": "def test_new():\n    assert True\n",
        },
    )
    code, report, err = _tests(run_cli, repo)
    section = report["sections"][0]
    verdicts = {t["verdict"] for t in section["data"]["tests"]}
    assert "proves-fix" not in verdicts and "passes-both" not in verdicts
    assert "tests/conftest.py" in json.dumps(section["not_verified"])


def test_a_project_without_tests_says_nothing_was_verified(run_cli, tmp_path):
    repo = tmp_path / "repo"
    _repo(repo, {})
    code, report, err = _tests(run_cli, repo)
    assert code == 0, err
    section = report["sections"][0]
    assert section["data"]["tests"] == []
    assert "nothing verified" in section["summary"]
    assert any("never read as '0 failures'" in n for n in section["not_verified"])


def test_an_environment_that_cannot_be_built_is_env_error(run_cli, tmp_path, monkeypatch):
    need_index()
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    repo = tmp_path / "repo"
    broken = fix_repo.PYPROJECT.replace(
        'test = ["pytest"]', 'test = ["pytest", "harness-no-such-distribution-xyz==9.9.9"]'
    )
    _repo(
        repo,
        {"tests/test_new.py": "def test_new():\n    assert True\n"},
        {"pyproject.toml": broken},
    )
    code, report, err = _tests(run_cli, repo)
    section = report["sections"][0]
    assert section["data"]["tests"] == []
    env = [f for f in section["findings"] if f["kind"] == "tests-env-error"]
    assert env and env[0]["severity"] == "P2"
    assert "harness-no-such-distribution-xyz" in json.dumps(env)
    assert "not run" in section["summary"]


def test_an_installed_copy_that_shadows_the_tree_is_not_evidence(run_cli, tmp_path):
    need_index()
    import subprocess
    import sys

    env = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
    py = env / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "pytest"], check=True)
    # an installed copy of the package under test, first on sys.path from start-up on
    shadow = tmp_path / "shadow" / "calc"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("")
    (shadow / "ops.py").write_text(fix_repo.OPS_C1)  # the fixed code: it would pass everywhere
    site = next(env.glob("lib/python*/site-packages"))
    (site / "shadow.pth").write_text(f"import sys; sys.path.insert(0, {str(shadow.parent)!r})\n")
    repo = tmp_path / "repo"
    _repo(
        repo,
        {
            "tests/test_hi.py": "from calc.ops import clamp\n\n\ndef test_hi():\n"
            "    assert clamp(50, 0, 9) == 9\n"
        },
    )
    code, report, err = _tests(run_cli, repo, "--python", str(py))
    section = report["sections"][0]
    verdicts = {t["nodeid"]: t["verdict"] for t in section["data"]["tests"]}
    assert "proves-fix" not in verdicts.values() and "passes-both" not in verdicts.values()
    proof = next(c for c in section["controls"] if c["name"] == "module path proof")
    assert proof["ok"] is False and "shadowed" in json.dumps(proof)
    assert any("not evidence" in n for n in section["not_verified"])


def test_test_setup_runs_a_build_step_in_each_tree(run_cli, tmp_path):
    """A module the build generates (a compiled extension, a version file): without the step the
    test file does not load anywhere; with --test-setup it runs in every column."""
    need_index()
    repo = tmp_path / "repo"
    uses = "from calc import _generated\n\n\ndef test_generated():\n    assert _generated.X == 1\n"
    _repo(repo, {"tests/test_gen.py": uses})
    _, plain, _ = _tests(run_cli, repo)
    rows = {t["nodeid"]: t["verdict"] for t in plain["sections"][0]["data"]["tests"]}
    assert rows == {"tests/test_gen.py": "env-error"}
    step = "python3 -c \"open('src/calc/_generated.py', 'w').write('X = 1\\n')\""
    _, built, err = _tests(run_cli, repo, "--test-setup", step)
    rows = {t["nodeid"]: t for t in built["sections"][0]["data"]["tests"]}
    outcomes = rows["tests/test_gen.py::test_generated"]["outcomes"]
    assert set(outcomes.values()) == {"passed"}, (outcomes, err)
