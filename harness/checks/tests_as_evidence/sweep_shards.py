"""mutmut's runs: its ``[tool.mutmut]`` table written into the copy, the launcher that wraps its
pytest call (modules of the tree's packages loaded from elsewhere leave ``sys.modules``; where each
changed file's module was imported from is the module path proof), one shard's run in a fresh copy
of the head's tree (an executor task), and, with several shards, the mutant names split over them
and their verdicts merged as mutmut's own."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from harness.checks.tests_as_evidence.pytest_run import mutmut_env, output_text, run_in_tree
from harness.checks.tests_as_evidence.sweep_results import ChangedFunction, mutant_order
from harness.errors import HarnessError
from harness.infra import process, treefiles, workarea

# mutmut runs pytest inside its own process, where mutmut's own dependencies are already imported
# (click, for one): a project that is one of them would test that installed copy, not its tree. The
# launcher wraps mutmut's pytest call: before it, modules of the tree's top-level packages that were
# loaded from elsewhere leave sys.modules (mutmut keeps its references; the tests import the tree's
# mutated copy, which mutmut put first on sys.path); after the first call, where each changed file's
# module was imported from is written down (the module path proof), once for the whole run.
_RUN_MUTMUT = """import json, os, sys
import mutmut.__main__ as mm
TREE = os.path.realpath(os.getcwd())
MUTANTS = os.path.join(TREE, "mutants")
PACKAGES = json.loads(os.environ.get("HARNESS_SWEEP_PACKAGES", "[]"))
CHANGED = json.loads(os.environ.get("HARNESS_SWEEP_CHANGED", "[]"))
PROOF = os.environ.get("HARNESS_SWEEP_PROOF", "")
def _inside(f):
    return f is not None and os.path.realpath(f).startswith(MUTANTS + os.sep)
def _purge():
    for name in list(sys.modules):
        if name.split(".")[0] in PACKAGES and not _inside(getattr(sys.modules[name], "__file__", None)):
            del sys.modules[name]
