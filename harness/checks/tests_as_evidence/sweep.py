"""A mutmut 3.x sweep restricted to the functions a change touches, in a throwaway copy.

The head's tree is exported to a temporary directory; mutmut's configuration there names only the
changed files (``only_mutate``) and the mutant names of the changed functions (globs), so its
``mutants/`` folder and caches live and die in that directory. mutmut's own clean run and
forced-fail run must pass first, else nothing it reports is evidence.
"""

from __future__ import annotations

import ast
import difflib
import json
import re
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from harness.checks.paths import is_test_path
from harness.checks.tests_as_evidence.pytest_run import mutmut_env, output_text, run_in_tree
from harness.columns.trees import Column
from harness.errors import HarnessError, UsageError
from harness.executors import Executor, Task, TaskResult, TreeSpec
from harness.executors.local import LocalExecutor
from harness.git.mutation import changed_lines
from harness.git.repo import GitRepo
from harness.git.tree import export_tree
from harness.infra import process, treefiles, workarea
from harness.infra.progress import phase
from harness.report.model import Code, Control, Finding, Section, Table

METHOD_SEP = "ǁ"  # mutmut 3 mangles Class.method as xǁClassǁmethod
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
_STATUS = {
    1: "killed",
    3: "killed",
    0: "survived",
    5: "no tests",
    33: "no tests",
    34: "skipped",
    36: "timeout",
    24: "timeout",
    -24: "timeout",
    152: "timeout",
    255: "timeout",
    37: "caught by type check",
    -11: "segfault",
    -9: "segfault",
}


@dataclass
class ChangedFunction:
    path: str
    qualname: str  # "f" or "Class.method"
    start: int  # the def line
    end: int
    lines: list[int]  # changed lines inside it

    @property
    def mangled(self) -> str:
        if "." in self.qualname:
            cls, meth = self.qualname.split(".", 1)
            return f"x{METHOD_SEP}{cls}{METHOD_SEP}{meth}"
        return f"x_{self.qualname}"


@dataclass
class Mutant:
    name: str
    path: str
    function: str
    status: str
    line: int | None  # line of the head file the mutant changes (None: could not be placed)
    diff: str
    on_changed_line: bool


@dataclass
class SweepResult:
    base: str
    head: str
    tree: str
    functions: list[ChangedFunction]
    skipped_files: list[tuple[str, str]] = field(default_factory=list)
    mutants: list[Mutant] = field(default_factory=list)
    exit_code: int | None = None
    clean_ok: bool = False
    forced_fail_ok: bool = False
    leaked: bool = False
    output_tail: str = ""
    seconds: float = 0.0
    mutmut_version: str = ""
    config: dict = field(default_factory=dict)
    refused: str = ""  # why mutmut was not run (the tree's config file is a link, …)
    # changed file → where mutmut's pytest imported its module from (status in tree / shadowed /
    # not imported, module, file): the module path proof
    module_proofs: dict[str, dict[str, Any]] = field(default_factory=dict)


def functions_touched(path: str, source: str, lines: set[int]) -> list[ChangedFunction]:
    """Top-level functions and methods of top-level classes (what mutmut mutates) holding a changed line."""
    tree = ast.parse(source)
    found: list[ChangedFunction] = []

    def consider(node: ast.AST, qual: str) -> None:
        assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        start = min([node.lineno] + [d.lineno for d in node.decorator_list])
        end = node.end_lineno or node.lineno
        hit = sorted(ln for ln in lines if start <= ln <= end)
        if hit:
            found.append(ChangedFunction(path, qual, node.lineno, end, hit))

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            consider(node, node.name)
        elif isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    consider(sub, f"{node.name}.{sub.name}")
    return found


def find_changed_functions(
    repo: GitRepo, base: str, head: str, tree_dir: Path
) -> tuple[list[ChangedFunction], list[tuple[str, str]]]:
    """Changed functions of non-test Python files at ``head``, and the files left out (with why)."""
    functions: list[ChangedFunction] = []
    skipped: list[tuple[str, str]] = []
    for path, lines in sorted(changed_lines(repo, base, head, ["*.py"]).items()):
        if is_test_path(path):
            skipped.append((path, "test file"))
            continue
        try:
            source = treefiles.read(tree_dir, path).decode("utf-8")
            touched = functions_touched(path, source, lines)
        except treefiles.TreePathError as exc:
            skipped.append((path, str(exc).split(": ", 1)[-1]))
            continue
        except (OSError, SyntaxError, UnicodeDecodeError) as exc:
            skipped.append((path, f"unreadable: {exc.__class__.__name__}"))
            continue
        if not touched:
            skipped.append((path, "changes outside any function"))
        functions += touched
    return functions, skipped


