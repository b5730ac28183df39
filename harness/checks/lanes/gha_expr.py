"""A bounded evaluator for GitHub Actions ``${{ … }}`` expressions over the contexts a CI lane needs.

Known contexts: ``matrix`` (one combination), ``env`` (workflow, job and step ``env:`` merged, values
rendered in turn) and ``inputs`` (a composite action's ``with:`` values or input defaults). Anything
else (``github``, ``secrets``, ``needs``, ``steps``, functions other than ``format``, ``contains``,
``startsWith``, ``endsWith``, ``join`` and ``fromJSON``, filters) is ``UNKNOWN``, and so
is anything past the limits: the workflow under review is hostile input.
Operators follow GitHub: ``||``/``&&`` return an operand, ``==`` compares strings case-insensitively.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

MAX_DEPTH = 8  # env → env → inputs … chains
MAX_TEXT = 20_000  # characters of one template
MAX_EXPRS = 64  # ${{ }} segments in one template
MAX_TOKENS = 512  # tokens in one ${{ }} segment
MAX_STEPS = (
    4_096  # ${{ }} segments evaluated for one top-level template, nested env/inputs included
)


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()


class LStr(str):
    """A string that remembers where it was written (file, line) and whether it was composed."""

    path: str | None
    line: int | None
    derived: bool

    def __new__(cls, text: str, path: str | None, line: int | None, derived: bool = False) -> LStr:
        obj = super().__new__(cls, text)
        obj.path, obj.line, obj.derived = path, line, derived
        return obj


@dataclass
class Scope:
    """What ``matrix``, ``env`` and ``inputs`` mean where a template is evaluated.

    ``matrix``: one combination (None: unknown, e.g. ``fromJSON``); ``env``: name → template;
    ``inputs``: name → (template, the scope it is rendered in; None: this one), or None when unknown.
    ``read`` collects the matrix keys the evaluation looked at (shared with nested scopes).
    """

    matrix: Mapping[str, Any] | None
    env: Mapping[str, LStr] = field(default_factory=dict)
    inputs: Mapping[str, tuple[LStr, Scope | None]] | None = None
    read: list[str] = field(default_factory=list)
    steps_left: list[int] = field(default_factory=lambda: [MAX_STEPS])  # shared by nested scopes
    touched: list[LStr] = field(default_factory=list)  # env: values read on the way (shared)


@dataclass(frozen=True)
class _Segment:
    start: int
    end: int
    inner: str


def _segments(text: str) -> list[_Segment]:
    """Each ``${{ … }}`` in ``text``; a ``}}`` inside a quoted string does not end one."""
    out: list[_Segment] = []
    pos = text.find("${{")
    while pos >= 0 and len(out) <= MAX_EXPRS:
        i, quoted = pos + 3, False
        while i < len(text):
            if text[i] == "'":
                quoted = not quoted
            elif not quoted and text.startswith("}}", i):
                break
            i += 1
        if i >= len(text):
            break  # unterminated: the rest is plain text, as GitHub would reject it anyway
        out.append(_Segment(pos, i + 2, text[pos + 3 : i]))
        pos = text.find("${{", i + 2)
    return out


def segments(text: str) -> list[_Segment]:
    """Each ``${{ … }}`` in ``text`` (start, end, inner text), at most ``MAX_EXPRS`` + 1."""
    return _segments(text)


_TOKEN = re.compile(
    r"""\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|0x[0-9a-fA-F]+)
                     |(?P<op>==|!=|<=|>=|&&|\|\||[!<>().\[\],*])|(?P<id>[A-Za-z_][A-Za-z0-9_-]*))""",
    re.X,
)


class _Bad(Exception):
    pass


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos, text = 0, text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise _Bad(text[pos:])
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
        if len(out) > MAX_TOKENS:
            raise _Bad("too long")
    return out


def truthy(v: Any) -> bool:
    if v is None or v is False:
        return False
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return not (v == 0 or math.isnan(v))
    if isinstance(v, str):
        return v != ""
    return True


def _num(v: Any) -> float:
    if v is None:
        return 0.0
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        s = v.strip()
        if not s:
            return 0.0
        try:
            return float(int(s, 16)) if s.lower().startswith("0x") else float(s)
        except ValueError:
            return math.nan
    return math.nan


def _equal(a: Any, b: Any) -> Any:
    if a is UNKNOWN or b is UNKNOWN or isinstance(a, _View) or isinstance(b, _View):
        return UNKNOWN
    if isinstance(a, str) and isinstance(b, str):
        return a.casefold() == b.casefold()
    if type(a) is type(b) and not isinstance(a, (dict, list)):
        return a == b
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return a is b
    return _num(a) == _num(b)


class _View:
    """A context object (``matrix``, ``env``, ``inputs``) whose properties are looked up lazily."""

    def __init__(self, name: str, scope: Scope, depth: int) -> None:
        self.name, self.scope, self.depth = name, scope, depth

    def get(self, key: str) -> Any:
        s = self.scope
        if self.name == "matrix":
            if s.matrix is None:
                return UNKNOWN
            s.read.append(key)
            return _lookup(s.matrix, key, default=None)
        if self.name == "env":
            src = _lookup(
                s.env, key, default=UNKNOWN
            )  # set by an earlier step through $GITHUB_ENV?
            if src is UNKNOWN:
                return UNKNOWN
            s.touched.append(src)
            return render(src, s, self.depth + 1)
        if s.inputs is None:
            return UNKNOWN
        entry = _lookup(s.inputs, key, default=UNKNOWN)
        if entry is UNKNOWN:
            return UNKNOWN
        src, owner = entry
        return render(src, owner or s, self.depth + 1)


def _lookup(mapping: Mapping[str, Any], key: str, default: Any) -> Any:
    if key in mapping:
        return mapping[key]
    folded = key.casefold()
    return next((v for k, v in mapping.items() if k.casefold() == folded), default)


def _prop(v: Any, key: Any) -> Any:
    if v is UNKNOWN or key is UNKNOWN:
        return UNKNOWN
    if isinstance(v, _View):
        return v.get(str(key))
    if isinstance(v, dict):
        return _lookup(v, str(key), default=None)
    if isinstance(v, list) and isinstance(key, (int, float)) and not isinstance(key, bool):
        i = int(key)
        return v[i] if 0 <= i < len(v) and i == key else None
    return None


def _from_json(value: Any, where: LStr) -> Any:
    """JSON values as the evaluator's: strings placed at the template that holds them (derived)."""
    if isinstance(value, str):
        return LStr(value, where.path, where.line, derived=True)
    if isinstance(value, dict):
        return {str(k): _from_json(v, where) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_json(v, where) for v in value]
    return value


