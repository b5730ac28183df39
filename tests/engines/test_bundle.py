"""gpu bundles: target lists, stand-in wheels, the offline install, the size limit, bad input.

The fast tests need no network (stand-in wheels are built and installed with the real pip,
``--no-index``). The bundle builds download the real wheels from PyPI and skip when it is not
reachable; the offline install on top of a torch runs when a ``cpu`` engine environment exists.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.engines.bundle import MANIFEST, MIB, read_bundle
from harness.engines.standin_wheel import build_standin_wheel
from harness.engines.target import Target, exact_pins, make_target, parse_target_has, required_names
from harness.errors import UsageError
from harness.testing.network import need_index

ENGINES = Path(__file__).resolve().parents[2] / "harness" / "engines"


def test_target_has_lines_and_errors(tmp_path):
    has = parse_target_has(
        "# image\ntorch==2.11.0\nnumpy\n\nTyping_Extensions==4.1  # pinned\n", "t.txt"
    )
    assert has == {"torch": "2.11.0", "numpy": None, "typing-extensions": "4.1"}
    with pytest.raises(UsageError, match=r"t.txt:2: expected name==version"):
        parse_target_has("torch==2\ntorch>=2\n", "t.txt")
    with pytest.raises(UsageError, match="cannot read"):
        make_target("3.12", "manylinux_2_39_x86_64", tmp_path / "missing.txt")
    default = make_target("3.12", "manylinux_2_39_x86_64", None)
    assert (
        default.has["torch"] == "2.11.0"
        and default.has["triton"] == "3.6.0"
        and "xgrammar" not in default.has
    )


def test_platform_tags_never_newer_than_asked():
    tags = Target("3.12", "manylinux_2_28_x86_64").platform_tags
    assert (
        tags[0] == "manylinux_2_28_x86_64"
        and "manylinux_2_17_x86_64" in tags
        and "manylinux2014_x86_64" in tags
    )
    assert "manylinux_2_34_x86_64" not in tags
    with pytest.raises(UsageError):
        make_target("3.12", "linux_x86_64", None)


def test_pins_and_markers():
    reqs = [
        "transformers==5.12.1",
        "torch (==2.13.0)",
        "numpy",
        "flashinfer_python[cu13]==0.6.17",
        "pytest==8; extra == 'test'",
        'av==16.1.0; platform_machine == "aarch64"',
        "x>=1,==2",
    ]
    assert exact_pins(reqs) == {
        "transformers": "5.12.1",
        "torch": "2.13.0",
        "flashinfer-python": "0.6.17",
        "av": "16.1.0",
    }
    assert required_names(reqs, Target("3.12", "manylinux_2_39_x86_64")) == [
        "transformers",
        "torch",
        "numpy",
        "flashinfer-python",
        "x",
    ]


def test_standin_wheel_installs_offline_and_raises_when_called(tmp_path):
    (tmp_path / "a").mkdir()
    first = build_standin_wheel("sgl_kernel", tmp_path / "a", "sglang-kernel")
    again = build_standin_wheel("sgl_kernel", tmp_path, "sglang-kernel")
    assert first.read_bytes() == again.read_bytes()  # deterministic bytes, stable sha256
    build_standin_wheel("xgrammar", tmp_path, "xgrammar", ENGINES / "standin_module.py")
    site = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            "--no-index",
            "--find-links",
            str(tmp_path),
            "--no-deps",
            "--target",
            str(site),
            "harness-standin-sgl-kernel==0.0.0",
            "harness-standin-xgrammar",
        ],
        check=True,
        timeout=120,
    )
    code = (
        "import importlib.metadata as m, sys\n"
        "from sgl_kernel import rmsnorm\n"
        "from xgrammar.structural_tag import AnyTextFormat\n"
        "class Sub(AnyTextFormat): pass\n"
        "out = [m.version('harness-standin-sgl-kernel')]\n"
        "try: m.version('sglang-kernel')\n"
        "except m.PackageNotFoundError: out.append('no sglang-kernel')\n"
        "for f in (rmsnorm, AnyTextFormat):\n"
        "    try: f()\n"
        "    except NotImplementedError as e: out.append(str(e))\n"
        "print('|'.join(out))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(site)!r})\n" + code],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().split("|") == [
        "0.0.0",
        "no sglang-kernel",
        "sgl_kernel.rmsnorm is a harness stand-in (the real package is not installed)",
        "xgrammar.structural_tag.AnyTextFormat is a harness stand-in (the real package is not installed)",
    ]


def _with_pydantic() -> str | None:
    """An interpreter that has pydantic: this one, else an engine environment's."""
    roots = [os.environ.get(k) for k in ("HARNESS_CPU_ENGINE_DIR", "HARNESS_ENGINE_DIR")]
    for python in [
        sys.executable,
        *(str(p) for r in roots if r for p in sorted(Path(r).glob("sglang-*/bin/python"))),
    ]:
        if (
            subprocess.run(
                [python, "-c", "import pydantic"], capture_output=True, timeout=60
            ).returncode
            == 0
        ):
            return python
    return None


