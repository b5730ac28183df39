"""AST-extract named functions or methods from a file in the column's tree and build the probe callable.

Runs inside the column's subprocess (loaded by _runner.py); never imports harness internals.
Used for code whose module cannot be imported without heavy dependencies: only the named
definitions are executed, after a ``prelude`` of declared stubs.
"""

from __future__ import annotations

import ast
import hashlib
import os
import textwrap

KEEP_DECORATORS = {"staticmethod", "classmethod", "property"}


def _segment(source: str, node: ast.AST) -> str:
    """The definition's source, decorators other than staticmethod/classmethod/property dropped."""
    lines = source.splitlines(keepends=True)
    keep = [d for d in node.decorator_list if isinstance(d, ast.Name) and d.id in KEEP_DECORATORS]
    start = node.lineno  # the ``def`` line (decorators sit above it)
    body = "".join(lines[start - 1 : node.end_lineno])
    deco = "".join(f"@{d.id}\n" for d in keep)
    return deco + textwrap.dedent(body)


def extract(source: str, names: list[str]) -> tuple[str, list[str]]:
    """Extracted source for ``names`` (``func`` or ``Class.method``) and the names not found."""
    tree = ast.parse(source)
    top = {
        n.name: n
        for n in tree.body
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    parts: list[str] = []
    classes: dict[str, list[str]] = {}
    missing: list[str] = []
    for name in names:
        if "." in name:
            cls_name, meth = name.split(".", 1)
            cls = top.get(cls_name)
            node = next(
                (
                    n
                    for n in getattr(cls, "body", [])
                    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == meth
                ),
                None,
            )
            if node is None:
                missing.append(name)
                continue
            classes.setdefault(cls_name, []).append(_segment(source, node))
        else:
            node = top.get(name)
            if node is None or isinstance(node, ast.ClassDef):
                missing.append(name)
                continue
            parts.append(_segment(source, node))
    for cls_name, methods in classes.items():
        parts.append(
            f"class {cls_name}:\n" + "".join(textwrap.indent(m, "    ") + "\n" for m in methods)
        )
    return "\n".join(p.rstrip("\n") + "\n" for p in parts), missing


def blob_sha(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def build(spec: dict):
    """(callable, proof) for an extract probe spec."""
    path = os.path.join(spec["tree"], spec["file"])
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    code, missing = extract(source, list(spec["functions"]))
    if missing:
        raise LookupError(f"not found in {spec['file']}: {', '.join(missing)}")
    ns: dict = {"__name__": "_harness_extracted"}
    exec(compile(spec.get("prelude") or "", "<prelude>", "exec"), ns)
    exec(compile(code, f"<extracted from {spec['file']}>", "exec"), ns)
    obj = ns
    fn = None
    for part in spec["call"].split("."):
        fn = obj[part] if isinstance(obj, dict) else getattr(obj, part)
        obj = fn
    proof = {"extracted sha": blob_sha(code.encode()), "extracted from": spec["file"]}
    return fn, proof