def _call(name: str, args: list[Any], where: LStr) -> Any:
    """The string functions a marker expression is built with (GitHub semantics, case-insensitive)."""
    if any(a is UNKNOWN or isinstance(a, _View) for a in args):
        return UNKNOWN
    fn = name.casefold()
    if fn == "format" and args:
        texts = [_text_of(a, where) for a in args]
        if any(t is UNKNOWN for t in texts):
            return UNKNOWN

        def field(m: re.Match[str]) -> str:
            if m.group(0) in ("{{", "}}"):
                return m.group(0)[0]
            i = int(m.group(1))
            if i + 1 >= len(texts):
                raise _Bad("format index")
            return str(texts[i + 1])

        out = re.sub(r"\{\{|\}\}|\{(\d+)\}", field, str(texts[0]))
        return LStr(out, where.path, where.line, derived=True)
    if fn in ("contains", "startswith", "endswith") and len(args) == 2:
        hay, needle = args
        if fn == "contains" and isinstance(hay, list):
            return any(_equal(x, needle) is True for x in hay)
        h, n = _text_of(hay, where), _text_of(needle, where)
        if h is UNKNOWN or n is UNKNOWN:
            return UNKNOWN
        h, n = str(h).casefold(), str(n).casefold()
        return (
            n in h
            if fn == "contains"
            else (h.startswith(n) if fn == "startswith" else h.endswith(n))
        )
    if fn == "fromjson" and len(args) == 1:  # a literal mapping or list written in the workflow
        text = _text_of(args[0], where)
        if text is UNKNOWN or len(text) > MAX_TEXT:
            return UNKNOWN
        try:
            value = json.loads(str(text))
        except (ValueError, RecursionError):
            return UNKNOWN
        return _from_json(value, where)
    if fn == "join" and args and isinstance(args[0], list):
        parts = [_text_of(x, where) for x in args[0]]
        sep = _text_of(args[1], where) if len(args) > 1 else LStr(",", where.path, where.line)
        if sep is UNKNOWN or any(p is UNKNOWN for p in parts):
            return UNKNOWN
        return LStr(str(sep).join(str(p) for p in parts), where.path, where.line, derived=True)
    return UNKNOWN


