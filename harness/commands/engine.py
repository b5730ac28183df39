"""harness engine add|list|check: real engine environments per version, and params checks in them."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from harness.engines import sglang
from harness.engines.params import DEFAULT_VOCAB
from harness.engines.store import EngineStore
from harness.engines.versions import parse_spec
from harness.errors import HarnessError, UsageError
from harness.executors.options import add_executor_arguments, executor_from_args

NAME = "engine"
HELP = "build, list and query real engine environments (sglang) per version"


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="engine_action", metavar="ACTION", parser_class=type(p))
    sub.required = True
    add = sub.add_parser("add", help="build (or reuse) the environment for ENGINE==VERSION")
    add.add_argument("spec", help="e.g. sglang==0.5.18 or sglang==v0.5.18-cu130-runtime")
    add.add_argument(
        "--runtime",
        choices=sglang.RUNTIMES,
        default="params",
        help="params: the sampling module only; cpu: the real engine on the CPU (sgl_kernel "
        "stand-in); gpu: the full distribution, for machines with a GPU",
    )
    add.add_argument("--rebuild", action="store_true", help="build again even when it exists")
    add.add_argument(
        "--from-bundle",
        metavar="DIR",
        default=None,
        help="gpu runtime only: install offline from a `harness engine bundle` folder "
        "(a venv that sees this machine's own torch)",
    )
    bnd = sub.add_parser(
        "bundle", help="download the wheels a gpu engine needs on a machine without an index"
    )
    bnd.add_argument("spec", help="e.g. sglang==0.5.18")
    bnd.add_argument(
        "--runtime", choices=("gpu",), default="gpu", help="the runtime the bundle installs (gpu)"
    )
    bnd.add_argument("--python-version", default="3.12", help="the target's Python (default 3.12)")
    bnd.add_argument(
        "--platform",
        default=None,
        help="the target's newest manylinux tag (default manylinux_2_39_x86_64: Ubuntu 24.04)",
    )
    bnd.add_argument(
        "--target-has",
        metavar="FILE",
        default=None,
        help="name==version lines the target already has (default: the lent H200 image, "
        "harness/engines/targets/h200-cuda13.txt)",
    )
    bnd.add_argument(
        "--out", required=True, metavar="DIR", help="folder to write (must not exist or be empty)"
    )
    bnd.add_argument(
        "--max-size",
        type=float,
        default=None,
        metavar="MIB",
        help="refuse a bundle larger than this many MiB (default 60)",
    )
    bnd.add_argument("--format", choices=("term", "json", "none"), default="term")
    bnd.add_argument("--verbose", action="store_true", help="print each pip step on stderr")
    lst = sub.add_parser("list", help="list built environments with their fingerprints")
    lst.add_argument("--format", choices=("term", "json", "none"), default="term")
    chk = sub.add_parser(
        "check", help="feed sampling params to the real SamplingParams of a version"
    )
    chk.add_argument("spec", help="e.g. sglang==0.5.18")
    chk.add_argument(
        "--params",
        required=True,
        metavar="JSON",
        help="a JSON object of SamplingParams arguments, e.g. '{\"min_new_tokens\": 8}'",
    )
    chk.add_argument(
        "--vocab",
        type=int,
        default=DEFAULT_VOCAB,
        help=f"vocab size for verify() (default {DEFAULT_VOCAB})",
    )
    chk.add_argument("--format", choices=("term", "json", "none"), default="term")
    add_executor_arguments(chk)


def run(args: argparse.Namespace) -> int:
    return {"add": _add, "list": _list, "check": _check, "bundle": _bundle}[args.engine_action](
        args
    )


def _add(args: argparse.Namespace) -> int:
    _, version = parse_spec(args.spec)
    bundle = None
    if getattr(args, "from_bundle", None) is not None:
        if args.runtime != "gpu":
            raise UsageError("--from-bundle needs --runtime gpu")
        from harness.engines.gpu_runtime import check_bundle

        bundle = Path(args.from_bundle)
        check_bundle(bundle, version)
    env, built = sglang.ensure_env(
        version, args.runtime, store=EngineStore(), rebuild=args.rebuild, bundle=bundle
    )
    state = "built" if built else "already built"
    sys.stdout.write(f"{env.key}: {state}\n  path {env.path}\n  fingerprint {env.fingerprint}\n")
    if bundle is not None or "cuda" in env.manifest:
        m = env.manifest
        sys.stdout.write(
            f"  torch {m.get('torch')} cuda {m.get('cuda')} (available: {m.get('cuda_available')})\n"
            f"  stand-ins {', '.join(sorted(m.get('standins', {}))) or 'none'}\n"
        )
    return 0


def _bundle(args: argparse.Namespace) -> int:
    from harness.engines import bundle as bd
    from harness.engines.target import DEFAULT_PLATFORM, make_target

    _, version = parse_spec(args.spec)
    max_mib = bd.DEFAULT_MAX_MIB if args.max_size is None else args.max_size
    if not max_mib > 0:
        raise UsageError("--max-size must be a positive number of MiB")
    target = make_target(
        args.python_version,
        args.platform or DEFAULT_PLATFORM,
        Path(args.target_has) if args.target_has else None,
    )
    out = Path(args.out)
    bd.check_out_dir(out)
    log = sglang._stderr if args.verbose else (lambda msg: None)
    manifest = bd.build_bundle(version, target, out, max_bytes=int(max_mib * bd.MIB), log=log)
    if args.format == "none":
        return 0
    if args.format == "json":
        sys.stdout.write(
            json.dumps(
                {
                    k: manifest[k]
                    for k in ("version", "total_bytes", "max_bytes", "standins", "requirements")
                }
                | {"out": str(out)},
                indent=2,
            )
            + "\n"
        )
        return 0
    roles: dict[str, int] = {}
    for f in manifest["files"]:
        roles[f["role"]] = roles.get(f["role"], 0) + 1
    sys.stdout.write(
        f"sglang=={version} gpu bundle: {manifest['total_bytes'] / bd.MIB:.1f} MiB "
        f"(limit {max_mib:g} MiB), {len(manifest['files'])} files "
        f"({', '.join(f'{n} {r}' for r, n in sorted(roles.items()))}) in {out}\n"
        f"  target   cp{target.abi[2:]} {target.platform}; has {len(target.has)} packages "
        f"({target.has_source})\n"
        f"  left out {len(manifest['left_out'])} (see {out / bd.MANIFEST})\n"
        f"  stand-ins {', '.join(sorted(manifest['standins'])) or 'none'}\n"
    )
    return 0


def _list(args: argparse.Namespace) -> int:
    store = EngineStore()
    rows = [
        {
            "engine": e.key.engine,
            "version": e.key.version,
            "runtime": e.key.runtime,
            "python": e.manifest.get("python", ""),
            "fingerprint": e.fingerprint,
            "packages": len(e.manifest.get("packages", [])),
            "path": str(e.path),
        }
        for e in store.list()
    ]
    if args.format == "none":
        return 0
    if args.format == "json":
        sys.stdout.write(
            json.dumps({"root": str(store.root), "environments": rows}, indent=2) + "\n"
        )
        return 0
    if not rows:
        sys.stdout.write(f"no engine environments under {store.root}\n")
        return 0
    for r in rows:
        sys.stdout.write(
            f"{r['engine']}=={r['version']:<12} {r['runtime']:<7} python {r['python']:<8} "
            f"{r['fingerprint'][:12]}  {r['packages']:>3} packages  {r['path']}\n"
        )
    return 0


def _parse_params(text: str) -> dict[str, Any]:
    try:
        params = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"--params is not valid JSON: {exc}") from None
    except RecursionError:
        raise UsageError("--params is not valid JSON: nested too deep") from None
    if not isinstance(params, dict):
        raise UsageError("--params must be a JSON object of SamplingParams arguments")
    return params


def _check(args: argparse.Namespace) -> int:
    params = _parse_params(args.params)
    _, version = parse_spec(args.spec)
    if args.vocab < 1:
        raise UsageError("--vocab must be a positive integer")
    from harness.engines.remote import check_task

    with executor_from_args(args) as executor:  # on Ray: the environment is built on the worker
        [res] = executor.run([check_task(version, [params], args.vocab)])
    if res.status != "ok" or res.value is None:
        raise HarnessError(res.detail)
    result = res.value
    one = result.outcomes[0]
    doc = {
        "schema": "harness.engine-check/1",
        "engine": "sglang",
        "version": version,
        "params": params,
        "vocab": args.vocab,
        "outcome": one.outcome,
        "stage": one.stage,
        "proof": {
            "version": result.version_proof,
            "module_file": result.module_file,
            "python": result.python,
            "fingerprint": result.fingerprint,
            "ok": result.proof_ok,
        },
    }
    if args.format == "json":
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    elif args.format != "none":
        sys.stdout.write(
            f"{one.outcome}\n"
            f"  engine   sglang=={version} (SamplingParams(**params).normalize(None); verify({args.vocab}))\n"
            f"  stage    {one.stage}\n"
            f"  module   {result.module_file}\n"
            f"  version  {result.version_proof} (importlib.metadata in the environment)\n"
            f"  env      {result.fingerprint[:12]} python {result.python}\n"
        )
    return 0 if result.proof_ok else 3
