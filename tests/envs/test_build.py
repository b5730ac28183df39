"""Environments of the tests section built for real from a project's packaging files, with uv and
with pip: what the spec names is importable, what it does not is not, and the key is the content."""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import replace
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


PBR_SETUP_CFG = b"""[metadata]
name = python-calcclient

[files]
packages = calcclient

[extras]
test =
    fixtures>=3

[pbr]
skip_authors = True
"""


def test_dependencies_the_build_backend_makes_are_read_where_they_are_declared():
    """pbr (OpenStack): ``dynamic`` dependencies are requirements.txt; setuptools' dynamic files;
    setup.cfg's install_requires and test extras (``file:`` too); the project itself never."""
    pbr = _spec(
        {
            "pyproject.toml": b'[build-system]\nrequires = ["pbr>=6.1.1"]\nbuild-backend = '
            b'"pbr.build"\n\n[project]\nname = "python-calcclient"\n'
            b'dynamic = ["version", "dependencies"]\n',
            "setup.cfg": PBR_SETUP_CFG,
            "requirements.txt": b"cliff>=4 # Apache-2.0\nkeystoneauth1>=3.18.0\n",
            "test-requirements.txt": b"stestr>=1\npython-calcclient\n",
            "setup.py": b"import setuptools\nsetuptools.setup(pbr=True)\n",
        }
    )
    assert pbr.requirements == ["cliff>=4", "keystoneauth1>=3.18.0", "stestr>=1", "pytest"]
    assert "requirements.txt (pbr: the project's dependencies)" in pbr.sources
    assert {"requirements.txt", "setup.cfg"} <= set(pbr.digests)
    older = _spec(  # pbr named by setup.py alone; no pyproject.toml [project] table
        {
            "pyproject.toml": b"[tool.ruff]\nline-length = 79\n",
            "setup.cfg": PBR_SETUP_CFG.replace(b"[pbr]\nskip_authors = True\n", b""),
            "requirements.txt": b"cliff>=4\n",
            "setup.py": b"setuptools.setup(setup_requires=['pbr>=2.0.0'], pbr=True)\n",
        }
    )
    assert older.requirements == ["cliff>=4", "fixtures>=3", "pytest"]
    legacy = _spec(  # no [project] table: setup.cfg says it all (pbr's [extras] read too)
        {
            "setup.cfg": PBR_SETUP_CFG.replace(
                b"[files]",
                b"[options]\ninstall_requires =\n"
                b"    six\n    attrs>=19 ; python_version < '3.12'\n\n[options.extras_require]\n"
                b"testing = file: req/test.txt, req/more.txt\ndocs = sphinx\n\n[files]",
            ),
            "req/test.txt": b"hypothesis\n",
            "req/more.txt": b"python-calcclient[fast]\nxmlschema\n",
            "setup.py": b"from setuptools import setup\nsetup()\n",
        }
    )
    assert legacy.requirements == [
        "six", "attrs>=19 ; python_version < '3.12'", "fixtures>=3", "hypothesis", "xmlschema",
        "pytest",
    ]  # fmt: skip
    assert "setup.cfg [options] install_requires" in legacy.sources
    assert "req/test.txt (setup.cfg [options.extras_require] testing)" in legacy.sources
    dynamic = _spec(
        {
            "pyproject.toml": b'[project]\nname = "calc"\n'
            b'dynamic = ["dependencies", "optional-dependencies"]\n'
            b'[tool.setuptools.dynamic]\ndependencies = {file = ["requirements/base.in"]}\n'
            b'optional-dependencies.test = {file = "requirements/test.in"}\n'
            b'optional-dependencies.docs = {file = "requirements/docs.in"}\n',
            "requirements/base.in": b"packaging\n",
            "requirements/test.in": b"pytest-xdist\n",
            "requirements/docs.in": b"sphinx\n",
            "setup.cfg": b"[options]\ninstall_requires = never-read\n",
        }
    )
    assert dynamic.requirements == ["packaging", "pytest-xdist", "pytest"]
    static = _spec(  # dependencies the pyproject states: setup.cfg is not asked
        {"pyproject.toml": PYPROJECT, "setup.cfg": b"[options]\ninstall_requires = never-read\n"}
    )
    assert "never-read" not in static.requirements and "setup.cfg" not in static.digests


KEYSTONE_TOX = b"""[tox]
envlist = py3,pep8

[testenv]
usedevelop = True
deps =
  -c{env:TOX_CONSTRAINTS_FILE:https://releases.openstack.org/constraints/upper/2026.1}
  -r{toxinidir}/test-requirements.txt
  .[ldap]
  pytest-xdist  # (a comment)
  full: twisted
  {py3,py310}: pycurl
  -e{toxinidir}/other[x]
  {env:EXTRA_DEP}
extras = memcache
dependency_groups = typing

[testenv:pep8]
deps = pre-commit
"""


