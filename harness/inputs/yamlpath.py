"""YAML with line numbers: compose nodes, key paths (``a.b["c.d"][0]``), anchors, aliases, merge keys.

Nodes keep where each value was written, so a reported value always comes with its line.
Mapping keys are compared as written (``on`` stays the string ``on``, not YAML 1.1's ``True``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from harness.errors import UsageError

Segment = str | int


# libyaml's parser and composer when PyYAML was built with them (~7x faster); the same node
# classes, marks and error types as the pure-Python ones.
LOADER: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YamlError(Exception):
    """The text is not YAML we can read (message includes the line when known)."""


def parse_keypath(keypath: str) -> list[Segment]:
    """``sglang["cuda13.0"].runtime_image_tag`` → ``["sglang", "cuda13.0", "runtime_image_tag"]``.

    Bare segments are split on dots; ``["…"]`` / ``['…']`` hold keys with dots; ``[N]`` indexes a list.
    """
    if not keypath or keypath.strip() != keypath:
        raise UsageError(f"invalid key path {keypath!r}")
    segs: list[Segment] = []
    i, n = 0, len(keypath)
    expect_sep = False
    while i < n:
        c = keypath[i]
        if c == "[":
            m = re.match(
                r'\[\s*(?:"((?:[^"\\]|\\.)*)"|\'((?:[^\'\\]|\\.)*)\'|(-?\d+))\s*\]', keypath[i:]
            )
            if not m:
                raise UsageError(f"invalid key path {keypath!r}: bad brackets at offset {i}")
            if m.group(3) is not None:
                segs.append(int(m.group(3)))
            else:
                raw = m.group(1) if m.group(1) is not None else m.group(2)
                segs.append(re.sub(r"\\(.)", r"\1", raw))
            i += m.end()
            expect_sep = True
        elif c == ".":
            if not expect_sep or i + 1 >= n:
                raise UsageError(f"invalid key path {keypath!r}: empty segment at offset {i}")
            i += 1
            expect_sep = False
            if keypath[i] == "[":
                raise UsageError(f"invalid key path {keypath!r}: '.[' at offset {i - 1}")
        else:
            if expect_sep:
                raise UsageError(f"invalid key path {keypath!r}: expected '.' or '[' at offset {i}")
            m = re.match(r"[^.\[\]]+", keypath[i:])
            assert m
            segs.append(m.group(0))
            i += m.end()
            expect_sep = True
    return segs


def format_keypath(segs: list[Segment]) -> str:
    out = ""
    for s in segs:
        if isinstance(s, int):
            out += f"[{s}]"
        elif re.fullmatch(r"[^.\[\]\"']+", s):
            out += ("." if out else "") + s
        else:
            out += '["' + s.replace("\\", "\\\\").replace('"', '\\"') + '"]'
    return out


def decode(data: bytes) -> tuple[str, bool]:
    """Text of a file; bytes that are not UTF-8 become U+FFFD (second value says it happened)."""
    try:
        return data.decode("utf-8-sig"), False
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace"), True


MAX_BYTES = 4 * 1024 * 1024  # a larger YAML file is not read
MAX_NODES = 100_000  # nodes once aliases and merge keys are expanded
MAX_DEPTH = 100  # nesting, aliases expanded


def limit_problem(
    root: Node | None, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH
) -> tuple[str, int] | None:
    """Why a node tree is too big to walk once aliases are expanded (message, 1-based line), else None.

    Sizes and depths are memoized per node, so a billion-laughs document costs its distinct nodes.
    """
    if root is None:
        return None
    done: dict[int, tuple[int, int]] = {}
    active: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        nid = id(node)
        if nid in done:
            continue
        kids: list[Node] = []
        if isinstance(node, SequenceNode):
            kids = list(node.value)
        elif isinstance(node, MappingNode):
            kids = [n for pair in node.value for n in pair]
        if not expanded:
            if nid in active:
                return "not read: a recursive alias", line_of(node)
            active.add(nid)
            stack.append((node, True))
            for kid in kids:
                if id(kid) in active and id(kid) not in done:
                    return "not read: a recursive alias", line_of(kid)
                stack.append((kid, False))
            continue
        size = 1 + sum(done[id(k)][0] for k in kids)
        depth = 1 + max((done[id(k)][1] for k in kids), default=0)
        active.discard(nid)
        if size > max_nodes:
            return f"not read: alias expansion over {max_nodes} nodes", line_of(node)
        if depth > max_depth:
            return f"not read: nesting deeper than {max_depth} levels", line_of(node)
        done[nid] = (size, depth)
    return None


def unreadable_character(text: str) -> YamlError | None:
    """A character YAML text cannot hold (NUL, most control characters), as an error naming its
    1-based line; the reader's own message spans lines and counts from the wrong place."""
    try:
        yaml.reader.Reader(text)  # checks every character of a str
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        code = (
            exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "?")
        )
        return YamlError(f"a character YAML text cannot hold: {code:#06x} (line {line})")
    return None