def _mutmut_config(
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


def _mutant_lines(mutants_file: Path) -> dict[str, tuple[int, int]]:
    tree = ast.parse(mutants_file.read_text(encoding="utf-8"))
    return {
        n.name: (n.lineno, n.end_lineno or n.lineno)
        for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and "__mutmut_" in n.name
    }


def _place(
    fn: ChangedFunction,
    head_lines: list[str],
    mutant_src: list[str],
    spans: dict[str, tuple[int, int]],
    local: str,
) -> tuple[int | None, str]:
    """The head line a mutant changes and its diff (orig vs mutant body, def lines excluded)."""
    mangled = local.rsplit("__mutmut_", 1)[0]
    orig, mut = spans.get(f"{mangled}__mutmut_orig"), spans.get(local)
    if not orig or not mut:
        return None, ""
    a = mutant_src[orig[0] : orig[1]]
    b = mutant_src[mut[0] : mut[1]]
    diff = "\n".join(
        ln
        for ln in difflib.unified_diff(a, b, lineterm="", n=0)
        if ln[:1] in "+-" and not ln.startswith(("+++", "---"))
    )
    line = None
    for op, i1, _i2, _j1, _j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op != "equal":
            line = fn.start + 1 + i1
            # Self-check: the original text must sit at that line of the head file.
            if i1 < len(a) and (
                line > len(head_lines) or head_lines[line - 1].strip() != a[i1].strip()
            ):
                line = None
            break
    return line, diff


def _read_results(tree_dir: Path, functions: Sequence[ChangedFunction]) -> list[Mutant]:
    by_key = {(f.path, f.mangled): f for f in functions}
    mutants: list[Mutant] = []
    for path in sorted({f.path for f in functions}):
        meta = tree_dir / "mutants" / (path + ".meta")
        mfile = tree_dir / "mutants" / path
        if not meta.exists() or not mfile.exists():
            continue
        codes = json.loads(meta.read_text(encoding="utf-8")).get("exit_code_by_key", {})
        spans = _mutant_lines(mfile)
        mutant_src = mfile.read_text(encoding="utf-8").splitlines()
        head_lines = (tree_dir / path).read_text(encoding="utf-8").splitlines()
        for key in sorted(codes, key=_natural):
            local = key.rsplit(".", 1)[-1]
            fn = by_key.get((path, local.rsplit("__mutmut_", 1)[0]))
            if fn is None:
                continue  # a function of a changed file that the change did not touch
            code = codes[key]
            status = "not checked" if code is None else _STATUS.get(code, "suspicious")
            line, diff = _place(fn, head_lines, mutant_src, spans, local)
            mutants.append(
                Mutant(
                    key,
                    path,
                    fn.qualname,
                    status,
                    line,
                    diff,
                    line is not None and line in fn.lines,
                )
            )
    return mutants


def _natural(key: str) -> tuple:
    head, _, n = key.rpartition("__mutmut_")
    return (head, int(n) if n.isdigit() else 0)


def run_sweep(
    repo: GitRepo,
    base: str,
    head: str,
    *,
    tests: Sequence[str] = (),
    marker: str | None = None,
    python: str = sys.executable,
    max_children: int | None = None,
    timeout: float = 1800,
    source_paths: Sequence[str] = (),
    executor: Executor | None = None,
    shards: int | None = None,
) -> SweepResult:
    """Export ``head``, configure mutmut for the changed functions, run it, read its verdicts.

    One mutmut run per shard, each an executor task in its own copy of the head's tree: with one
    shard (the default on ``local``) mutmut runs the changed functions' globs as always; with N, the
    mutant names (generated here by mutmut itself) are split into N lists and the shards' verdicts
    are merged as mutmut's own exit codes before they are read.
    """
    base_sha, head_sha = repo.resolve(base), repo.resolve(head)
    if shards is not None and shards < 1:
        raise UsageError(f"--shards must be at least 1, got {shards}")
    executor = executor or LocalExecutor()
    user_mutants = repo.work_tree / "mutants" if repo.work_tree else None
    existed = bool(user_mutants and user_mutants.exists())
    with workarea.temp_dir("harness-sweep-") as tmp:
        tree_dir = Path(tmp) / "tree"
        tree = export_tree(repo, head_sha, tree_dir)
        functions, skipped = find_changed_functions(repo, base_sha, head_sha, tree_dir)
        result = SweepResult(base, head, tree, functions, skipped)
        if not functions:
            return result
        result.config = _mutmut_config(functions, tests, marker, source_paths)
        try:
            write_mutmut_config(tree_dir, result.config)
        except treefiles.TreePathError as exc:
            result.refused = f"mutmut not run: {exc}"
            return result
        globs = sorted({f"*.{f.mangled}__mutmut_*" for f in functions})
        n = shards or (1 if executor.name == "local" else executor.slots())
        lists = [globs] if n == 1 else split_names(generate_names(tree_dir, python, functions), n)
        spec = TreeSpec(repo, Column("head", head_sha), scratch=True)
        tasks = [
            Task(
                f"sweep:{tree}:{i}",
                sweep_shard,
                spec,
                (result.config, names, python, max_children, timeout),
                timeout=timeout + 120,
                label=f"mutmut shard {i + 1}/{len(lists)}",
            )
            for i, names in enumerate(lists)
        ]
        start = time.monotonic()
        with phase(f"mutmut over {len(functions)} changed function(s)"):
            done = executor.run(tasks, jobs=1 if executor.name == "local" else None)
        result.seconds = time.monotonic() - start
        _read_shards(result, done, tree_dir, python, None if n == 1 else lists)
    result.leaked = bool(user_mutants and user_mutants.exists() and not existed)
    if result.exit_code is None:
        raise UsageError(f"mutmut ran past {timeout:.0f}s (raise --timeout or narrow --tests)")
    return result


def _read_shards(
    result: SweepResult,
    done: Sequence[TaskResult[ShardResult]],
    tree_dir: Path,
    python: str,
    lists: list[list[str]] | None,
) -> None:
    """Fold the shards' runs into ``result``: their exit code (None when one timed out), output,
    the clean and forced-fail checks, and the mutants' verdicts merged into ``tree_dir``
    (``lists``: each shard's mutant names, None for one shard)."""
    parts = [r.value if r.status == "ok" and r.value is not None else None for r in done]
    if any(p is not None and p.exit_code is None for p in parts) or any(
        r.status == "timeout" for r in done
    ):
        result.exit_code = None
        return
    lost = [r.detail for r in done if r.status != "ok"]
    if lost:
        raise HarnessError(f"mutmut sweep: {lost[0]}")
    shard_parts = [p for p in parts if p is not None]
    result.exit_code = next((p.exit_code for p in shard_parts if p.exit_code), 0)
    out = "\n".join(p.output for p in shard_parts)
    result.output_tail = out[-3000:]
    result.clean_ok = all(
        "Failed to run clean test" not in p.output and "Running clean tests" in p.output
        for p in shard_parts
    )
    result.forced_fail_ok = all(
        "Unable to force test failures" not in p.output and "Running mutation testing" in p.output
        for p in shard_parts
    )
    result.mutmut_version = _mutmut_version(python)
    merge_shards(tree_dir, shard_parts, lists)
    result.mutants = _read_results(tree_dir, result.functions)
    result.module_proofs = merge_proofs(shard_parts)


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


def merge_proofs(shards: Sequence[ShardResult]) -> dict[str, dict[str, Any]]:
    """One module path proof per changed file over all shards: any shard's shadowed or not-imported
    entry outweighs an "in tree" one."""
    rank = {"in tree": 0, "not imported": 1, "shadowed": 2}
    out: dict[str, dict[str, Any]] = {}
    for shard in shards:
        for rel, entry in shard.proofs.items():
            if rel not in out or rank.get(entry.get("status", ""), 3) > rank.get(
                out[rel].get("status", ""), 3
            ):
                out[rel] = entry
    return dict(sorted(out.items()))


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
                return ShardResult(None, _strip_spinner(out))
            shard = ShardResult(proc.returncode, _strip_spinner(output_text(proc)))
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
                for k in sorted(keys, key=_natural)
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


def _strip_spinner(text: str) -> str:
    """mutmut redraws a braille spinner on one line: keep each line's last frame only."""
    return "\n".join(
        re.split(r"[\u2801-\u28ff]", ln.replace("\r", ""))[-1].strip()
        if re.search(r"[\u2801-\u28ff]", ln)
        else ln
        for ln in text.splitlines()
    )


def _mutmut_version(python: str) -> str:
    proc = process.run(
        [python, "-c", "import importlib.metadata as m; print(m.version('mutmut'))"],
        capture_output=True,
        text=True,
    )
    return proc.stdout.strip()


def check_mutmut(python: str) -> str:
    """The mutmut version the interpreter has (3.x), or a usage error saying how to get it."""
    version = _mutmut_version(python)
    if not version:
        raise UsageError(
            f"mutmut is not installed for {python}: pip install 'mutmut>=3,<4' "
            "(or the harness's [mutation] extra)"
        )
    if not version.startswith("3."):
        raise UsageError(f"mutmut {version} found for {python}; harness sweep needs mutmut 3.x")
    return version


# -- report ------------------------------------------------------------------------
def sweep_section(result: SweepResult) -> Section:
    """Per changed function: killed / survived / no tests, and survivors on changed lines."""
    shadowed = {rel: e for rel, e in result.module_proofs.items() if e.get("status") == "shadowed"}
    runs_ok = result.clean_ok and result.forced_fail_ok and result.exit_code == 0
    evidence = runs_ok and not shadowed
    survivors = [m for m in result.mutants if m.status == "survived" and m.on_changed_line]
    tables = [_function_table(result, runs_ok), *_extra_tables(result, survivors)]
    findings = _sweep_findings(result, runs_ok, shadowed, survivors)
    controls = _sweep_controls(result)
    total = len(result.mutants)
    killed = sum(1 for m in result.mutants if m.status == "killed")
    return Section(
        id="sweep",
        title="Mutation sweep (mutmut) of the changed functions",
        summary=(
            f"{len(result.functions)} changed function(s), {total} mutants, {killed} killed, "
            f"{len(survivors)} surviving on changed lines"
            + ("" if evidence or not result.functions else " — NOT EVIDENCE")
        ),
        tables=tables,
        findings=findings,
        controls=controls,
        not_verified=[
            "functions mutmut does not mutate (decorated, nested, module-level code) are not swept",
            "mutants are mutmut's operators only; a survivor off the changed lines is counted, not listed",
            "the project's pytest addopts apply inside mutmut's runs",
        ],
        data=_sweep_data(result),
    )


def _function_table(result: SweepResult, runs_ok: bool) -> Table:
    """Mutants per changed function, by status."""
    rows: list[list] = []
    for fn in result.functions:
        mine = [m for m in result.mutants if m.path == fn.path and m.function == fn.qualname]
        count = {
            s: sum(1 for m in mine if m.status == s) for s in ("killed", "survived", "no tests")
        }
        other = len(mine) - sum(count.values())
        on_changed = sum(1 for m in mine if m.status == "survived" and m.on_changed_line)
        rows.append(
            [
                Code(fn.path),
                Code(fn.qualname),
                _ranges(fn.lines),
                len(mine),
                count["killed"],
                count["survived"],
                count["no tests"],
                other,
                on_changed,
            ]
        )
    return Table(
        "mutmut sweep per changed function",
        [
            "file",
            "function",
            "changed lines",
            "mutants",
            "killed",
            "survived",
            "no tests",
            "other",
            "survivors on changed lines",
        ],
        rows,
        legend="other = timeout / suspicious / skipped / not checked; a function with 0 mutants has "
        "nothing mutmut can mutate (or is decorated)",
        control="mutmut's clean run and forced-fail run: "
        + ("passed" if runs_ok else "FAILED — not evidence"),
    )


def _extra_tables(result: SweepResult, survivors: list[Mutant]) -> list[Table]:
    """Survivors on changed lines; changed Python files not swept."""
    tables: list[Table] = []
    if survivors:
        tables.append(
            Table(
                "Surviving mutants on changed lines",
                ["mutant", "line", "mutation"],
                [[Code(m.name), m.line, Code(m.diff)] for m in survivors],
                legend="'-' original, '+' mutant",
                control="each line is checked against the head file's text",
                collapsed=len(survivors) > 10,
            )
        )
    if result.skipped_files:
        tables.append(
            Table(
                "Changed Python files not swept",
                ["file", "why"],
                [[Code(p), why] for p, why in result.skipped_files],
                control="from the same diff as the functions above",
            )
        )
    return tables


def _sweep_findings(
    result: SweepResult, runs_ok: bool, shadowed: dict[str, dict[str, Any]], survivors: list[Mutant]
) -> list[Finding]:
    findings: list[Finding] = []
    if result.refused:
        findings.append(
            Finding(
                "sweep-not-run",
                "P1",
                "the sweep did not run: the sweep is not evidence",
                result.refused,
                key=f"{result.tree}:refused",
            )
        )
    elif result.functions and not runs_ok:
        findings.append(
            Finding(
                "sweep-not-evidence",
                "P1",
                "mutmut's clean or forced-fail run did not pass: the sweep is not evidence",
                _last_lines(result.output_tail),
                key=f"{result.tree}",
            )
        )
    for rel, e in shadowed.items():
        findings.append(
            Finding(
                "sweep-shadowed",
                "P1",
                f"mutmut's tests imported {e.get('module')} from outside the tree: the sweep is not evidence",
                f"{rel} was imported from {e.get('file')}",
                key=f"{result.tree}:shadowed:{rel}",
            )
        )
    for m in survivors:
        findings.append(
            Finding(
                "mutant-survives",
                "P2",
                f"a mutant of {m.function} on changed line {m.path}:{m.line} survives the tests",
                m.diff,
                key=f"{m.path}:{m.function}:{m.diff}",
            )
        )
    for fn in result.functions:
        mine = [m for m in result.mutants if m.path == fn.path and m.function == fn.qualname]
        if mine and all(m.status == "no tests" for m in mine):
            findings.append(
                Finding(
                    "function-untested",
                    "P2",
                    f"no test in this selection runs {fn.path}:{fn.qualname}",
                    key=f"{fn.path}:{fn.qualname}",
                )
            )
    return findings


def _sweep_controls(result: SweepResult) -> list[Control]:
    return (
        [
            Control(
                "mutmut clean test run", "passed" if result.clean_ok else "failed", result.clean_ok
            ),
            Control(
                "mutmut forced-fail run (liveness)",
                "passed" if result.forced_fail_ok else "failed",
                result.forced_fail_ok,
            ),
            _proof_control(result.module_proofs),
            Control(
                "mutants/ stayed in the throwaway copy",
                "user's tree has no new mutants/ folder" if not result.leaked else "LEAKED",
                not result.leaked,
            ),
        ]
        if result.functions
        else [Control("changed functions", "none found: nothing to sweep", None)]
    )


def _sweep_data(result: SweepResult) -> dict[str, object]:
    return {
        "base": result.base,
        "head": result.head,
        "tree": result.tree,
        "exit_code": result.exit_code,
        "mutmut": result.mutmut_version,
        "module_proofs": result.module_proofs,
        "config": result.config,
        "functions": [
            {"path": f.path, "function": f.qualname, "lines": f.lines} for f in result.functions
        ],
        "mutants": [
            {
                "name": m.name,
                "path": m.path,
                "function": m.function,
                "status": m.status,
                "line": m.line,
                "on_changed_line": m.on_changed_line,
            }
            for m in result.mutants
        ],
    }


def _proof_control(proofs: dict[str, dict[str, Any]]) -> Control:
    """Where mutmut's pytest imported each changed file's module from (the tree's mutated copy, or
    an installed copy that shadows it)."""
    if not proofs:
        return Control("module path proof", "not recorded: mutmut ran no pytest", None)
    states = sorted({str(e.get("status")) for e in proofs.values()})
    shown = "; ".join(
        f"{rel}: {e.get('status')}"
        + (
            f" ({e.get('module')} from {e.get('file')})"
            if e.get("status") != "not imported"
            else ""
        )
        for rel, e in proofs.items()
    )
    ok = True if states == ["in tree"] else (False if "shadowed" in states else None)
    return Control("module path proof", shown, ok)


def _ranges(lines: Sequence[int]) -> str:
    groups: list[list[int]] = []
    for ln in sorted(lines):
        if groups and groups[-1][1] == ln - 1:
            groups[-1][1] = ln
        else:
            groups.append([ln, ln])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in groups)


def _last_lines(text: str, n: int = 5) -> str:
    return "\n".join([ln for ln in text.splitlines() if ln.strip()][-n:])
