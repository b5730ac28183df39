"""Which distributions the real engine imports: the measurement behind ``engine_path.LOCKS``.

Runs probes/sglang_n_probe.py (tiny model, the n>1 questions) with the interpreter of an engine
environment, NOT isolated, with a ``sitecustomize`` on PYTHONPATH that every engine process (main,
scheduler, detokenizer: multiprocessing passes the flags and environment on) loads; it writes the
top-level names in ``sys.modules`` of its process every 1.5 s and at exit. The names are then
mapped to distributions with ``importlib.metadata.packages_distributions()`` in that environment.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from harness.engines.sglang import probe_script
from harness.infra import process, workarea

_SITECUSTOMIZE = """
import atexit, json, os, sys, threading, time
_out = os.environ.get("HARNESS_TRACE_OUT")
def _dump():
    with open(os.path.join(_out, "%d.json" % os.getpid()), "w") as fh:
        json.dump(sorted({m.split(".")[0] for m in list(sys.modules)}), fh)
def _loop():
    while True:
        time.sleep(1.5)
        try:
            _dump()
        except Exception:
            pass
if _out:
    threading.Thread(target=_loop, daemon=True).start()
    atexit.register(_dump)
"""
_MAP = (
    "import importlib.metadata as m, json, sys; mods = json.load(sys.stdin); pd = m.packages_distributions();"
    "print(json.dumps({d.lower().replace('_', '-'): m.version(d) for mod in mods for d in pd.get(mod, [])}))"
)


def trace_engine_imports(
    python: Path, request: dict, env: dict[str, str], timeout: float = 900
) -> dict[str, str]:
    """{distribution: version} whose modules any engine process imported while the n probe ran."""
    with workarea.temp_dir("harness-trace-") as tmp:
        site, out = Path(tmp, "site"), Path(tmp, "out")
        site.mkdir()
        out.mkdir()
        (site / "sitecustomize.py").write_text(_SITECUSTOMIZE)
        penv = {**os.environ, **env, "PYTHONPATH": str(site), "HARNESS_TRACE_OUT": str(out)}
        process.run(
            [str(python), str(probe_script("sglang_n_probe.py"))],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            timeout=timeout,
            env=penv,
            check=True,
        )
        mods = sorted({m for f in out.glob("*.json") for m in json.loads(f.read_text())})
    proc = process.run(
        [str(python), "-I", "-c", _MAP],
        input=json.dumps(mods),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return dict(sorted(json.loads(proc.stdout).items()))
