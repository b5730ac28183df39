"""Environments of the tests section built for real from a project's packaging files, with uv and
with pip: what the spec names is importable, what it does not is not, and the key is the content."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness.envs.build import MARKER, ensure_env
from harness.envs.spec import read_spec
from harness.testing.network import need_index

PYPROJECT = b"""[project]
name = "calc"
dependencies = ["six"]

[project.optional-dependencies]
test = ["pytest", "calc[other]"]
other = ["iniconfig"]
docs = ["sphinx"]
"""


def _spec(files: dict[str, bytes]):
    return read_spec(files.get, sorted(files))


def test_the_spec_reads_groups_extras_and_requirement_files_and_drops_options():
    spec = _spec(
        {
            "pyproject.toml": PYPROJECT,
            "requirements-test.txt": b"-r requirements/base.txt\n--index-url http://evil\nattrs\n-e .\n",
            "requirements/base.txt": b"packaging>=20 # pinned\n",
        }
    )
    assert spec.requirements == ["six", "pytest", "iniconfig", "packaging>=20", "attrs"]
    assert any("--index-url" in d for d in spec.dropped) and any("-e ." in d for d in spec.dropped)
    assert "sphinx" not in spec.requirements  # a docs extra is not a test extra
    other = _spec({"pyproject.toml": PYPROJECT.replace(b"six", b"six>=1")})
    assert other.key("3.11.7") != spec.key("3.11.7")
    assert spec.key("3.11.7") != spec.key("3.12.1")


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_an_environment_is_built_with_each_installer(installer, tmp_path, monkeypatch):
    need_index()
    if installer == "pip":
        monkeypatch.setenv("HARNESS_ENV_INSTALLER", "pip")
    else:
        from harness.envs.installer import find_uv

        if find_uv() is None:
            pytest.skip("uv is not installed here")
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    spec = _spec({"pyproject.toml": PYPROJECT})
    env = ensure_env(spec)
    assert env.how == "built" and env.installer == installer
    probe = "import six, pytest, iniconfig; print('ok')"
    assert (
        subprocess.run([env.python, "-c", probe], capture_output=True, text=True).stdout == "ok\n"
    )
    missing = subprocess.run([env.python, "-c", "import sphinx"], capture_output=True)
    assert missing.returncode != 0
    marker = json.loads((Path(env.python).parent.parent / MARKER).read_text())
    assert marker["requirements"] == spec.requirements
    assert ensure_env(spec).how == "reused"