def _prove():
    if not PROOF:
        return
    files = {}
    for m in list(sys.modules.values()):
        f = getattr(m, "__file__", None)
        if f:
            files.setdefault(os.path.realpath(f), m.__name__)
    proof = {}
    for rel in CHANGED:
        want = os.path.join(MUTANTS, rel)
        parts = rel[:-3].split("/")
        if parts[-1] == "__init__":
            parts.pop()
        if want in files:
            proof[rel] = {"status": "in tree", "module": files[want], "file": "mutants/" + rel}
            continue
        proof[rel] = {"status": "not imported", "module": None, "file": None}
        for i in range(len(parts)):
            mod = sys.modules.get(".".join(parts[i:]))
            f = getattr(mod, "__file__", None) if mod else None
            if f:
                proof[rel] = {"status": "shadowed", "module": ".".join(parts[i:]), "file": os.path.realpath(f)}
                break
    try:
        fd = os.open(PROOF, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    with os.fdopen(fd, "w") as fh:
        json.dump(proof, fh, sort_keys=True)
_execute = mm.PytestRunner.execute_pytest
def execute_pytest(self, params, **kwargs):
    _purge()
    try:
        return _execute(self, params, **kwargs)
    finally:
        _prove()
mm.PytestRunner.execute_pytest = execute_pytest
sys.argv[0] = "mutmut"
sys.exit(mm.cli())
"""


def mutmut_config(
    functions: Sequence[ChangedFunction],
    tests: Sequence[str],
    marker: str | None,
    source_paths: Sequence[str],
) -> dict:
    paths = sorted({f.path for f in functions})
    roots = list(source_paths) or sorted({PurePosixPath(p).parts[0] for p in paths})
    cfg: dict = {"source_paths": roots, "only_mutate": paths}
    if tests:
        cfg["pytest_add_cli_args_test_selection"] = list(tests)
    if marker:
        cfg["pytest_add_cli_args"] = ["-m", marker]
    return cfg


def _toml_value(v: object) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(json.dumps(x) for x in v) + "]"
    return json.dumps(v)


def write_mutmut_config(tree_dir: Path, cfg: dict) -> None:
    """Replace any ``[tool.mutmut]`` table of the copy's pyproject.toml with ours."""
    data = treefiles.read_if_present(
        tree_dir, "pyproject.toml"
    )  # a link or a folder: TreePathError
    text = data.decode("utf-8", "surrogateescape") if data is not None else ""
    text = re.sub(r"(?ms)^\[tool\.mutmut\]\s*$.*?(?=^\[|\Z)", "", text)
    table = "\n[tool.mutmut]\n" + "".join(f"{k} = {_toml_value(v)}\n" for k, v in cfg.items())
    treefiles.write(
        tree_dir,
        "pyproject.toml",
        (text.rstrip("\n") + "\n" + table).encode("utf-8", "surrogateescape"),
    )


@dataclass
class ShardResult:
    """One mutmut run: its exit code (None: past the timeout), output, and per changed file the
    mutants source and mutmut's ``exit_code_by_key``."""

    exit_code: int | None
    output: str
    codes: dict[str, dict[str, int | None]] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    proofs: dict[str, dict[str, Any]] = field(default_factory=dict)  # changed file → imported from


def tree_packages(tree_dir: Path, roots: Sequence[str]) -> list[str]:
    """Top-level module names the tree's source roots define (``src/click`` → ``click``): the names
    whose installed copies must not stand in for the tree's during mutmut's runs."""
    names: set[str] = set()
    for root in roots:
        folder = tree_dir / root
        if folder.is_symlink() or not folder.is_dir():
            continue
        for entry in folder.iterdir():
            stem = entry.name[:-3] if entry.name.endswith(".py") else entry.name
            if stem.isidentifier() and (entry.suffix == ".py" or (entry / "__init__.py").exists()):
                names.add(stem)
    return sorted(names)


def sweep_shard(
    tree: Any, cfg: dict, names: list[str], python: str, max_children: int | None, timeout: float
) -> ShardResult:
    """``mutmut run NAMES`` in a fresh copy of the head's tree (an executor task)."""
    with tree.open() as mat:
        tree_dir = Path(mat.path)
        write_mutmut_config(tree_dir, cfg)
        env = mutmut_env(tree_dir, drop_addopts=True)
        changed = list(cfg.get("only_mutate", []))
        env["HARNESS_SWEEP_PACKAGES"] = json.dumps(
            tree_packages(tree_dir, cfg.get("source_paths", []))
        )
        env["HARNESS_SWEEP_CHANGED"] = json.dumps(changed)
        argv = [python, "-c", _RUN_MUTMUT, "run"]
        if max_children:
            argv += ["--max-children", str(max_children)]
        with workarea.temp_dir("harness-sweep-proof-") as proof_dir:
            proof = Path(proof_dir) / "proof.json"
            env["HARNESS_SWEEP_PROOF"] = str(proof)
            try:
                proc = run_in_tree(argv + list(names), tree_dir, env, timeout)
            except process.TimeoutExpired as exc:
                out = ((exc.stdout or b"") + (exc.stderr or b"")).decode("utf-8", "replace")
                return ShardResult(None, strip_spinner(out))
            shard = ShardResult(proc.returncode, strip_spinner(output_text(proc)))
            try:
                shard.proofs = json.loads(proof.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                shard.proofs = {}
        for path in cfg.get("only_mutate", []):
            meta, mfile = tree_dir / "mutants" / (path + ".meta"), tree_dir / "mutants" / path
            if meta.exists() and mfile.exists():
                shard.codes[path] = json.loads(meta.read_text(encoding="utf-8")).get(
                    "exit_code_by_key", {}
                )
                shard.sources[path] = mfile.read_text(encoding="utf-8")
        return shard


_GENERATE = """import os, sys
import mutmut.__main__ as m
m.set_mutant_under_test("mutant_generation")
os.makedirs("mutants", exist_ok=True)
m.copy_src_dir(); m.copy_also_copy_files(); m.setup_source_paths(); m.store_lines_covered_by_tests()
m.create_mutants(1)
"""


def generate_names(tree_dir: Path, python: str, functions: Sequence[ChangedFunction]) -> list[str]:
    """The mutant names mutmut gives the changed functions (its own generation step, no test run),
    in mutmut's order; the generated files are removed again."""
    env = mutmut_env(tree_dir, drop_addopts=False)
    proc = run_in_tree([python, "-c", _GENERATE], tree_dir, env, 600)
    if proc.returncode != 0:
        tail = output_text(proc).strip().splitlines()
        raise HarnessError(
            f"mutmut could not generate mutants: {tail[-1] if tail else proc.returncode}"
        )
    wanted = {(f.path, f.mangled) for f in functions}
    names: list[str] = []
    for path in sorted({f.path for f in functions}):
        meta = tree_dir / "mutants" / (path + ".meta")
        if meta.exists():
            keys = json.loads(meta.read_text(encoding="utf-8")).get("exit_code_by_key", {})
            names += [
                k
                for k in sorted(keys, key=mutant_order)
                if (path, k.rsplit(".", 1)[-1].rsplit("__mutmut_", 1)[0]) in wanted
            ]
    shutil.rmtree(tree_dir / "mutants", ignore_errors=True)
    return names


def split_names(names: Sequence[str], n: int) -> list[list[str]]:
    """``n`` shards (fewer when there are fewer mutants), round robin so each function spreads out."""
    n = max(1, min(n, len(names)))
    return [list(names[i::n]) for i in range(n)] if names else [[]]


def merge_shards(
    tree_dir: Path, shards: Sequence[ShardResult], lists: list[list[str]] | None
) -> None:
    """Write mutmut's files into ``tree_dir/mutants``: the first shard's mutants source and, per
    mutant, the exit code from the shard that ran it (``lists``: the names each shard ran)."""
    if not shards:
        return
    first = shards[0]
    for path, source in first.sources.items():
        codes = dict(first.codes.get(path, {}))
        if lists is not None:
            for shard, names in zip(shards, lists, strict=False):
                for name in names:
                    if name in shard.codes.get(path, {}):
                        codes[name] = shard.codes[path][name]
        # mutants/ is ours (mutmut's output), but a reviewed tree could ship a link there: never written through
        folder = tree_dir
        for part in PurePosixPath(
            "mutants", path
        ).parent.parts:  # each folder made here, none a link
            folder = folder / part
            if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
                raise treefiles.TreePathError(
                    f"{folder.relative_to(tree_dir)}: not a real folder in the tree"
                )
            folder.mkdir(exist_ok=True)
        treefiles.write(tree_dir, f"mutants/{path}", source.encode("utf-8", "surrogateescape"))
        treefiles.write(
            tree_dir, f"mutants/{path}.meta", json.dumps({"exit_code_by_key": codes}).encode()
        )


def strip_spinner(text: str) -> str:
    """mutmut redraws a braille spinner on one line: keep each line's last frame only."""
    return "\n".join(
        re.split(r"[\u2801-\u28ff]", ln.replace("\r", ""))[-1].strip()
        if re.search(r"[\u2801-\u28ff]", ln)
        else ln
        for ln in text.splitlines()
    )
