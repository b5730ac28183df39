"""The interpreter fingerprint kept between runs: served while no ``sys.path`` folder changed,
recomputed when a distribution is installed, and never kept under ``--no-cache``."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.envs.fingerprint import describe, interpreter_fingerprint
from harness.infra.cache import Cache


@pytest.fixture
def venv(tmp_path: Path) -> tuple[str, Path]:
    """A real virtual environment (no pip: nothing to download) and its site-packages folder."""
    root = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = str(root / "bin" / "python")
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return python, Path(site)


def _age(folder: Path, seconds: float) -> None:
    """As if the folder had last changed ``seconds`` ago (a venv made long before the run)."""
    t = time.time() - seconds
    os.utime(folder, (t, t))


def _install(site: Path, name: str, version: str) -> None:
    """What an installer leaves for ``importlib.metadata``: a ``*.dist-info`` folder with METADATA."""
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")


def test_kept_answer_is_served_until_a_distribution_is_installed(venv, tmp_path: Path) -> None:
    python, site = venv
    store = Cache(tmp_path / "cache", namespace="collections")
    _age(site, 100)
    describe.cache_clear()
    first = interpreter_fingerprint(python, store)
    assert any((tmp_path / "cache" / "interpreters").rglob("*.json")), "the answer was not kept"

    describe.cache_clear()
    assert interpreter_fingerprint(python, store) == first
    assert describe.cache_info().misses == 0  # served from the record: no interpreter started

    _install(site, "pinned-plugin", "1.0")
    describe.cache_clear()
    second = interpreter_fingerprint(python, store)
    assert second != first  # a new distribution is a new key
    assert describe.cache_info().misses == 1
    assert second == describe(python)[0]  # and the same answer a fresh process gives


def test_a_folder_changed_just_now_is_kept_with_its_listing(
    venv, tmp_path: Path, monkeypatch
) -> None:
    """An environment just built is described once: its answer is kept with the listing of each
    folder changed within its mtime's resolution, and that listing is compared too."""
    import types

    from harness.envs import fingerprint

    python, site = venv
    _install(site, "fresh", "2.0")  # site-packages changed just now
    # "now" one second after that change, however long describing the interpreter takes
    now = site.stat().st_mtime_ns + 1_000_000_000
    monkeypatch.setattr(fingerprint, "time", types.SimpleNamespace(time_ns=lambda: now))
    store = Cache(tmp_path / "cache", namespace="collections")
    describe.cache_clear()
    first = interpreter_fingerprint(python, store)
    describe.cache_clear()
    assert interpreter_fingerprint(python, store) == first
    assert describe.cache_info().misses == 0  # served: the same stamps, the same listing
    # another distribution within the same tick: the folder's stamp as it was, its listing not
    st = site.stat()
    _install(site, "other", "1.0")
    os.utime(site, ns=(st.st_atime_ns, st.st_mtime_ns))
    describe.cache_clear()
    second = interpreter_fingerprint(python, store)
    assert describe.cache_info().misses == 1
    assert second != first and second == describe(python)[0]


def test_no_cache_keeps_nothing(venv, tmp_path: Path) -> None:
    python, site = venv
    _age(site, 100)
    store = Cache(tmp_path / "cache", namespace="collections", enabled=False)
    assert interpreter_fingerprint(python, store) == interpreter_fingerprint(python)
    assert not (tmp_path / "cache").exists()


def test_a_bare_name_is_the_interpreter_path_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--python python`` means whatever PATH finds: another PATH is another interpreter, never the
    answer kept for the first."""
    found = []
    for name in ("a", "b"):
        root = tmp_path / name
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
        site = next((root / "lib").glob("python3*/site-packages"))
        _install(site, f"only-in-{name}", "1.0")
        _age(site, 100)
        found.append(root / "bin")
    store = Cache(tmp_path / "cache", namespace="collections")
    answers = []
    for bin_dir in found:
        monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
        describe.cache_clear()
        answers.append(interpreter_fingerprint("python", store))
        assert answers[-1] == describe(str(bin_dir / "python"))[0]
    assert answers[0] != answers[1]


def test_the_runtime_fingerprint_does_not_depend_on_the_working_folder(tmp_path) -> None:
    """A driver and a remote worker run in different folders, with different shells: the same
    interpreter must say the same (``python -c`` puts the working folder first on ``sys.path``)."""
    import subprocess
    import sys

    code = (
        "import sys; from harness.probes.column_task import runtime_fingerprint; "
        "print(runtime_fingerprint(sys.executable))"
    )
    import os

    (tmp_path / "extra").mkdir()
    seen = set()
    # the driver's shell may also have a PYTHONPATH entry a worker's lacks (here: an empty folder)
    for cwd, extra in ((tmp_path, ""), ("/", ""), ("/", str(tmp_path / "extra"))):
        env = dict(os.environ)
        if extra:
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [extra, env.get("PYTHONPATH")]))
        proc = subprocess.run(
            [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        seen.add(proc.stdout.strip())
    assert len(seen) == 1 and not seen.pop().startswith("unusable:")
