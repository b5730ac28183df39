"""What every run does with files, without the modules that would cost its start-up (issue 42):
the temporary folder found as ``tempfile.gettempdir`` finds it, and a new file made as
``tempfile.mkstemp`` makes it (``harness/infra/workarea.py``, ``harness/infra/atomic.py``)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.infra import atomic

# Each side in a fresh interpreter: ``temp_root`` must answer before tempfile is loaded.
ANSWERS = """
import json, sys
from harness.infra.workarea import temp_root
ours = temp_root()
loaded = "tempfile" in sys.modules
import tempfile
print(json.dumps([ours, tempfile.gettempdir(), loaded]))
"""


def _answers(env: dict[str, str], cwd: Path) -> list[object]:
    out = subprocess.run(
        [sys.executable, "-c", ANSWERS], env=env, cwd=cwd, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize(
    "tmpdir",
    ["unset", "folder", "relative", "missing", "a file", "empty", "TEMP only"],
)
def test_the_temporary_folder_is_the_one_tempfile_finds(tmp_path, tmpdir):
    env = {k: v for k, v in os.environ.items() if k not in ("TMPDIR", "TEMP", "TMP")}
    (tmp_path / "here" / "rel").mkdir(parents=True)
    (tmp_path / "plain").write_text("not a folder\n")
    value = {
        "folder": str(tmp_path / "here"),
        "relative": "rel",
        "missing": str(tmp_path / "gone"),
        "a file": str(tmp_path / "plain"),
        "empty": "",
    }
    if tmpdir in value:
        env["TMPDIR"] = value[tmpdir]
    if tmpdir == "TEMP only":
        env["TEMP"] = str(tmp_path / "here")
    ours, theirs, loaded = _answers(env, tmp_path / "here")
    assert loaded is False  # answered without tempfile
    assert ours == theirs
    if tmpdir in ("folder", "TEMP only"):
        assert ours == str(tmp_path / "here")  # the control: the variable is read at all
    if tmpdir == "relative":
        assert ours == str(tmp_path / "here" / "rel")
    assert not [p for p in (tmp_path / "here").rglob(".harness-*")]  # the probe file is removed


ONE_ANSWER = """
import os, sys
from harness.infra.workarea import temp_root
first = temp_root()
os.environ["TMPDIR"] = sys.argv[1]  # another usable folder, named after the answer was found
import tempfile
print(first, temp_root(), tempfile.gettempdir())
"""


def test_a_process_has_one_temporary_folder_when_tempfile_loads_later(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    env = {**os.environ, "TMPDIR": str(tmp_path / "a")}
    out = subprocess.run(
        [sys.executable, "-c", ONE_ANSWER, str(tmp_path / "b")],
        env=env,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(tmp_path / "a")] * 3


def test_a_new_file_never_takes_an_existing_name_or_follows_a_link(tmp_path, monkeypatch):
    taken = tmp_path / ".tmp-000000000000"
    taken.write_text("kept\n")
    (tmp_path / ".tmp-010101010101").symlink_to(tmp_path / "target")
    draws = iter([b"\x00" * 6, b"\x01" * 6, b"\x02" * 6])
    monkeypatch.setattr(atomic.os, "urandom", lambda n: next(draws))
    fd, name = atomic.create_unique(tmp_path, ".tmp-")
    os.close(fd)
    assert name == str(tmp_path / ".tmp-020202020202")
    assert taken.read_text() == "kept\n" and not (tmp_path / "target").exists()
    assert stat.S_IMODE(os.stat(name).st_mode) == 0o600


def test_an_atomic_write_leaves_only_the_target(tmp_path):
    atomic.write_atomic(tmp_path / "report.json", ["{", "}\n"])
    atomic.write_atomic(tmp_path / "cache.json", b"x", prefix=".tmp-", shared=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache.json", "report.json"]
    assert (tmp_path / "report.json").read_text() == "{}\n"
    assert stat.S_IMODE((tmp_path / "cache.json").stat().st_mode) == 0o600
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((tmp_path / "report.json").stat().st_mode) == 0o666 & ~umask


NOTED = """
import pathlib, sys
from harness.infra import cache
from harness.infra.history_code import kept_code_digest
served, record = kept_code_digest(pathlib.Path(sys.argv[1]))
def refuse(self):
    raise AssertionError(f"read {self}")
pathlib.Path.read_bytes = refuse  # the package's files are not hashed again
print(served, cache.code_digest(), record is None)
"""


def test_the_code_digest_the_index_kept_is_the_section_caches_too(tmp_path):
    from harness.infra.cache import code_digest
    from harness.infra.history_code import kept_code_digest

    digest, record = kept_code_digest(tmp_path)
    for _ in range(6):  # a package file changed within 2 s is not trusted to its stamp yet
        if record is not None:
            break
        time.sleep(0.5)
        digest, record = kept_code_digest(tmp_path)
    assert digest == code_digest() and record is not None  # hashed: nothing kept yet
    (tmp_path / "code.json").write_text(record)
    out = subprocess.run(
        [sys.executable, "-c", NOTED, str(tmp_path)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [digest, digest, "True"]
    # The control: a process that was given no digest must read the files (the probe sees it).
    skipped = NOTED.replace("served, record = kept_code_digest", "served, record = 0, None #")
    out = subprocess.run(
        [sys.executable, "-c", skipped, str(tmp_path)], capture_output=True, text=True
    )
    assert out.returncode != 0 and "AssertionError: read" in out.stderr


KEPT = """
import pathlib, sys
from harness.infra.history_code import kept_code_digest
digest, record = kept_code_digest(pathlib.Path(sys.argv[1]))
if record is not None:
    (pathlib.Path(sys.argv[1]) / "code.json").write_text(record)
print(digest, record is None)
"""


def test_a_file_rewritten_with_its_size_and_time_is_hashed_again(tmp_path):
    """The kept digest is trusted to the files' stamps: a copy that keeps size and mtime over
    the same inode (``cp -p``, ``rsync -a``) still changes the change time, which they hold."""
    import harness

    package = tmp_path / "code" / "harness"
    shutil.copytree(Path(harness.__file__).parent, package, ignore=shutil.ignore_patterns("*.pyc"))
    (tmp_path / "kept").mkdir()
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "code")}

    def kept() -> list[str]:
        out = subprocess.run(
            [sys.executable, "-c", KEPT, str(tmp_path / "kept")],
            env=env,
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert out.returncode == 0, out.stderr
        return out.stdout.split()

    time.sleep(2.1)  # the copy's files are older than git's "racy" 2 s now
    digest, unkept = kept()
    assert unkept == "False" and kept() == [digest, "True"]  # the control: served from the record
    target = package / "errors.py"
    before = target.stat()
    text = target.read_text()
    with open(target, "r+") as fh:  # the same inode, the same size, the mtime put back
        fh.write(text.replace("class", "clas_", 1))
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = target.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino,
        before.st_size,
        before.st_mtime_ns,
    )
    assert kept()[0] != digest
