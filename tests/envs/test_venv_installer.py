"""Environments made and filled for real through ``harness/envs/``: a venv from each installer, an
offline install from a folder of wheels, another interpreter's site folders layered under a venv,
and a build step that fails saying which step and what it printed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.engines.standin_wheel import build_standin_wheel
from harness.envs import installer, venv
from harness.envs.fingerprint import describe_env
from harness.envs.step import EnvError, run_step
from harness.infra import process

INSTALLERS = ["pip", "uv"]


def _using(name: str) -> installer.Installer:
    if name == "pip":
        return installer.PIP
    uv = installer.find_uv()
    if uv is None:
        pytest.skip("uv is not installed here")
    return installer.Installer("uv", uv)


def _imports(python: Path, module: str) -> bool:
    return (
        subprocess.run([str(python), "-c", f"import {module}"], capture_output=True).returncode == 0
    )


@pytest.mark.parametrize("name", INSTALLERS)
def test_a_venv_is_filled_offline_from_a_folder_of_wheels(name, tmp_path):
    using = _using(name)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    build_standin_wheel("sgl_kernel", wheels, "sglang-kernel")
    logged: list[str] = []
    python = venv.create(tmp_path / "env", sys.executable, using=using, log=logged.append)
    assert python == venv.python_in(tmp_path / "env") and python.exists()
    before = describe_env(python)
    assert not _imports(python, "sgl_kernel")
    installer.install_offline(
        python, wheels, ["harness-standin-sgl-kernel==0.0.0"], using=using, log=logged.append
    )
    assert _imports(python, "sgl_kernel")
    after = describe_env(python)
    assert "harness-standin-sgl-kernel==0.0.0" in after["packages"]
    assert after["fingerprint"] != before["fingerprint"]  # what is installed is the fingerprint
    assert after["python"] == ".".join(map(str, sys.version_info[:3]))
    assert [line.split()[1] for line in logged] == [
        using.venv_argv(sys.executable, tmp_path / "env")[0],
        using.install_argv(python, [])[0],
    ]  # each step said before it ran
    assert (venv.site_packages(python) / "sgl_kernel" / "__init__.py").is_file()


def test_pip_venv_without_pip_has_none_and_with_pip_has_it(tmp_path):
    bare = venv.create(tmp_path / "bare", sys.executable, using=installer.PIP)
    assert not _imports(bare, "pip")  # the harness's own pip installs into it
    full = venv.create(tmp_path / "full", sys.executable, using=installer.PIP, with_pip=True)
    assert _imports(full, "pip")


def test_a_venv_sees_site_folders_layered_under_it(tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    build_standin_wheel("sgl_kernel", wheels, "sglang-kernel")
    lower = venv.create(tmp_path / "lower", sys.executable, using=installer.PIP)
    installer.install_offline(lower, wheels, ["harness-standin-sgl-kernel"], using=installer.PIP)
    upper = venv.create(tmp_path / "upper", sys.executable, using=installer.PIP)
    assert not _imports(upper, "sgl_kernel")
    sites = venv.site_dirs(str(lower))
    assert str(venv.site_packages(lower)) in sites
    venv.add_site_dirs(upper, sites)
    assert _imports(upper, "sgl_kernel")  # found in the layered folder, after its own
    seen = venv.site_dirs(str(upper))
    assert seen.index(str(venv.site_packages(upper))) < seen.index(str(venv.site_packages(lower)))


def test_the_installer_choice_honours_harness_env_installer(monkeypatch):
    monkeypatch.setenv(installer.INSTALLER_ENV, "pip")
    assert installer.choose() == installer.PIP and installer.find_uv() is None
    monkeypatch.delenv(installer.INSTALLER_ENV)
    found = installer.find_uv()
    assert installer.choose() == (installer.Installer("uv", found) if found else installer.PIP)


def test_a_failing_step_says_which_step_and_keeps_its_output(tmp_path):
    wheels = tmp_path / "empty"
    wheels.mkdir()
    python = venv.create(tmp_path / "env", sys.executable, using=installer.PIP)
    with pytest.raises(EnvError) as caught:
        installer.install_offline(python, wheels, ["no-such-dist-xyz"], using=installer.PIP)
    exc = caught.value
    assert str(exc).startswith("pip install exited 1: ") and "\n" not in str(exc)
    assert "No matching distribution found for no-such-dist-xyz" in exc.output
    assert exc.returncode == 1 and exc.argv[:4] == [sys.executable, *process.SAFE_PATH, "-m", "pip"]
    assert exc.tail(1) == exc.output.strip().splitlines()[-1]


def test_a_step_past_its_time_or_that_cannot_start_is_an_env_error(tmp_path):
    with pytest.raises(EnvError, match=r"^sleeper: ran past 1s$") as late:
        run_step([sys.executable, "-c", "import time; time.sleep(30)"], "sleeper", timeout=1)
    assert late.value.returncode is None
    with pytest.raises(EnvError, match=r"^missing: ") as absent:
        run_step([str(tmp_path / "no-such-program")], "missing", timeout=10)
    assert absent.value.returncode is None


def _failing_sdist(wheels: Path) -> None:
    """``b-0.1.tar.gz``, whose in-tree build backend fails as a package needing a system library
    does (gssapi without krb5-config), and a wheel of ``a``, which depends on ``b``."""
    import io
    import tarfile
    import zipfile

    backend = (
        "import sys\n\n\ndef get_requires_for_build_wheel(config_settings=None):\n"
        "    sys.stderr.write('/bin/sh: 1: krb5-config: not found\\n')\n"
        "    raise RuntimeError(\"Command 'krb5-config --libs gssapi' returned 127\")\n\n\n"
        "get_requires_for_build_sdist = get_requires_for_build_wheel\n"
        "build_wheel = build_sdist = get_requires_for_build_wheel\n"
    )
    files = {
        "b-0.1/pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "broken"\n'
        'backend-path = ["."]\n\n[project]\nname = "b"\nversion = "0.1"\n',
        "b-0.1/broken.py": backend,
        "b-0.1/PKG-INFO": "Metadata-Version: 2.1\nName: b\nVersion: 0.1\n",
    }
    with tarfile.open(wheels / "b-0.1.tar.gz", "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    meta = "Metadata-Version: 2.1\nName: a\nVersion: 0.1\nRequires-Dist: b\n"
    wheel = "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    with zipfile.ZipFile(wheels / "a-0.1-py3-none-any.whl", "w") as zf:
        zf.writestr("a/__init__.py", "")
        zf.writestr("a-0.1.dist-info/METADATA", meta)
        zf.writestr("a-0.1.dist-info/WHEEL", wheel)
        zf.writestr("a-0.1.dist-info/RECORD", "")


@pytest.mark.parametrize("name", INSTALLERS)
def test_a_package_that_fails_to_build_is_named_not_the_installers_last_hint(name, tmp_path):
    """keystoneauth's test requirements on a machine without Kerberos headers: uv's last line is a
    generic hint ("Build failures usually indicate a problem with the package or the build
    environment"); the one line says which package failed and, from uv, why it was wanted."""
    using = _using(name)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    _failing_sdist(wheels)
    python = venv.create(tmp_path / "env", sys.executable, using=using)
    with pytest.raises(EnvError) as caught:
        installer.install(python, ["--no-index", "--find-links", str(wheels), "a"], using=using)
    said, last = str(caught.value), caught.value.output.strip().splitlines()[-1].strip()
    assert "\n" not in said
    if name == "uv":
        assert last.startswith("hint: Build failures usually") and last not in said
        assert said.startswith("uv pip install exited 1: error: Failed to build `b==0.1`")
        assert "`b` (v0.1) was included because `a` (v0.1) depends on `b`" in said
    else:  # pip ends on its own error line: that one
        assert said == f"pip install exited 1: {last}" and last.startswith(
            "ERROR: Failed to build 'b'"
        )
