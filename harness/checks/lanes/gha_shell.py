"""``pytest -m EXPR`` calls in a workflow step's ``run:`` script, read with a real shell parser.

The script is parsed with ``bashlex`` (a pure-Python bash parser; nothing is executed). A command
is followed through the wrappers CI puts around pytest: assignments before it, ``env``, ``sudo``,
``time``, ``nice``, ``timeout``, ``uv run``/``poetry run``/``pipenv run``/``hatch run``/``pdm run``/
``conda run``, ``coverage run -m pytest``, ``python -m pytest``, ``docker run``/``docker exec``/
``docker compose run|exec`` (their ``-e NAME=VALUE`` kept for the command inside), ``bash -c``/
``sh -c`` strings (parsed again, nested quotes and escapes included), and, read from the same ref
through the caller's ``read``: ``tox -e ENV`` (the environment's commands in ``tox.ini`` or
pyproject.toml, ``{posargs}`` replaced), ``pixi run TASK`` (the task in ``pixi.toml`` or
``[tool.pixi]``) and shell scripts the step runs (``bash ci/test.sh``, ``./ci/test.sh``; ``$1``…
from the call). Shell variables assigned in the script are followed (an assignment inside
``if``/``case``/a loop is one possible value among others); what is left (``$NAME`` from the step's
``env:``) the caller expands. ``${{ … }}`` is kept as written.

Every bound is explicit (script size, nesting of ``bash -c``, values per variable); what cannot be
read (a line the parser refuses, pytest after a command it does not know, a value from a command
substitution) comes back with the reason.
"""

from __future__ import annotations

import bisect
import posixpath
import re
import shlex
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.checks.lanes.gha_expr import segments
from harness.checks.lanes.lane_expr import SHELL_PARAM
from harness.checks.lanes.task_config import pixi_tasks_in, split_words, tox_ini, tox_pyproject
from harness.checks.lanes.wrappers import (
    PASS_ON,
    PYTHON,
    RUNNERS,
    SHELLS,
    SILENT,
    VALUE_OPTS,
    is_pytest,
)

MAX_SCRIPT = 65_536  # characters of one run: script that the parser reads
MAX_NESTING = 3  # bash -c inside docker run inside bash -c …
MAX_VALUES = 8  # alternative values of one variable (assignments in branches)
MAX_NODES = 20_000  # syntax nodes walked in one script
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_WHOLE_EXPR = re.compile(r"\$\{\{.*\}\}", re.S)


@dataclass(frozen=True)
class Word:
    """One shell word after quote removal: its text, the variables it expands, where it is written."""

    text: str
    params: frozenset[str] = frozenset()
    unknown: str | None = None  # why its value is not known (a command substitution)
    pos: int = 0  # offset in the outermost script
    where: tuple[str, int] | None = None  # (file, line) in a task's config, not the script


@dataclass(frozen=True)
class PytestCall:
    """One ``-m`` expression a pytest command in the script runs with (``$NAME`` left for the step env)."""

    expression: str
    pos: int  # offset of the text the expression is written in (the -m word, or an assignment's value)
    via: tuple[str, ...] = ()  # wrappers passed on the way: ("docker run", "bash -c")
    verbatim: bool = True  # written as is at ``pos`` (not composed from variables)
    where: tuple[str, int] | None = None  # (file, line) in pixi.toml / tox.ini, not the script
    written: str = ""  # the -m word as written (before the script's variables were substituted)


@dataclass
class ShellRead:
    """The pytest calls with ``-m`` in a script, and the pytest mentions that could not be read."""

    calls: list[PytestCall] = field(default_factory=list)
    unread: list[tuple[int, str]] = field(default_factory=list)  # (offset, why)


Vars = dict[str, list[Word] | None]  # name → possible values (None: not knowable here)


