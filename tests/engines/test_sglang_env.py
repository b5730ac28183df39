"""What the sglang runtimes add to ``harness/envs/``: their build steps fail as an engine build
says it (a release the index lacks is the user's input, one line; anything else shows the step and
its output's tail), and their environments are made with pip, never uv."""

from __future__ import annotations

import sys

import pytest

from harness.engines import sglang_env
from harness.envs import venv
from harness.errors import HarnessError, UsageError
from harness.infra import process


def test_a_release_the_wheels_lack_is_one_line_of_user_input(tmp_path):
    empty = tmp_path / "wheels"
    empty.mkdir()
    logged: list[str] = []
    python = sglang_env.create_venv(tmp_path / "env", logged.append)
    assert python == venv.python_in(tmp_path / "env")
    with pytest.raises(UsageError) as caught:
        sglang_env.pip_install_offline(python, empty, ["sglang==9.9.9"], logged.append)
    assert str(caught.value) == "sglang==9.9.9: no such release in the package index"
    # (the working folder off the path: -I for venv, the harness's own flag for pip)
    assert logged[0].startswith(f"$ {sglang_env.env_python()} -I -m venv --without-pip ")
    safe = " ".join(process.SAFE_PATH)
    assert logged[1].startswith(f"$ {sys.executable} {safe} -m pip --python {python} install ")
    assert "--no-index --find-links" in logged[1]


def test_any_other_failing_step_shows_the_step_and_its_tail(tmp_path):
    python = sglang_env.create_venv(tmp_path / "env", lambda line: None)
    with pytest.raises(HarnessError) as caught:
        sglang_env.pip_install(python, ["--no-such-option"], lambda line: None)
    first, *tail = str(caught.value).splitlines()
    assert first.startswith("build step failed (2): ") and "--no-such-option" in first
    assert tail and "no such option" in "\n".join(tail)
