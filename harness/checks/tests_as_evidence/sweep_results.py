"""What a sweep finds: the changed functions (top-level functions and methods of top-level classes
holding a changed line, as mutmut names them), the mutants read back from mutmut's ``mutants/``
folder with the head line each changes, and the ``SweepResult`` that carries them."""

from __future__ import annotations

import ast
import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.checks.paths import is_test_path
from harness.git.mutation import changed_lines
from harness.git.repo import GitRepo
from harness.infra import treefiles

METHOD_SEP = "ǁ"  # mutmut 3 mangles Class.method as xǁClassǁmethod
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


def read_results(tree_dir: Path, functions: Sequence[ChangedFunction]) -> list[Mutant]:
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
        for key in sorted(codes, key=mutant_order):
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


def mutant_order(key: str) -> tuple:
    head, _, n = key.rpartition("__mutmut_")
    return (head, int(n) if n.isdigit() else 0)
