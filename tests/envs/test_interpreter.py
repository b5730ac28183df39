"""``--python`` resolved to an ``Env``: the harness's own or the one given, keyed by what the
interpreter is; a built environment keyed by its spec."""

from __future__ import annotations

import sys
from pathlib import Path

from harness.envs import interpreter
from harness.envs.fingerprint import interpreter_fingerprint, interpreter_version
from harness.infra.cache import Cache


def test_no_python_is_the_harness_s_own_and_a_given_one_is_used_as_given():
    own = interpreter.resolve(None)
    assert (own.python, own.how, own.key) == (sys.executable, "own", "")
    given = interpreter.resolve("/opt/py/bin/python3")
    assert (given.python, given.how) == ("/opt/py/bin/python3", "given")


def test_the_fingerprint_is_the_interpreter_s_unless_the_env_was_built(tmp_path: Path):
    own = interpreter.own()
    assert own.fingerprint() == interpreter_fingerprint(sys.executable)
    store = Cache(tmp_path / "cache", namespace="mutations")
    assert own.fingerprint(store) == own.fingerprint()  # kept or not, the same answer
    built = interpreter.Env(sys.executable, "built", key="0123abcd", installer="uv")
    assert built.fingerprint(store) == "0123abcd"  # a built env is its spec's key


def test_the_version_and_the_fingerprint_are_asked_of_the_interpreter_itself():
    assert interpreter_version(sys.executable) == ".".join(map(str, sys.version_info[:3]))
    base = getattr(sys, "_base_executable", sys.executable)
    assert interpreter_version(base) == interpreter_version(sys.executable)
    if base != sys.executable:  # another prefix is another interpreter
        assert interpreter_fingerprint(base) != interpreter_fingerprint(sys.executable)


def test_a_relative_python_runs_from_the_folders_the_runs_start_in(builder, run_cli, tmp_path):
    """``--python venv/bin/python`` named from the user's folder: the collection starts in its tree
    and the interpreter is described from ``/``; before, both looked for it there (exit 3)."""
    import os

    builder.commit("one", {"test_a.py": "def test_a():\n    pass\n"})
    (tmp_path / "venv").symlink_to(Path(sys.executable).parent.parent)
    relative = os.path.join("venv", "bin", Path(sys.executable).name)
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        code, out, err = run_cli(
            "select", "--repo", str(builder.path), "--ref", "HEAD", "--lane", "all=not slow",
            "--python", relative, "--format", "json", "--no-cache",
        )  # fmt: skip
    finally:
        os.chdir(here)
    assert code == 0, err
    assert '"all"' in out and "internal error" not in err


def test_an_interpreter_that_is_not_there_is_unusable_not_a_crash(tmp_path):
    from harness.envs.fingerprint import describe

    assert describe(str(tmp_path / "no" / "python")) == (f"unusable:{tmp_path}/no/python", [])
