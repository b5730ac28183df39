"""The gpu engine tier from bundles: install offline, then the SamplingParams and n>1 tables.

Run through bench/gpu_engine.sh. Two halves:

- GPU (nvidia-smi present, no --cpu-only): for each version, ``harness engine add --runtime gpu
  --from-bundle BUNDLES/sglang-<v>`` on top of the machine's own torch (bundles carried from a
  machine with an index: ``--build-device-bundles`` there), then against the real engine on the GPU
  (tiny dummy-weight Llama): the n>1 questions and min_new_tokens through ``generate`` with no
  tokenizer (skip_tokenizer_init) and, in a second engine start, with a tiny real tokenizer.
- CPU (here): the device bundle is built and its size checked (<= --max-size); a bundle for this
  machine's Python is built with a target list made of a ``cpu`` engine environment's packages
  (base_site.py) and installed offline into a scratch environment on top of that torch; the params
  table (SamplingParams.normalize with no tokenizer / a tiny real tokenizer, verify) runs in it.
  ``--cpu-engine`` also starts the real engine from that environment on the CPU (n>1 + params).
  Without any ``cpu`` environment to lend a torch, the params-level check runs in the ``params``
  runtime instead.

Writes report.json and report.md under $OUT (else --out).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.engines import sglang as sg  # noqa: E402
from harness.engines.base_site import link_base_site  # noqa: E402
from harness.engines.bundle import MIB, build_bundle  # noqa: E402
from harness.engines.gpu_runtime import BASE_SITE_ENV  # noqa: E402
from harness.engines.nprobe import answers, run_n_probe  # noqa: E402
from harness.engines.store import EngineStore, EnvKey  # noqa: E402
from harness.engines.target import DEFAULT_PLATFORM, DEFAULT_TARGET_HAS, make_target  # noqa: E402

CASES = [{"min_new_tokens": 0, "max_new_tokens": 16}, {"min_new_tokens": 8, "max_new_tokens": 16}]
ROWS = ["min_new_tokens=0 (control)", "min_new_tokens=8"]


def log(msg: str) -> None:
    sys.stderr.write(f"[gpu_engine {time.strftime('%H:%M:%S')}] {msg}\n")
    sys.stderr.flush()


def harness(*args: str, env: dict[str, str], timeout: float = 900) -> tuple[float, str]:
    """Run the harness CLI (a real subprocess, as a user would); raise with its stderr on failure."""
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "harness", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if proc.returncode != 0:
        raise RuntimeError(
            f"harness {' '.join(args)} -> {proc.returncode}: {proc.stderr.strip()[-1500:]}"
        )
    return round(time.monotonic() - t0, 1), proc.stdout


def params_table(python: Path) -> dict[str, list[str]]:
    """min_new_tokens rows through SamplingParams of the env: no tokenizer / a tiny real tokenizer."""
    out = {}
    for label, tok in (("no tokenizer", False), ("tokenizer", True)):
        res = sg.run_probe(python, {"vocab": 512, "tokenizer": tok, "cases": CASES})
        out[label] = [r["outcome"] for r in res["results"]]
    return out


def engine_tables(version: str, store: EngineStore, device: str) -> dict[str, Any]:
    """Two real engine starts: skip_tokenizer_init (n>1 + params) and with a tokenizer (params)."""
    t0 = time.monotonic()
    raw = run_n_probe(
        version, runtime="gpu", store=store, device=device, log=log, timeout=420, params_cases=CASES
    )
    t1 = time.monotonic()
    tok = run_n_probe(
        version,
        runtime="gpu",
        store=store,
        device=device,
        log=log,
        timeout=300,
        params_cases=CASES,
        tokenizer=True,
        n_table=False,
    )
    t2 = time.monotonic()
    return {
        "n": answers(raw),
        "n_raw": raw["scenarios"],
        "params": {
            "no tokenizer": [p["outcome"] for p in raw["params"]],
            "tokenizer": [p["outcome"] for p in tok["params"]],
        },
        "startup_s": [raw["startup_s"], tok["startup_s"]],
        "seconds": {
            "engine_no_tokenizer": round(t1 - t0, 1),
            "engine_tokenizer": round(t2 - t1, 1),
        },
    }


def cpu_base_env(version: str) -> Path | None:
    """A ``cpu`` engine environment whose torch the scratch env goes on top of (read-only use)."""
    roots = [
        Path(p)
        for p in (os.environ.get("HARNESS_CPU_ENGINE_DIR"), os.environ.get("HARNESS_ENGINE_DIR"))
        if p
    ]
    for root in roots:
        for name in (f"sglang-{version}-cpu", *sorted(p.name for p in root.glob("sglang-*-cpu"))):
            if (root / name / "harness-env.json").is_file():
                return root / name
    return None


def cpu_half(version: str, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    row: dict[str, Any] = {"version": version, "half": "cpu", "seconds": {}}
    dev_dir = Path(args.bundles) / f"sglang-{version}"
    t0 = time.monotonic()
    if not (dev_dir / "bundle.json").is_file():
        dev_dir.parent.mkdir(parents=True, exist_ok=True)
        build_bundle(
            version,
            make_target("3.12", DEFAULT_PLATFORM, DEFAULT_TARGET_HAS),
            dev_dir,
            max_bytes=int(args.max_size * MIB),
            log=log,
        )
    dev = json.loads((dev_dir / "bundle.json").read_text())
    row["device_bundle"] = {
        "path": str(dev_dir),
        "mib": round(dev["total_bytes"] / MIB, 1),
        "files": len(dev["files"]),
        "standins": sorted(dev["standins"]),
    }
    row["seconds"]["device_bundle"] = round(time.monotonic() - t0, 1)
    base_env = cpu_base_env(version)
    if base_env is None:  # no torch on this machine to install on top of: the params-level check
        log(f"no cpu engine environment for a torch: params runtime for {version}")
        store = EngineStore(work / "engines")
        env, _ = sg.ensure_env(version, "params", store=store, log=log)
        res = sg.run_probe(env.python, {"vocab": 512, "cases": CASES})
        row["params"] = {"no tokenizer": [r["outcome"] for r in res["results"]]}
        row["install"] = "params runtime (no torch here)"
        return row
    base = work / f"base-{version}"
    shutil.rmtree(base, ignore_errors=True)
    site, has = link_base_site(base_env / "bin" / "python", DEFAULT_TARGET_HAS, base)
    pyver = subprocess.run(
        [
            str(base_env / "bin" / "python"),
            "-I",
            "-c",
            "import sys; print('%d.%d' % sys.version_info[:2])",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    local = work / f"bundle-{version}-cp{pyver.replace('.', '')}"
    shutil.rmtree(local, ignore_errors=True)
    env = {
        **os.environ,
        "HARNESS_ENGINE_DIR": str(work / "engines"),
        BASE_SITE_ENV: str(site),
        "HARNESS_ENGINE_PYTHON": str(Path(os.path.realpath(base_env / "bin" / "python"))),
    }
    row["seconds"]["local_bundle"], out = harness(
        "engine",
        "bundle",
        f"sglang=={version}",
        "--python-version",
        pyver,
        "--platform",
        DEFAULT_PLATFORM,
        "--target-has",
        str(has),
        "--out",
        str(local),
        "--max-size",
        str(args.max_size),
        env=env,
    )
    local_m = json.loads((local / "bundle.json").read_text())
    row["local_bundle"] = {
        "mib": round(local_m["total_bytes"] / MIB, 1),
        "files": len(local_m["files"]),
        "python": pyver,
        "base": str(base_env),
        "standins": sorted(local_m["standins"]),
    }
    shutil.rmtree(work / "engines" / f"sglang-{version}-gpu", ignore_errors=True)
    row["seconds"]["install"], out = harness(
        "engine",
        "add",
        f"sglang=={version}",
        "--runtime",
        "gpu",
        "--from-bundle",
        str(local),
        env=env,
    )
    row.update(_installed(version, work))
    t0 = time.monotonic()
    row["params"] = params_table(
        EngineStore(work / "engines").path_for(EnvKey("sglang", version, "gpu")) / "bin" / "python"
    )
    row["seconds"]["params"] = round(time.monotonic() - t0, 1)
    if args.cpu_engine:
        os.environ["HARNESS_ENGINE_DIR"] = str(work / "engines")
        row["engine"] = engine_tables(version, EngineStore(work / "engines"), "cpu")
    return row


def _installed(version: str, work: Path) -> dict[str, Any]:
    m = EngineStore(work / "engines").get(EnvKey("sglang", version, "gpu"))
    assert m is not None
    return {
        "installed": {
            k: m.manifest.get(k)
            for k in ("torch", "cuda", "cuda_available", "gpu", "fingerprint", "standins", "python")
        }
    }


def gpu_half(version: str, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    row: dict[str, Any] = {"version": version, "half": "gpu", "seconds": {}}
    bundle = Path(args.bundles) / f"sglang-{version}"
    env = {**os.environ, "HARNESS_ENGINE_DIR": str(work / "engines")}
    env.pop(BASE_SITE_ENV, None)
    row["seconds"]["install"], _ = harness(
        "engine",
        "add",
        f"sglang=={version}",
        "--runtime",
        "gpu",
        "--from-bundle",
        str(bundle),
        env=env,
    )
    row.update(_installed(version, work))
    py = EngineStore(work / "engines").path_for(EnvKey("sglang", version, "gpu")) / "bin" / "python"
    t0 = time.monotonic()
    row["params"] = params_table(py)
    row["seconds"]["params"] = round(time.monotonic() - t0, 1)
    os.environ["HARNESS_ENGINE_DIR"] = str(work / "engines")
    row["engine"] = engine_tables(version, EngineStore(work / "engines"), "cuda")
    return row


def render(doc: dict[str, Any]) -> str:
    lines = [
        f"# gpu engine tier ({doc['half']} half)",
        "",
        f"{doc['machine']}; {doc['total_s']} s in all.",
        "",
    ]
    for r in doc["rows"]:
        lines.append(f"## sglang {r['version']}")
        if "error" in r:
            lines += ["", f"ERROR: {r['error']}", ""]
            continue
        if "device_bundle" in r:
            d = r["device_bundle"]
            lines.append(
                f"- device bundle (cp312, {DEFAULT_PLATFORM}): {d['mib']} MiB, {d['files']} files, "
                f"stand-ins {', '.join(d['standins'])}"
            )
        if "local_bundle" in r:
            b = r["local_bundle"]
            lines.append(
                f"- bundle for this machine (cp{b['python'].replace('.', '')}, on {b['base']}'s torch): "
                f"{b['mib']} MiB, {b['files']} files"
            )
        if "installed" in r:
            i = r["installed"]
            lines.append(
                f"- installed offline: torch {i['torch']} cuda {i['cuda']} (available: {i['cuda_available']}"
                f"{', ' + i['gpu'] if i.get('gpu') else ''}), fingerprint {str(i['fingerprint'])[:12]}"
            )
        lines.append("- seconds: " + ", ".join(f"{k} {v}" for k, v in r["seconds"].items()))
        lines += [
            "",
            "| params (vocab 512) | " + " | ".join(r["params"]) + " |",
            "|---|" + "---|" * len(r["params"]),
        ]
        for i, row in enumerate(ROWS):
            lines.append(f"| {row} | " + " | ".join(v[i] for v in r["params"].values()) + " |")
        if "engine" in r:
            e = r["engine"]
            lines += [
                "",
                f"engine start {e['startup_s'][0]} s / {e['startup_s'][1]} s (no tokenizer / tokenizer)",
                "",
                "| through the engine's generate | no tokenizer | tokenizer |",
                "|---|---|---|",
            ]
            lines += [
                f"| {row} | {e['params']['no tokenizer'][i]} | {e['params']['tokenizer'][i]} |"
                for i, row in enumerate(ROWS)
            ]
            lines += ["", "| n=2 question | answer |", "|---|---|"]
            lines += [f"| {q} | {a} |" for q, a in e["n"].items()]
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--cpu-only", action="store_true", help="the CPU half even where nvidia-smi exists"
    )
    ap.add_argument(
        "--cpu-engine", action="store_true", help="CPU half: also start the real engine on the CPU"
    )
    ap.add_argument("--versions", default="0.5.18,0.5.22")
    ap.add_argument(
        "--bundles", default=str(ROOT / ".bundles"), help="device bundles: BUNDLES/sglang-<v>"
    )
    ap.add_argument("--work", default=None, help="scratch folder (default: a temporary one)")
    ap.add_argument("--out", default=str(ROOT / "reports" / "gpu-engine"))
    ap.add_argument("--max-size", type=float, default=60.0)
    args = ap.parse_args()
    half = "cpu" if args.cpu_only or shutil.which("nvidia-smi") is None else "gpu"
    out = Path(os.environ.get("OUT") or args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = (
        Path(args.work)
        if args.work
        else Path(os.environ.get("TMPDIR", "/tmp")) / f"harness-gpu-engine-{os.getpid()}"
    )
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    rows = []
    for version in [v.strip() for v in args.versions.split(",") if v.strip()]:
        log(f"{half} half: sglang {version}")
        try:
            rows.append((cpu_half if half == "cpu" else gpu_half)(version, args, work))
        except Exception as exc:  # one version's failure is its row; the other still runs
            rows.append(
                {"version": version, "half": half, "error": f"{type(exc).__name__}: {exc}"[-3000:]}
            )
        log(json.dumps(rows[-1].get("params") or rows[-1].get("error")))
    machine = (
        "no GPU"
        if half == "cpu"
        else subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    doc = {
        "schema": "harness.gpu-engine/1",
        "half": half,
        "machine": machine,
        "total_s": round(time.monotonic() - t0, 1),
        "rows": rows,
    }
    (out / "report.json").write_text(json.dumps(doc, indent=2) + "\n")
    (out / "report.md").write_text(render(doc))
    sys.stdout.write(render(doc))
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