def compose(text: str) -> Node | None:
    """The first document's node tree (None for an empty document), within the size limits."""
    if len(text) > MAX_BYTES:
        raise YamlError(f"not read: over {MAX_BYTES} bytes")
    bad = unreadable_character(text)
    if bad is not None:
        raise bad
    try:
        check_nesting(text)
        node = yaml.compose(text, Loader=LOADER)
    except yaml.composer.ComposerError as exc:  # several documents
        if "expected a single document" not in str(exc):
            raise YamlError(_yaml_msg(exc)) from None
        node = _first_document(text)
    except yaml.YAMLError as exc:
        raise YamlError(_yaml_msg(exc)) from None
    except RecursionError:
        raise YamlError(f"not read: nesting deeper than {MAX_DEPTH} levels") from None
    problem = limit_problem(node)
    if problem is not None:
        raise YamlError(f"{problem[0]} (line {problem[1]})")
    return node


_PLAIN_TAGS = frozenset(
    f"tag:yaml.org,2002:{t}"
    for t in ("str", "int", "float", "bool", "null", "map", "seq", "merge", "timestamp", "binary")
)


def _nodes(root: Node | None) -> Iterator[Node]:
    """Every node under ``root`` once (an alias is one node met twice), in document order."""
    seen: set[int] = set()
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        if isinstance(node, SequenceNode):
            stack.extend(reversed(node.value))
        elif isinstance(node, MappingNode):
            stack.extend(n for pair in reversed(node.value) for n in reversed(pair))


def tag_problem(root: Node | None) -> tuple[str, int] | None:
    """The first explicit tag that ``yaml.safe_load`` would not build as plain data
    (``!!python/object/apply:os.system``, ``!custom``), with its 1-based line; else None. A file
    the person running the harness wrote (scenario, policy, mutations) is refused for it: the
    tag would otherwise be dropped silently and the text used as a string."""
    for node in _nodes(root):
        if node.tag not in _PLAIN_TAGS:
            return f"tag {node.tag!r} is not allowed (plain YAML data only)", line_of(node)
    return None


def duplicate_problem(root: Node | None) -> tuple[str, int] | None:
    """The first mapping key written twice in one mapping (``yaml.safe_load`` keeps the last one
    silently), with the line of its second use; else None."""
    for node in _nodes(root):
        if isinstance(node, MappingNode):
            keys: set[str] = set()
            for knode, _ in node.value:
                if isinstance(knode, ScalarNode) and knode.tag != "tag:yaml.org,2002:merge":
                    if knode.value in keys:
                        return f"duplicate key {knode.value!r}", line_of(knode)
                    keys.add(knode.value)
    return None


def trusted_problem(root: Node | None) -> tuple[str, int] | None:
    """Why a file the person running the harness wrote (scenario, policy, mutations) is refused
    beyond the size limits: a tag other than plain data, a key written twice; else None."""
    return tag_problem(root) or duplicate_problem(root)