class _Parser:
    def __init__(self, text: str, scope: Scope, where: LStr, depth: int) -> None:
        self.toks, self.i = _tokens(text), 0
        self.scope, self.where, self.depth = scope, where, depth

    def peek(self) -> str | None:
        return self.toks[self.i][1] if self.i < len(self.toks) else None

    def take(self, want: str | None = None) -> tuple[str, str]:
        if self.i >= len(self.toks) or (want is not None and self.toks[self.i][1] != want):
            raise _Bad(f"expected {want}")
        self.i += 1
        return self.toks[self.i - 1]

    def parse(self) -> Any:
        v = self.or_()
        if self.i != len(self.toks):
            raise _Bad("trailing tokens")
        return v

    def or_(self) -> Any:
        v = self.and_()
        while self.peek() == "||":
            self.take()
            w = self.and_()
            v = UNKNOWN if v is UNKNOWN else (v if truthy(v) else w)
        return v

    def and_(self) -> Any:
        v = self.equality()
        while self.peek() == "&&":
            self.take()
            w = self.equality()
            v = UNKNOWN if v is UNKNOWN else (w if truthy(v) else v)
        return v

    def equality(self) -> Any:
        v = self.comparison()
        while self.peek() in ("==", "!="):
            op = self.take()[1]
            eq = _equal(v, self.comparison())
            v = eq if eq is UNKNOWN or op == "==" else not eq
        return v

    def comparison(self) -> Any:
        v = self.unary()
        while self.peek() in ("<", "<=", ">", ">="):
            op = self.take()[1]
            w = self.unary()
            if v is UNKNOWN or w is UNKNOWN:
                v = UNKNOWN
                continue
            a, b = _num(v), _num(w)
            v = {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
        return v

    def unary(self) -> Any:
        if self.peek() == "!":
            self.take()
            v = self.unary()
            return UNKNOWN if v is UNKNOWN else not truthy(v)
        return self.postfix(self.primary())

    def primary(self) -> Any:
        kind, text = self.take()
        if kind == "str":
            return LStr(text[1:-1].replace("''", "'"), self.where.path, self.where.line)
        if kind == "num":
            return float(int(text, 16)) if text.lower().startswith("0x") else float(text)
        if text == "(":
            v = self.or_()
            self.take(")")
            return v
        if kind != "id":
            raise _Bad(text)
        if text in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[text]
        if (
            self.peek() == "("
        ):  # a function call: format/contains/startsWith/endsWith/join; others unknown
            self.take()
            args = []
            while self.peek() != ")":
                args.append(self.or_())
                if self.peek() == ",":
                    self.take()
                elif self.peek() != ")":
                    raise _Bad("bad call")
            self.take(")")
            return _call(text, args, self.where)
        if text in ("matrix", "env", "inputs"):
            return _View(text, self.scope, self.depth)
        return UNKNOWN

    def postfix(self, v: Any) -> Any:
        while self.peek() in (".", "["):
            if self.take()[1] == ".":
                kind, name = self.take()
                v = UNKNOWN if name == "*" else (_prop(v, name) if kind == "id" else UNKNOWN)
            else:
                key = self.or_() if self.peek() != "*" else self.take() and UNKNOWN
                self.take("]")
                v = _prop(v, key)
        return v


def _text_of(v: Any, where: LStr) -> Any:
    """A value as GitHub writes it into a string (objects and context views are not modelled)."""
    if v is UNKNOWN or isinstance(v, (_View, dict, list)):
        return UNKNOWN
    if isinstance(v, LStr):
        return v
    if v is None:
        return LStr("", where.path, where.line)
    if isinstance(v, bool):
        return LStr("true" if v else "false", where.path, where.line)
    if isinstance(v, float):
        return LStr(str(int(v)) if v.is_integer() else repr(v), where.path, where.line)
    return LStr(str(v), where.path, where.line)


def evaluate(expr: str, scope: Scope, where: LStr, depth: int = 0) -> Any:
    """The value of one expression (the text inside ``${{ }}``), or UNKNOWN."""
    if depth > MAX_DEPTH:
        return UNKNOWN
    try:
        return _Parser(expr, scope, where, depth).parse()
    except (_Bad, RecursionError):
        return UNKNOWN


def render(template: LStr, scope: Scope, depth: int = 0) -> Any:
    """``template`` with every ``${{ … }}`` replaced by its value: an LStr, or UNKNOWN when any part is.

    A template that is one whole expression returns that value with its own origin (a matrix value
    keeps its line); a composed text is ``derived`` and placed at the template's line.
    """
    if depth > MAX_DEPTH or len(template) > MAX_TEXT:
        return UNKNOWN
    segments = _segments(template)
    if not segments:
        return template if isinstance(template, LStr) else LStr(template, None, None)
    scope.steps_left[0] -= len(segments)
    if len(segments) > MAX_EXPRS or scope.steps_left[0] < 0:
        return UNKNOWN
    whole = segments[0]
    if len(segments) == 1 and whole.start == 0 and whole.end == len(template):
        return _text_of(evaluate(whole.inner, scope, template, depth), template)
    out, pos = [], 0
    for m in segments:
        v = _text_of(evaluate(m.inner, scope, template, depth), template)
        if v is UNKNOWN:
            return UNKNOWN
        out += [template[pos : m.start], str(v)]
        pos = m.end
    out.append(template[pos:])
    text = "".join(out)
    return (
        UNKNOWN if len(text) > MAX_TEXT else LStr(text, template.path, template.line, derived=True)
    )


def has_expression(text: str) -> bool:
    return "${{" in text