def test_standin_module_is_any_to_pydantic(tmp_path):
    python = _with_pydantic()
    if python is None:
        pytest.skip("no interpreter with pydantic here (nor an engine environment)")
    pkg = tmp_path / "xgrammar"
    pkg.mkdir()
    (pkg / "__init__.py").write_text((ENGINES / "standin_module.py").read_text())
    code = (
        "from typing import Optional, Union\nimport pydantic\nfrom xgrammar import StructuralTag\n"
        "class M(pydantic.BaseModel):\n    t: Optional[Union[int, StructuralTag]] = None\n"
        "print(M(t=3).t, bool(StructuralTag))\n"
    )
    proc = subprocess.run(
        [python, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["3", "False"]


def _one_line_exit_2(run_cli, *argv: str) -> str:
    code, out, err = run_cli(*argv)
    assert code == 2 and out == "", (code, out, err)
    assert len(err.strip().splitlines()) == 1
    return err


@pytest.mark.parametrize(
    "extra,needle",
    [
        (["--python-version", "3"], "--python-version"),
        (["--platform", "win_amd64"], "--platform"),
        (["--max-size", "0"], "--max-size"),
        (["--target-has", "/nonexistent/has.txt"], "cannot read"),
    ],
)
def test_bundle_bad_input_writes_nothing(run_cli, tmp_path, extra, needle):
    out = tmp_path / "bundle"
    err = _one_line_exit_2(run_cli, "engine", "bundle", "sglang==0.5.18", "--out", str(out), *extra)
    assert needle in err
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_bundle_refuses_a_non_empty_out_and_a_bad_spec(run_cli, tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    assert "not an empty folder" in _one_line_exit_2(
        run_cli, "engine", "bundle", "sglang==0.5.18", "--out", str(tmp_path / "full")
    )
    _one_line_exit_2(run_cli, "engine", "bundle", "sglang>=0.5", "--out", str(tmp_path / "b"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full"]


def _fake_bundle(folder: Path, version: str = "0.5.18") -> Path:
    folder.mkdir()
    wheel = build_standin_wheel("sgl_kernel", folder, "sglang-kernel")
    entry = {
        "file": wheel.name,
        "size": wheel.stat().st_size,
        "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
    }
    (folder / MANIFEST).write_text(
        json.dumps(
            {
                "schema": "harness.engine-bundle/1",
                "version": version,
                "files": [entry],
                "target": {"python_version": "{}.{}".format(*sys.version_info[:2])},
            }
        )
    )
    return wheel


def test_from_bundle_refuses_bad_bundles_before_building(run_cli, tmp_path, monkeypatch):
    store = tmp_path / "engines"
    monkeypatch.setenv("HARNESS_ENGINE_DIR", str(store))
    assert "needs --runtime gpu" in _one_line_exit_2(
        run_cli, "engine", "add", "sglang==0.5.18", "--from-bundle", str(tmp_path)
    )
    assert "no readable bundle.json" in _one_line_exit_2(
        run_cli,
        "engine",
        "add",
        "sglang==0.5.18",
        "--runtime",
        "gpu",
        "--from-bundle",
        str(tmp_path),
    )
    wheel = _fake_bundle(tmp_path / "b")
    assert "not 0.5.22" in _one_line_exit_2(
        run_cli,
        "engine",
        "add",
        "sglang==0.5.22",
        "--runtime",
        "gpu",
        "--from-bundle",
        str(tmp_path / "b"),
    )
    read_bundle(tmp_path / "b", "0.5.18")  # intact: accepted
    wheel.write_bytes(wheel.read_bytes() + b"x")
    assert "differs from bundle.json" in _one_line_exit_2(
        run_cli,
        "engine",
        "add",
        "sglang==0.5.18",
        "--runtime",
        "gpu",
        "--from-bundle",
        str(tmp_path / "b"),
    )
    assert not store.exists()  # nothing built for bad input


@pytest.fixture(scope="module")
def device_bundles(tmp_path_factory):
    need_index()
    from harness.engines.bundle import build_bundle

    root = tmp_path_factory.mktemp("bundles")
    target = make_target("3.12", "manylinux_2_39_x86_64", None)
    return {
        v: build_bundle(v, target, root / v, max_bytes=60 * MIB, log=lambda m: None)
        | {"dir": root / v}
        for v in ("0.5.18", "0.5.22")
    }


@pytest.mark.slow
@pytest.mark.engine
@pytest.mark.parametrize("version", ["0.5.18", "0.5.22"])
def test_device_bundle_fits_60_mib(device_bundles, version, capsys):
    m = device_bundles[version]
    folder = m["dir"]
    on_disk = sum(p.stat().st_size for p in folder.iterdir())
    with capsys.disabled():
        print(
            f"\nsglang {version} gpu bundle (cp312, H200 image): {on_disk / MIB:.1f} MiB, {len(m['files'])} files, "
            f"stand-ins {sorted(m['standins'])}"
        )
    assert on_disk == m["total_bytes"] <= 60 * MIB
    assert read_bundle(folder, version)["version"] == version  # every file matches its sha256
    names = {f["name"] for f in m["files"]}
    assert "sglang" in names and "torch" not in names and "numpy" not in names
    left = {x["name"]: x["reason"] for x in m["left_out"]}
    assert "target has torch==2.11.0, sglang pins ==" in left["torch"]
    assert "harness-standin-sgl-kernel" in names and "MiB wheel" in m["standins"]["sgl_kernel"]
    assert m["engine_env"]["SGLANG_SKIP_SGL_KERNEL_VERSION_CHECK"] == "1"
    assert m["engine_kwargs"]["attention_backend"] == "torch_native"
    assert all(x in left for x in ("mistral-common", "zstandard"))  # optional: never shipped
    why = {f["name"]: f.get("why", "") for f in m["files"]}
    if (
        version == "0.5.18"
    ):  # the image's tokenizers 0.23.2 is refused by the transformers 0.5.18 pins
        assert (
            "transformers 5.12.1 requires tokenizers<=0.23.0,>=0.22.0: shipped the traced 0.22.2"
            in why["tokenizers"]
        )
        assert "xgrammar" in m["standins"]  # 42.6 MiB: does not fit
    else:
        assert (
            "tokenizers" not in names and "xgrammar" in names
        )  # 0.23.2 is what 0.5.22 pins; xgrammar 0.2.7 fits


@pytest.mark.slow
def test_bundle_over_max_size_is_refused(run_cli, tmp_path):
    need_index()
    err = _one_line_exit_2(
        run_cli,
        "engine",
        "bundle",
        "sglang==0.5.18",
        "--out",
        str(tmp_path / "b"),
        "--max-size",
        "20",
    )
    assert "over --max-size 20 MiB: nothing written" in err
    assert list(tmp_path.iterdir()) == []


def _cpu_env() -> Path | None:
    for root in (os.environ.get("HARNESS_CPU_ENGINE_DIR"), os.environ.get("HARNESS_ENGINE_DIR")):
        if root and (Path(root) / "sglang-0.5.18-cpu" / "harness-env.json").is_file():
            return Path(root) / "sglang-0.5.18-cpu"
    return None


@pytest.mark.slow
@pytest.mark.engine
def test_offline_install_on_a_cpu_torch_answers_the_params_table(run_cli, tmp_path, monkeypatch):
    need_index()
    cpu = _cpu_env()
    if cpu is None:
        pytest.skip(
            "no sglang-0.5.18-cpu environment in $HARNESS_CPU_ENGINE_DIR/$HARNESS_ENGINE_DIR to lend a torch"
        )
    from harness.engines import sglang as sg
    from harness.engines.base_site import link_base_site
    from harness.engines.target import DEFAULT_TARGET_HAS

    site, has = link_base_site(cpu / "bin" / "python", DEFAULT_TARGET_HAS, tmp_path / "base")
    pyver = "{}.{}".format(
        *tuple(
            json.loads(
                subprocess.run(
                    [
                        str(cpu / "bin" / "python"),
                        "-c",
                        "import sys, json; print(json.dumps(sys.version_info[:2]))",
                    ],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
            )
        )
    )
    code, out, err = run_cli(
        "engine",
        "bundle",
        "sglang==0.5.18",
        "--python-version",
        pyver,
        "--target-has",
        str(has),
        "--out",
        str(tmp_path / "b"),
    )
    assert code == 0, err
    monkeypatch.setenv("HARNESS_ENGINE_DIR", str(tmp_path / "engines"))
    monkeypatch.setenv("HARNESS_ENGINE_BASE_SITE", str(site))
    monkeypatch.setenv("HARNESS_ENGINE_PYTHON", os.path.realpath(cpu / "bin" / "python"))
    monkeypatch.setenv(
        "PIP_INDEX_URL", "http://127.0.0.1:9/"
    )  # offline: any index access would fail
    code, out, err = run_cli(
        "engine", "add", "sglang==0.5.18", "--runtime", "gpu", "--from-bundle", str(tmp_path / "b")
    )
    assert code == 0, err
    assert "torch 2." in out and "stand-ins flashinfer, sgl_kernel, xgrammar" in out
    env = json.loads((tmp_path / "engines" / "sglang-0.5.18-gpu" / "harness-env.json").read_text())
    assert env["torch"].startswith("2.") and env["cuda_available"] is False
    assert env["bundle"]["sha256"] and env["site_under"] == [str(site)]
    res = sg.run_probe(
        tmp_path / "engines" / "sglang-0.5.18-gpu" / "bin" / "python",
        {"vocab": 512, "tokenizer": True, "cases": [{"min_new_tokens": 8, "max_new_tokens": 16}]},
    )
    assert (
        res["results"][0]["outcome"] == "ACCEPTED"
    )  # with a real tokenizer min_new_tokens is fine
    res = sg.run_probe(
        tmp_path / "engines" / "sglang-0.5.18-gpu" / "bin" / "python",
        {"vocab": 512, "cases": [{"min_new_tokens": 8, "max_new_tokens": 16}]},
    )
    assert res["results"][0]["outcome"].startswith("ValueError: min_new_tokens=8 is unavailable")


@pytest.mark.slow
def test_no_wheel_for_the_target_or_no_release_is_one_line(run_cli, tmp_path):
    need_index()
    err = _one_line_exit_2(
        run_cli,
        "engine",
        "bundle",
        "sglang==0.5.18",
        "--platform",
        "manylinux_2_28_x86_64",
        "--out",
        str(tmp_path / "b"),
    )
    assert (
        "no wheel for cp312 on manylinux_2_28_x86_64 or older" in err
        and "manylinux_2_34_x86_64" in err
    )
    err = _one_line_exit_2(
        run_cli, "engine", "bundle", "sglang==9.9.9", "--out", str(tmp_path / "b")
    )
    assert "the index has no wheel of that version" in err
    assert list(tmp_path.iterdir()) == []