def test_what_toxs_testenv_installs_is_read():
    """keystone's tox installs ``.[ldap]`` beside its test requirements; frozenlist's tox names
    pytest-xdist and pytest-cov; a factor's lines are one environment's, not the tests'."""
    spec = _spec(
        {
            "tox.ini": KEYSTONE_TOX,
            "pyproject.toml": b'[project]\nname = "keystone"\ndependencies = ["six"]\n'
            b"[project.optional-dependencies]\n"
            b'ldap = ["python-ldap>=3.0.0"]\nmemcache = ["python-memcached"]\nmongo = ["x"]\n'
            b'[dependency-groups]\ntyping = ["mypy"]\nlint = ["ruff"]\n',
            "test-requirements.txt": b"stestr>=1.0.0\n",
        }
    )
    assert spec.requirements == [
        "six", "python-memcached", "python-ldap>=3.0.0", "mypy", "stestr>=1.0.0",
        "pytest-xdist", "pytest",
    ]  # fmt: skip
    assert "tox.ini [testenv] deps" in spec.sources and "tox.ini" in spec.digests
    assert [d for d in spec.dropped if "tox.ini" in d] == [
        "tox.ini [testenv] deps: '-c{env:TOX_CONSTRAINTS_FILE:https://releases.openstack.org/"
        "constraints/upper/2026.1}' (constraints, not fetched: --test-constraints FILE builds "
        "under pins you give)",
        "tox.ini [testenv] deps: '-e{toxinidir}/other[x]' (an installer option)",
        "tox.ini [testenv] deps: '{env:EXTRA_DEP}' (a substitution)",
    ]
    assert "twisted" not in str(spec.requirements) and "pre-commit" not in spec.requirements


def test_an_entry_with_a_line_break_never_reaches_the_installer_as_two_lines():
    """A requirement written into the installer's file one a line: an entry holding a line break
    (TOML allows one) would hand it an option of the repository's choosing (``-r /etc/…``)."""
    spec = _spec(
        {
            "pyproject.toml": b'[project]\nname = "calc"\n'
            b'dependencies = ["six\\n-r /etc/passwd", "attrs", "bar\\u2028-e /tmp/x"]\n'
            b"[tool.poetry.dependencies]\n",
            "requirements-test.txt": b"iniconfig\r\n",
        }
    )
    assert spec.requirements == ["attrs", "iniconfig", "pytest"]
    assert any("(not one requirement line)" in d for d in spec.dropped)
    poetry = _spec(
        {
            "pyproject.toml": b'[tool.poetry]\nname = "calc"\n[tool.poetry.dependencies]\n'
            b'six = { version = "^1", markers = "python_version > \\"3\\"\\n--pre" }\n'
            b'attrs = { version = "*", extras = "ab" }\n'
        }
    )
    assert poetry.requirements == ["attrs", "pytest"]


def test_dependencies_no_file_declares_are_named_and_hostile_paths_are_never_read():
    asked: list[str] = []
    files = {
        "pyproject.toml": b'[project]\nname = "calc"\ndynamic = ["dependencies"]\n'
        b'[tool.setuptools.dynamic]\ndependencies = {file = ["../../etc/passwd", "/etc/x"]}\n',
    }

    def read(path: str) -> bytes | None:
        asked.append(path)
        return files.get(path)

    spec = read_spec(read, sorted(files))
    assert set(asked) == {"pyproject.toml"}  # neither path outside the tree was asked for
    assert sum("outside the repository" in d for d in spec.dropped) == 2
    made = _spec({"setup.py": b"setup(install_requires=['six'])\n", "setup.cfg": b"[x\n"})
    assert made.requirements == ["pytest"]
    assert any(d.startswith("setup.cfg: not read") for d in made.dropped)
    assert any("made by its build backend" in d for d in made.dropped)
    broken = _spec(  # a pyproject.toml that cannot be read leaves setup.cfg to say
        {"pyproject.toml": b"[project\n", "setup.cfg": b"[options]\ninstall-requires = six\n"}
    )
    assert broken.requirements == ["six", "pytest"]
    config = _spec({"pyproject.toml": b"[tool.pytest.ini_options]\naddopts = '-q'\n"})
    assert config.requirements == ["pytest"] and not config.dropped  # a tool's settings only


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