def _placeholders(script: str) -> tuple[str, dict[str, str]]:
    """``script`` with each ``${{ … }}`` replaced by a same-length shell word, and the way back."""
    prefix = next(p for p in ("HGX", "HGY", "HGZ", "HGQ") if p not in script)
    out, back, pos = [], {}, 0
    for i, seg in enumerate(segments(script)):
        text = script[seg.start : seg.end]
        token = f"{prefix}{i}"
        token = (token + "_" * max(0, len(text) - len(token) - 1) + "X")[: max(len(text), 6)]
        if len(token) != len(text):  # a six-character ${{}}: too short for a token; keep it
            continue
        back[token] = text
        out += [script[pos : seg.start], token]
        pos = seg.end
    out.append(script[pos:])
    return "".join(out), back


def _restore(text: str, back: dict[str, str]) -> str:
    for token, original in back.items():
        if token in text:
            text = text.replace(token, original)
    return text


def _square(script: str) -> str:
    """``[[ … ]]`` as ``[ … ]`` (same length): the parser knows only the single-bracket test."""
    return re.sub(
        r"(?<![^\s;&|(])\[\[(?=\s)", "[ ", re.sub(r"(?<=\s)\]\](?=[\s;&|)]|$)", " ]", script)
    )


class _Reader:
    def __init__(self, back: dict[str, str], read: Callable[[str], str | None] | None) -> None:
        self.back = back
        self.read = read
        self._tasks: dict[str, str | None] | None = None
        self._tox: dict[str, list[list[str]]] | None = None
        self._config: dict[str, tuple[str, str]] = {}  # "pixi"/"tox" → (path, text) read
        # while a script file is walked: its path, the call's offset, offset → line in the file
        self.file: tuple[str, int, Callable[[int], int]] | None = None
        self.out = ShellRead()
        self.nodes = 0
        self.text = ""  # the text the tree being walked was parsed from

    # -- words ---------------------------------------------------------------------------------
    def word(self, node: Any, outer: int | None, shift: int) -> Word:
        params: set[str] = set()
        unknown = None
        for part in getattr(node, "parts", []) or []:
            kind = getattr(part, "kind", "")
            if kind == "parameter":
                params.add(str(part.value))
            elif kind in ("commandsubstitution", "processsubstitution"):
                unknown = "set by a command substitution"
        text = _restore(_unquote(self.text[node.pos[0] : node.pos[1]], str(node.word)), self.back)
        if self.file is not None and outer is None:  # a script file the step runs: its own lines
            path, at, lines_before = self.file
            line = lines_before(shift + node.pos[0])
            return Word(text, frozenset(params), unknown, at, (path, line))
        return Word(
            text, frozenset(params), unknown, shift + node.pos[0] if outer is None else outer
        )

    def expand(self, w: Word, env: Vars) -> list[Word]:
        """``w`` with the script's variables substituted (one result per combination of values)."""
        if w.unknown:
            return [w]
        names = {m.group(1) or m.group(4) for m in SHELL_PARAM.finditer(w.text)}
        names = {
            n
            for n in names
            if any(p == n or p.startswith(n + ":") or p.startswith(n + "-") for p in w.params)
        }
        results = [w]
        for name in sorted(names):
            if name not in env:
                continue  # the step's env: (or unknown): the caller expands it
            values = env[name]
            if values is None:
                why = f"${name} is set by a command substitution"
                return [Word(w.text, w.params, why, w.pos, w.where)]
            nxt: list[Word] = []
            for r in results:
                for v in values or [Word("")]:
                    text = SHELL_PARAM.sub(_substitute(name, v.text), r.text)
                    whole = SHELL_PARAM.fullmatch(r.text.strip()) is not None
                    nxt.append(
                        Word(
                            text,
                            (
                                r.params
                                - {p for p in r.params if p.split(":")[0].split("-")[0] == name}
                            )
                            | v.params,
                            v.unknown,
                            v.pos if whole else r.pos,
                            v.where if whole else r.where,
                        )
                    )
            results = nxt[:MAX_VALUES]
        return results

    # -- the syntax tree -----------------------------------------------------------------------
    def script(
        self, text: str, env: Vars, outer: int | None, via: tuple[str, ...], depth: int
    ) -> None:
        if depth > MAX_NESTING:
            self.out.unread.append(
                (outer or 0, f"{' → '.join(via)}: nested deeper than {MAX_NESTING}")
            )
            return
        if len(text) > MAX_SCRIPT:
            self.out.unread.append(
                (outer or 0, f"not read: the script is over {MAX_SCRIPT} characters")
            )
            return
        text = _square(text)
        bashlex = _bashlex()
        try:
            trees = bashlex.parse(text)
        except Exception:  # noqa: BLE001 - the reviewed script is hostile input; read it line by line
            self.lines(text, env, outer, via, depth)
            return
        saved, self.text = self.text, text
        for tree in trees:
            self.node(tree, env, outer, via, depth, conditional=False)
        self.text = saved

    def lines(
        self, text: str, env: Vars, outer: int | None, via: tuple[str, ...], depth: int
    ) -> None:
        """The fallback when the whole script does not parse: one logical line at a time, with the
        nesting of ``if``/``case``/loops tracked from their keywords."""
        nest, pos, pending, start = 0, 0, "", 0
        for line in text.split("\n"):
            here = pos
            pos += len(line) + 1
            if not pending:
                start = here
            pending += line + "\n"
            if line.rstrip().endswith("\\"):
                continue
            chunk, pending = pending, ""
            stripped = chunk.strip()
            first = stripped.split(None, 1)[0] if stripped else ""
            if not stripped or first.startswith("#"):
                continue
            try:
                trees = _bashlex().parse(chunk)
            except Exception as exc:  # noqa: BLE001
                if first in ("if", "case", "for", "while", "until", "select"):
                    nest += 1
                elif first in ("fi", "esac", "done"):
                    nest = max(0, nest - 1)
                if "pytest" in chunk and "-m" in chunk:
                    why = str(exc).splitlines()[0][:80] if str(exc) else type(exc).__name__
                    self.out.unread.append(
                        (
                            start if outer is None else outer,
                            f"the shell parser refused this line: {why}",
                        )
                    )
                continue
            saved, self.text = self.text, chunk
            for tree in trees:
                self.node(tree, env, outer, via, depth, nest > 0, start)
            self.text = saved

    def node(
        self,
        node: Any,
        env: Vars,
        outer: int | None,
        via: tuple[str, ...],
        depth: int,
        conditional: bool,
        shift: int = 0,
    ) -> None:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            return
        kind = getattr(node, "kind", "")
        if kind == "command":
            self.command(node, env, outer, via, depth, conditional, shift)
            return
        branch = conditional or kind in ("if", "for", "while", "until", "function", "case")
        if kind == "list":  # a && b || c: what follows an operator may not run
            after_op = False
            for part in node.parts:
                if getattr(part, "kind", "") == "operator" and part.op in ("&&", "||"):
                    after_op = True
                self.node(part, env, outer, via, depth, conditional or after_op, shift)
            return
        for child in _children(node):
            self.node(child, env, outer, via, depth, branch, shift)

    def command(
        self,
        node: Any,
        env: Vars,
        outer: int | None,
        via: tuple[str, ...],
        depth: int,
        conditional: bool,
        shift: int,
    ) -> None:
        words: list[Word] = []
        local = dict(env)
        assigns: list[tuple[str, Word]] = []
        for part in node.parts:
            kind = getattr(part, "kind", "")
            w = self.word(part, outer, shift) if kind in ("word", "assignment") else None
            if kind == "assignment" and not words and w is not None:
                name, _, value = w.text.partition("=")
                vw = Word(value, w.params, w.unknown, w.pos + len(name) + 1)
                assigns.append((name, vw))
            elif kind == "word" and w is not None:
                words.append(w)
        for name, vw in assigns:
            values = None if vw.unknown else self.expand(vw, local)
            if words:  # NAME=VALUE cmd: for that command only
                local[name] = values
            elif values is None:
                env[name] = None
            elif conditional and (before := env.get(name)):
                env[name] = (before + [v for v in values if v not in before])[:MAX_VALUES]
            else:
                env[name] = values
        if words:
            self.words(words, local, via, depth)

    # -- wrappers ------------------------------------------------------------------------------
    def words(self, words: Sequence[Word], env: Vars, via: tuple[str, ...], depth: int) -> None:
        """Follow a simple command through its wrappers (``env``, ``timeout``, ``uv run``,
        ``coverage run``, docker, shells, scripts, tox, pixi) to the pytest it runs, if any."""
        i = 0
        while i < len(words):
            head = words[i].text
            base = posixpath.basename(head)
            if _WHOLE_EXPR.fullmatch(head) and i + 1 < len(words):
                i += 1  # a ${{ }} in command position: assignments (or nothing) once rendered
                continue
            if base == "env":
                i, env = self.env_assignments(words, _skip_opts(words, i + 1, "env"), env)
                continue
            if base in PASS_ON:
                i = _skip_opts(words, i + 1, base)
                if base == "timeout" and i < len(words):
                    i += 1  # the duration
                continue
            if base in RUNNERS or base == "uvx":
                if base == "uvx":
                    i = _skip_opts(words, i + 1, "run")
                    via = (*via, "uvx")
                    continue
                if base == "pixi" and i + 1 < len(words) and words[i + 1].text == "run":
                    self.pixi(words, _skip_opts(words, i + 2, "run"), env, via, depth)
                    return
                if i + 1 < len(words) and words[i + 1].text == "run":
                    i = _skip_opts(words, i + 2, "run")
                    via = (*via, f"{base} run")
                    continue
                if (
                    base == "uv"
                    and words[i + 1 : i + 3]
                    and [w.text for w in words[i + 1 : i + 3]] == ["tool", "run"]
                ):
                    i = _skip_opts(words, i + 3, "run")
                    continue
                return
            if base == "coverage" and i + 1 < len(words) and words[i + 1].text == "run":
                i = _skip_opts(words, i + 2, "coverage")
                via = (*via, "coverage run")
                if i < len(words) and words[i].text == "-m":
                    i += 1
                continue
            if base in ("docker", "podman"):
                self.docker(words, i, env, via, depth)
                return
            if base in SHELLS:
                self.shell(words, i, env, via, depth)
                return
            if head.endswith(".sh") and "/" in head:  # ./ci/run_tests.sh ARGS
                self.script_file(words[i], words[i + 1 :], env, via, depth)
                return
            if base == "tox":
                self.tox(words, i, env, via, depth)
                return
            if PYTHON.match(base) or (head.startswith("$") and base.lower().find("python") >= 0):
                j = _skip_opts(words, i + 1, "python", stop="-m")
                if j + 1 < len(words) and words[j].text == "-m" and words[j + 1].text == "pytest":
                    self.pytest(words[j + 2 :], env, (*via, "python -m pytest"))
                return
            if (
                base in ("pytest", "py.test")
                or head == "-m"
                and i + 1 < len(words)
                and words[i + 1].text == "pytest"
            ):
                self.pytest(words[i + (2 if head == "-m" else 1) :], env, via)
                return
            break
        self.not_followed(words[i:])

    def env_assignments(self, words: Sequence[Word], i: int, env: Vars) -> tuple[int, Vars]:
        """``env NAME=VALUE …``: the position after the assignments, and ``env`` with them."""
        while i < len(words) and re.match(_NAME + "=", words[i].text):
            name, _, value = words[i].text.partition("=")
            env = {
                **env,
                name: self.expand(
                    Word(value, words[i].params, words[i].unknown, words[i].pos), env
                ),
            }
            i += 1
        return i, env

    def not_followed(self, rest: Sequence[Word]) -> None:
        """A command not read whose arguments look like pytest with ``-m``: said, with why."""
        if (
            rest
            and posixpath.basename(rest[0].text) not in SILENT
            and any(is_pytest(w.text) for w in rest[1:])
            and any(w.text.startswith("-m") for w in rest)
        ):
            self.out.unread.append(
                (rest[0].pos, f"pytest after `{rest[0].text[:40]}`, a command not read")
            )

    def docker(
        self, words: Sequence[Word], i: int, env: Vars, via: tuple[str, ...], depth: int
    ) -> None:
        j = i + 1
        label = posixpath.basename(words[i].text)
        if j < len(words) and words[j].text == "compose":
            j += 1
            label += " compose"
            j = _skip_opts(words, j, "docker")
        if j >= len(words) or words[j].text not in ("run", "exec"):
            return
        label += " " + words[j].text
        j += 1
        inner = dict(env)
        while j < len(words) and words[j].text.startswith("-") and words[j].text != "--":
            opt = words[j].text
            name, eq, value = opt.partition("=")
            if name in ("-e", "--env"):
                given = value if eq else (words[j + 1].text if j + 1 < len(words) else "")
                src = words[j] if eq else (words[j + 1] if j + 1 < len(words) else words[j])
                var, has, val = given.partition("=")
                if has and re.fullmatch(_NAME, var):
                    off = src.pos + (len(opt) - len(value) if eq else 0) + len(var) + 1
                    inner[var] = self.expand(Word(val, src.params, src.unknown, off), env)
            if name in VALUE_OPTS["docker"] and not eq:
                j += 1
            j += 1
        if j < len(words) and words[j].text == "--":
            j += 1
        self.words(
            words[j + 1 :], inner, (*via, label), depth
        )  # after the image / container / service

    def shell(
        self, words: Sequence[Word], i: int, env: Vars, via: tuple[str, ...], depth: int
    ) -> None:
        j = i + 1
        while j < len(words) and words[j].text.startswith("-"):
            opt = words[j].text
            if opt in ("-o", "+o", "-O", "+O"):
                j += 2
                continue
            if not opt.startswith("--") and "c" in opt[1:]:
                if j + 1 < len(words):
                    body = words[j + 1]
                    if body.unknown:
                        self.out.unread.append(
                            (body.pos, f"{words[i].text} -c: the script is {body.unknown}")
                        )
                        return
                    self.script(
                        body.text,
                        dict(env),
                        body.pos,
                        (*via, f"{posixpath.basename(words[i].text)} -c"),
                        depth + 1,
                    )
                return
            j += 1
        if j < len(words):  # bash path/to/script.sh ARGS: the file at the same ref
            self.script_file(words[j], words[j + 1 :], env, via, depth)

    def script_file(
        self, path_word: Word, args: Sequence[Word], env: Vars, via: tuple[str, ...], depth: int
    ) -> None:
        """A shell script in the repository that the step runs (``bash ci/test.sh A``, ``./x.sh``):
        read at the same ref (a path relative to the checkout; ``cd`` is not followed), ``$1``…
        from the call's arguments, its lanes placed on the script's own lines."""
        rel = posixpath.normpath(path_word.text)
        if (
            self.read is None
            or "$" in path_word.text
            or rel.startswith(("/", ".."))
            or self.file is not None  # a script file calling another: not followed
        ):
            return
        text = self.read(rel)
        if text is None:
            return
        if "-m" not in text and "pixi" not in text and "tox" not in text:
            return
        inner: Vars = dict(env)
        for n, arg in enumerate(args[:9], 1):
            inner[str(n)] = self.expand(arg, env)
        starts = [0] + [k + 1 for k, ch in enumerate(text) if ch == "\n"]

        def line_of(offset: int) -> int:
            return bisect.bisect_right(starts, offset)

        self.file = (rel, path_word.pos, line_of)
        try:
            self.script(text, inner, None, (*via, f"script {rel}"), depth + 1)
        finally:
            self.file = None

    def pixi_tasks(self) -> dict[str, str | None]:
        """The pixi tasks at the same ref (``pixi.toml``, or ``[tool.pixi]`` in pyproject.toml):
        name → the command it runs (None: a task whose command is not one string)."""
        if self._tasks is None:
            self._tasks = {}
            for path, prefix in (("pixi.toml", ()), ("pyproject.toml", ("tool", "pixi"))):
                text = self.read(path) if self.read else None
                if text is not None:
                    self._tasks = pixi_tasks_in(text, prefix)
                    if self._tasks:
                        self._config["pixi"] = (path, text)
                        break
        return self._tasks

    def pixi(
        self, words: Sequence[Word], j: int, env: Vars, via: tuple[str, ...], depth: int
    ) -> None:
        """``pixi run TASK ARGS``: the task's command from the project's pixi tasks, ARGS appended
        (a command that is no task runs as itself)."""
        if j >= len(words):
            return
        name, args, tasks = words[j].text, list(words[j + 1 :]), self.pixi_tasks()
        if name not in tasks and not _WHOLE_EXPR.fullmatch(name):
            self.words(words[j:], env, (*via, "pixi run"), depth)
            return
        if _WHOLE_EXPR.fullmatch(name):  # the task is picked when CI runs
            runs_pytest = [c for c in tasks.values() if c and "pytest" in c]
            given = any(w.text.startswith("-m") for w in args)
            if runs_pytest and given:  # a -m given after the task is pytest's, whichever task runs
                self.pytest(args, env, (*via, f"pixi run {name}"))
            elif any(" -m" in c.split("pytest", 1)[-1] for c in runs_pytest):
                self.out.unread.append(
                    (
                        words[j].pos,
                        f"pixi run {name}: the task (and its own -m) is picked when CI runs",
                    )
                )
            return
        cmd = tasks[name]
        commands = [cmd] if cmd else []
        if cmd is None:
            self.out.unread.append((words[j].pos, f"pixi task {name}: its command is not read"))
        for cmd in commands:
            try:
                tokens = shlex.split(cmd, comments=True)
            except ValueError:
                continue
            cut = max(
                (k + 1 for k, t in enumerate(tokens) if t in ("&&", "||", ";", "|")), default=0
            )
            task_words = [self.config_word(t, "pixi", words[j].pos) for t in tokens[cut:]]
            self.words(task_words + args, env, (*via, f"pixi run {name}"), depth)

    def config_word(self, token: str, kind: str, pos: int) -> Word:
        """A word of a pixi task's or tox environment's command, placed on the config file's first
        line that holds it."""
        path, text = self._config.get(kind, ("", ""))
        lines = text.splitlines()
        after_m = re.compile(r"-m\s*=?\s*[\"']?" + re.escape(token))  # as a -m value first
        line = next((n for n, ln in enumerate(lines, 1) if after_m.search(ln)), None) or next(
            (n for n, ln in enumerate(lines, 1) if token in ln), None
        )
        return Word(token, frozenset(), None, pos, (path, line) if path and line else None)

    def tox_envs(self) -> dict[str, list[list[str]]] | None:
        """tox's commands per environment at the same ref (``tox.ini``, or pyproject.toml's
        ``legacy_tox_ini`` or ``[tool.tox]``): "" is the base ``[testenv]``; None: no tox config."""
        if self._tox is None:
            self._tox = {}
            ini = self.read("tox.ini") if self.read else None
            pyproject = self.read("pyproject.toml") if self.read and ini is None else None
            if ini is not None:
                self._tox = tox_ini(ini)
                self._config["tox"] = ("tox.ini", ini)
            elif pyproject is not None:
                self._tox = tox_pyproject(pyproject)
                self._config["tox"] = ("pyproject.toml", pyproject)
        return self._tox or None

    def tox(
        self, words: Sequence[Word], i: int, env: Vars, via: tuple[str, ...], depth: int
    ) -> None:
        """``tox [run] [-e ENVS] [-- ARGS]``: each environment's commands from the tox config at the
        same ref, ``{posargs}`` replaced by ARGS; without a config, ARGS as pytest's."""
        texts = [w.text for w in words]
        k, names, posargs = i + 1, "", None
        while k < len(words):
            t = texts[k]
            if t == "--":
                posargs = list(words[k + 1 :])
                break
            if t in ("-e", "--env") and k + 1 < len(words):
                names, k = texts[k + 1], k + 2
                continue
            if t.startswith("-e") and len(t) > 2:
                names = t[2:].lstrip("=")
            k += 1
        config = self.tox_envs()
        if config is None:
            if posargs:
                self.pytest(posargs, env, (*via, "tox -- posargs"))
            return
        picked = [""] if not names or _WHOLE_EXPR.fullmatch(names) else names.split(",")
        if _WHOLE_EXPR.fullmatch(names) and any(
            name and any("pytest" in " ".join(c) for c in cmds) for name, cmds in config.items()
        ):
            self.out.unread.append(
                (words[i].pos, f"tox -e {names}: the environment is picked when CI runs")
            )
        for name in picked:
            commands = config.get(name, config.get("", []))
            for command in commands:
                argv: list[Word] = []
                for token in command:
                    m = re.fullmatch(r"\{posargs(?::(.*))?\}", token)
                    if m and posargs is not None:
                        argv += posargs
                    elif m:
                        default = split_words(m.group(1) or "")
                        argv += [self.config_word(d, "tox", words[i].pos) for d in default]
                    else:
                        argv.append(self.config_word(token, "tox", words[i].pos))
                self.words(argv, env, (*via, f"tox -e {name}" if name else "tox"), depth)

    def pytest(self, args: Sequence[Word], env: Vars, via: tuple[str, ...]) -> None:
        found: Word | None = None  # pytest stores -m: the last one given is the one it uses
        k = 0
        while k < len(args):
            t = args[k].text
            if t == "--":
                break
            if t == "-m" and k + 1 < len(args):
                found = args[k + 1]
                k += 2
                continue
            if t.startswith("-m") and not t.startswith("--") and len(t) > 2:
                raw = t[2:]
                strip = len(raw) - len(raw.lstrip("="))
                w = args[k]
                found = Word(raw[strip:], w.params, w.unknown, w.pos + 2 + strip, w.where)
            k += 1
        if found is None:
            return
        for value in self.expand(found, env):
            if value.unknown:
                self.out.unread.append((value.pos, f"pytest -m {found.text[:60]}: {value.unknown}"))
                continue
            same = value.text == found.text and value.pos == found.pos
            self.out.calls.append(
                PytestCall(value.text, value.pos, via, same, value.where, found.text)
            )


