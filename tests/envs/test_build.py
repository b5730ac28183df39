"""Environments of the tests section built for real from a project's packaging files, with uv and
with pip: what the spec names is importable, what it does not is not, and the key is the content."""

from __future__ import annotations

import json
import os
import re
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


def _version(python: str, dist: str) -> str:
    probe = f"import importlib.metadata as m; print(m.version({dist!r}))"
    return subprocess.run([python, "-c", probe], capture_output=True, text=True).stdout.strip()


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_an_environment_holds_what_was_uploaded_by_heads_date(installer, tmp_path, monkeypatch):
    """ipython 8.x's tests import ``_pytest.python_api``, which today's pytest no longer has: the
    newest packages break an old release's suite. Limited to HEAD's date, the environment holds
    what its CI installed then (pytest 7.4.3 on 2023-11-14), and keeps holding it."""
    need_index()
    if installer == "pip":
        monkeypatch.setenv("HARNESS_ENV_INSTALLER", "pip")
        from harness.envs.installer import _pip_limits_dates

        if not _pip_limits_dates():
            pytest.skip("this pip has no --uploaded-prior-to")
        # a folder of wheels or a file:// index gives no upload times: pip takes their files
        # whatever the date (this machine's pip configuration names both)
        monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
        monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    else:
        from harness.envs.installer import find_uv

        if find_uv() is None:
            pytest.skip("uv is not installed here")
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    spec = _spec({"requirements-test.txt": b"pytest\n"})
    newest = spec.key("3.11.7")
    spec.as_of = "2023-11-14T22:13:20Z"
    assert spec.key("3.11.7") != newest  # the date is part of what the environment is
    env = ensure_env(spec)
    assert env.how == "built" and env.note == ""
    assert _version(env.python, "pytest") == "7.4.3"
    marker = json.loads((Path(env.python).parent.parent / MARKER).read_text())
    assert marker["as_of"] == "2023-11-14T22:13:20Z"
    assert ensure_env(spec).how == "reused"


def test_what_cannot_be_had_by_that_date_is_the_newest_said_in_a_note(tmp_path, monkeypatch):
    """A requirement nothing uploaded by the date satisfies (pytest 8 came out in 2024): the
    newest are installed, and the note says so."""
    need_index()
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    spec = _spec({"requirements-test.txt": b"pytest>=8\n"})
    spec.as_of = "2023-11-14T22:13:20Z"
    env = ensure_env(spec)
    assert int(_version(env.python, "pytest").split(".")[0]) >= 8
    assert env.note.startswith("packages as of 2023-11-14T22:13:20Z could not be installed (")
    assert env.note.endswith("): the newest were")
    assert ensure_env(spec).note == env.note  # kept with the environment


@pytest.mark.parametrize(
    ("told", "want"),
    [
        ("", "2023-11-14T23:59:59Z"),  # the end of HEAD's commit day: a day's commits share one
        ("head", "2023-11-14T23:59:59Z"),
        ("newest", ""),
        ("2024-02-01", "2024-02-01T00:00:00Z"),
        ("2024-02-01T12:00:00+02:00", "2024-02-01T10:00:00Z"),
    ],
)
def test_the_date_is_heads_unless_told_otherwise(told, want, monkeypatch):
    from harness.envs.spec import AS_OF_ENV, as_of

    monkeypatch.setenv(AS_OF_ENV, told)
    assert as_of(1_700_000_000) == want
    assert as_of(0, dated=False) == ("" if told in ("", "head") else want)


@pytest.mark.parametrize("told", ["last tuesday", "0001-01-01T00:00:00+01:00"])
def test_a_date_that_is_none_is_refused_in_one_line(told, monkeypatch):
    from harness.envs.spec import AS_OF_ENV, as_of
    from harness.errors import UsageError

    monkeypatch.setenv(AS_OF_ENV, told)
    with pytest.raises(UsageError, match=rf"^HARNESS_ENV_AS_OF='{re.escape(told)}': expected "):
        as_of(1_700_000_000)


def test_an_install_that_fails_for_another_reason_is_not_retried_with_the_newest(
    tmp_path, monkeypatch
):
    """Only what the date decides falls back to the newest (no version by then, no build); a
    requirement that cannot be read fails as it is, from the dated attempt alone."""
    from harness.envs.build import EnvError

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    spec = _spec({"requirements-test.txt": b"pytest\n"})
    spec.requirements = ["pytest ===!! not a requirement"]
    spec.as_of = "2023-11-14T23:59:59Z"
    with pytest.raises(EnvError) as caught:
        ensure_env(spec)
    assert {"--exclude-newer", "--uploaded-prior-to"} & set(caught.value.argv)