def _use(installer: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Build with ``installer`` (skipped where uv is absent) into a cache of the test's own; pip
    reads the package index alone: a folder of wheels or a file:// index gives no upload times,
    and pip would take their files whatever the date (this machine's pip configuration names both).
    """
    if installer == "pip":
        monkeypatch.setenv("HARNESS_ENV_INSTALLER", "pip")
        monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
        monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    else:
        from harness.envs.installer import find_uv

        if find_uv() is None:
            pytest.skip("uv is not installed here")
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))


def _version(python: str, dist: str) -> str:
    probe = f"import importlib.metadata as m; print(m.version({dist!r}))"
    return subprocess.run([python, "-c", probe], capture_output=True, text=True).stdout.strip()


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_an_environment_holds_what_was_uploaded_by_heads_date(installer, tmp_path, monkeypatch):
    """ipython 8.x's tests import ``_pytest.python_api``, which today's pytest no longer has: the
    newest packages break an old release's suite. Limited to HEAD's date, the environment holds
    what its CI installed then (pytest 7.4.3 on 2023-11-14), and keeps holding it."""
    need_index()
    _use(installer, monkeypatch, tmp_path)
    if installer == "pip":
        from harness.envs.installer import _pip_limits_dates

        if not _pip_limits_dates():
            pytest.skip("this pip has no --uploaded-prior-to")
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


DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize(
    ("output", "wanted", "left"),
    [  # the installers' own words (their build logs cut)
        (
            "uv-failed-build-indirect.txt",
            ["requests-kerberos>=0.8.0", "iniconfig"],
            ("requests-kerberos>=0.8.0", "a package it needs does not build here"),
        ),
        (
            "uv-failed-build-direct.txt",
            ["iniconfig", "sklearn"],
            ("sklearn", "does not build here"),
        ),
        (
            "pip-failed-build-direct.txt",
            ["Sklearn>=0", "six"],
            ("Sklearn>=0", "does not build here"),
        ),
        ("uv-failed-build-indirect.txt", ["iniconfig"], None),  # pulled in by nothing asked for
        ("pip-failed-build-direct.txt", ["six"], None),
        (  # pip's summary line alone, as some pip versions end
            "ERROR: Failed to build installable wheels for some pyproject.toml based projects "
            "(gssapi)\n",
            ["gssapi>=1", "six"],
            ("gssapi>=1", "does not build here"),
        ),
    ],
)
def test_what_does_not_build_is_read_from_the_installers_words(output, wanted, left):
    from harness.envs.build import unbuildable

    text = (DATA / output).read_text() if output.endswith(".txt") else output
    assert unbuildable(text, wanted) == left
    assert unbuildable("error: No solution found when resolving dependencies:", wanted) is None


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_a_requirement_that_does_not_build_here_is_left_out_and_said(
    installer, tmp_path, monkeypatch
):
    """keystoneauth's test requirements name requests-kerberos, which needs gssapi (krb5 headers):
    the whole environment failed, so no test ran. A reviewer leaves it out and installs the rest;
    so does the build, and says what it left out (here with a package whose build always fails)."""
    need_index()
    _use(installer, monkeypatch, tmp_path)
    spec = _spec({"requirements-test.txt": b"iniconfig\nsklearn\n"})
    env = ensure_env(spec)
    assert env.left_out == ("sklearn (does not build here)",)
    probe = "import iniconfig, pytest; print('ok')"
    assert (
        subprocess.run([env.python, "-c", probe], capture_output=True, text=True).stdout == "ok\n"
    )
    again = ensure_env(spec)
    assert again.how == "reused" and again.left_out == env.left_out  # kept with the environment
    # results run in it are not those of the same spec built where everything builds
    assert again.fingerprint() == env.fingerprint() != replace(env, left_out=()).fingerprint()


def test_an_environment_is_built_under_the_constraints_the_user_gives(tmp_path, monkeypatch):
    """OpenStack's CI installs under its upper-constraints (a URL in tox.ini, which the harness
    never fetches): keystone's environment of the day paired a pyOpenSSL and a cryptography that
    do not import together. ``--test-constraints FILE`` puts the user's pins under the build."""
    need_index()
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    spec = _spec({"requirements-test.txt": b"iniconfig\n"})
    free = spec.key("3.11.7")
    spec.constraints = ["iniconfig==1.1.1"]
    assert spec.key("3.11.7") != free  # the pins are part of what the environment is
    env = ensure_env(spec)
    assert _version(env.python, "iniconfig") == "1.1.1"


def test_a_constraints_file_that_cannot_be_read_is_one_line_and_exit_2(run_cli, tmp_path):
    code, out, err = run_cli(
        "tests", "a..b", "--source", "main", "--test-constraints", str(tmp_path / "nope.txt")
    )
    assert code == 2 and not out
    assert len(err.strip().splitlines()) == 1 and "nope.txt" in err, err