def _bashlex() -> Any:
    """The shell parser, imported when a script is read (building its tables takes ~0.1 s, which
    every run that only validates a lane expression would pay; kept once built:
    bashlex_tables.py)."""
    from harness.checks.lanes.bashlex_tables import load

    return load()


def _substitute(name: str, value: str) -> Callable[[re.Match[str]], str]:
    def sub(m: re.Match[str]) -> str:
        if (m.group(1) or m.group(4)) != name:
            return m.group(0)
        if not value and m.group(2) == ":-":
            return m.group(3) or ""
        return value

    return sub


def _unquote(source: str, parsed: str) -> str:
    """A word's text after quote removal, from its source (``'a'"b"\\c`` → ``abc``): the parser's
    own text keeps the quotes of a word that mixes quoting styles. Its text where that fails."""
    if not any(q in source for q in "'\"\\"):
        return parsed
    try:
        lexer = shlex.shlex(source, posix=True, punctuation_chars=False)
        lexer.whitespace_split = True
        lexer.commenters = ""
        words = list(lexer)
    except ValueError:
        return parsed
    return words[0] if len(words) == 1 else parsed


def _skip_opts(words: Sequence[Word], i: int, kind: str, stop: str | None = None) -> int:
    takes = VALUE_OPTS.get(kind, set())
    while i < len(words):
        t = words[i].text
        if t == stop or not t.startswith("-") or t == "-":
            return i
        if t == "--":
            return i + 1
        if t in takes:
            i += 1
        i += 1
    return i