def check_nesting(text: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH before composing (the composer recurses per level)."""
    depth = 0
    try:
        for ev in yaml.parse(text, Loader=LOADER):
            if isinstance(ev, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    raise YamlError(
                        f"not read: nesting deeper than {MAX_DEPTH} levels "
                        f"(line {ev.start_mark.line + 1 if ev.start_mark else '?'})"
                    )
            elif isinstance(ev, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
    except yaml.MarkedYAMLError as exc:  # libyaml stops past its own depth before we count there
        if "maximum nesting depth" not in str(exc.problem):
            raise
        line = exc.problem_mark.line + 1 if exc.problem_mark else "?"
        raise YamlError(f"not read: nesting deeper than {MAX_DEPTH} levels (line {line})") from None


def _first_document(text: str) -> Node | None:
    try:
        return next(iter(yaml.compose_all(text, Loader=LOADER)), None)
    except yaml.YAMLError as exc:
        raise YamlError(_yaml_msg(exc)) from None
    except RecursionError:
        raise YamlError(f"not read: nesting deeper than {MAX_DEPTH} levels") from None


def safe_load(text: str, name: str) -> object:
    """``yaml.safe_load`` within the limits; a ``UsageError`` naming ``name:line`` past them (trusted files)."""
    try:
        node = compose(text)
    except YamlError as exc:
        raise UsageError(f"{name}: {exc}") from None
    problem = trusted_problem(node)
    if problem is not None:
        raise UsageError(f"{name}:{problem[1]}: {problem[0]}")
    try:
        return None if node is None else to_python(node)
    except YamlError as exc:
        raise UsageError(f"{name}: {exc}") from None


def _yaml_msg(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return f"{problem} (line {mark.line + 1})" if mark is not None else str(problem)


def line_of(node: Node) -> int:
    """1-based line where the node starts."""
    return node.start_mark.line + 1


def items(node: MappingNode) -> Iterator[tuple[str, Node, Node]]:
    """``(key text, key node, value node)`` of a mapping, merge keys (``<<``) expanded after own keys."""
    own: list[tuple[str, Node, Node]] = []
    merged: list[tuple[str, Node, Node]] = []
    for k, v in node.value:
        if isinstance(k, ScalarNode) and k.tag == "tag:yaml.org,2002:merge":
            sources = v.value if isinstance(v, SequenceNode) else [v]
            for src in sources:
                if isinstance(src, MappingNode):
                    merged.extend(items(src))
            continue
        own.append((k.value if isinstance(k, ScalarNode) else str(k.value), k, v))
    seen = {k for k, _, _ in own}
    yield from own
    for k, kn, v in merged:
        if k not in seen:
            seen.add(k)
            yield k, kn, v


def get(node: Node | None, key: str) -> Node | None:
    if not isinstance(node, MappingNode):
        return None
    for k, _kn, v in items(node):
        if k == key:
            return v
    return None


def get_entry(node: Node | None, key: str) -> tuple[Node, Node] | None:
    if not isinstance(node, MappingNode):
        return None
    for k, kn, v in items(node):
        if k == key:
            return kn, v
    return None


def keys(node: Node | None) -> list[str]:
    return [k for k, _, _ in items(node)] if isinstance(node, MappingNode) else []


@dataclass
class Lookup:
    """Result of following a key path: the node found, or where and why it stopped."""

    node: Node | None
    key_node: Node | None = None
    missing_at: str = ""  # key path prefix that exists where the walk stopped
    reason: str = ""


def lookup(root: Node | None, segs: list[Segment]) -> Lookup:
    node = root
    key_node: Node | None = None
    for i, seg in enumerate(segs):
        here = format_keypath(segs[:i]) or "(top level)"
        if isinstance(seg, int):
            if not isinstance(node, SequenceNode):
                return Lookup(None, missing_at=here, reason=f"{here} is {kind(node)}, not a list")
            if not -len(node.value) <= seg < len(node.value):
                return Lookup(
                    None, missing_at=here, reason=f"{here} has {len(node.value)} items, no [{seg}]"
                )
            node, key_node = node.value[seg], None
            continue
        if not isinstance(node, MappingNode):
            return Lookup(None, missing_at=here, reason=f"{here} is {kind(node)}, not a mapping")
        entry = get_entry(node, seg)
        if entry is None:
            present = keys(node)
            shown = ", ".join(present[:8]) + (" …" if len(present) > 8 else "")
            return Lookup(
                None,
                missing_at=here,
                reason=f"no key {seg!r} under {here} (keys: {shown or 'none'})",
            )
        key_node, node = entry
    return Lookup(node, key_node)


def kind(node: Node | None) -> str:
    if node is None:
        return "empty"
    if isinstance(node, MappingNode):
        return "a mapping"
    if isinstance(node, SequenceNode):
        return "a list"
    return "a scalar"


def scalar_text(node: Node | None) -> str | None:
    """A scalar as written (after YAML quoting and folding); None for null or non-scalars."""
    if not isinstance(node, ScalarNode) or node.tag == "tag:yaml.org,2002:null":
        return None
    return str(node.value)


def to_python(node: Node) -> object:
    """The value as ``yaml.safe_load`` gives it; a value it cannot build (2026-02-30) is a ``YamlError``."""
    loader = yaml.SafeLoader("")
    try:
        return loader.construct_object(node, deep=True)
    except (yaml.YAMLError, ValueError, TypeError, OverflowError) as exc:
        raise YamlError(
            f"cannot read a value: {str(exc).splitlines()[0]} (line {line_of(node)})"
        ) from None
    finally:
        loader.dispose()


def value_text(node: Node | None) -> str | None:
    """Scalar text, or compact JSON for lists and mappings (None for null)."""
    if node is None:
        return None
    if isinstance(node, ScalarNode):
        return scalar_text(node)
    return json.dumps(to_python(node), sort_keys=True, default=str, ensure_ascii=False)


__all__ = [
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_NODES",
    "Lookup",
    "YamlError",
    "check_nesting",
    "compose",
    "limit_problem",
    "safe_load",
    "tag_problem",
    "unreadable_character",
    "duplicate_problem",
    "trusted_problem",
    "decode",
    "format_keypath",
    "get",
    "get_entry",
    "items",
    "keys",
    "kind",
    "line_of",
    "lookup",
    "parse_keypath",
    "scalar_text",
    "to_python",
    "value_text",
]