def _children(node: Any) -> Iterator[Any]:
    for attr in ("parts", "list"):
        for child in getattr(node, attr, None) or []:
            if hasattr(child, "kind"):
                yield child
    command = getattr(node, "command", None)
    if hasattr(command, "kind"):
        yield command


def might_hold_lanes(script: str) -> bool:
    """A script without ``-m`` (nor a pixi task, tox environment or script file, which may hold
    one) has no lane: it is not parsed."""
    return any(k in script for k in ("-m", "pixi", "tox", ".sh"))


def pytest_calls(script: str, read: Callable[[str], str | None] | None = None) -> ShellRead:
    """The ``pytest -m`` calls of a ``run:`` script, through wrappers and ``bash -c`` strings
    (``read``: files at the same ref, for the tasks ``pixi run`` names)."""
    text, back = _placeholders(script)
    reader = _Reader(back, read)
    if not might_hold_lanes(script):
        return reader.out
    reader.script(text, {}, None, (), 0)
    first: dict[
        tuple[str, int, Any], PytestCall
    ] = {}  # one call per expression written in one place
    for call in reader.out.calls:
        first.setdefault((call.expression, call.pos, call.where), call)
    reader.out.calls = list(first.values())
    reader.out.unread = list(dict.fromkeys(reader.out.unread))
    return reader.out
