"""What a project's test environment holds, read from its packaging files at one commit.

Read (never executed): ``pyproject.toml`` — ``[project].dependencies``, the optional-dependencies
and PEP 735 dependency-groups named test/tests/testing/dev (self-references and
``include-group`` followed) — and ``requirements-test*``/``requirements-dev*`` style files (their
``-r``/``-c`` includes followed, at most a few levels). Dependencies the build backend makes
(``dynamic``, or no ``[project]`` table) are read where they are declared, not built:
setuptools' ``[tool.setuptools.dynamic]`` files, ``setup.cfg``'s ``install_requires`` and test
extras, pbr's ``requirements.txt`` (OpenStack) and poetry's own tables (``envs/poetry.py``); where
none says, the report names them as not installed. tox's ``[testenv]`` adds what it installs
(``envs/tox.py``). The repository is hostile input: option lines
(``--index-url``, ``--find-links``, ``-e``, local paths, URLs) are dropped and named, sizes are
bounded, paths outside the tree are never read, and the spec never names the project itself (its
tree goes first on ``sys.path``).
"""

from __future__ import annotations

import configparser
import hashlib
import json
import posixpath
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.envs.tox import TestEnv

GROUPS = ("test", "tests", "testing", "dev")
MAX_FILE = 512 * 1024
MAX_INCLUDES = 16
_REQ_FILE = re.compile(
    r"^(?:requirements[-_/](?:test|tests|testing|dev)[^/]*\.txt"
    r"|(?:test|tests|testing|dev)[-_]requirements\.txt"
    r"|requirements/(?:test|tests|testing|dev)[^/]*\.txt)$"
)
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[([^\]]*)\])?")

Reader = Callable[[str], bytes | None]


@dataclass
class EnvSpec:
    """Requirement lines to install, the files they came from, and what was left out (and why)."""

    requirements: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # "pyproject.toml [project.dependencies]", …
    dropped: list[str] = field(default_factory=list)  # lines not installed, with the reason
    digests: dict[str, str] = field(default_factory=dict)  # file → sha256 of its content
    project: str | None = None  # the project's own name (never installed: its tree is on the path)
    # Only distributions uploaded before this UTC time ("2025-05-02T10:11:12Z"; "": the newest):
    # what the project's CI installed then, the same on every later run.
    as_of: str = ""
    constraints: list[str] = field(default_factory=list)  # pins the user gave (pip's -c)

    def key(self, python_version: str) -> str:
        """What an environment built from this spec is a function of."""
        parts: list[Any] = [sorted(self.requirements), self.digests, python_version]
        parts += [self.as_of] if self.as_of else []
        parts += [sorted(self.constraints)] if self.constraints else []
        blob = json.dumps(parts, sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:20]


AS_OF_ENV = "HARNESS_ENV_AS_OF"


def as_of_told() -> str:
    """``HARNESS_ENV_AS_OF`` as set ("" or ``head``: HEAD's date)."""
    import os

    told = os.environ.get(AS_OF_ENV, "").strip()
    return "" if told == "head" else told


def as_of(committer_time: int, dated: bool = True) -> str:
    """The upload time an environment is limited to: the end of HEAD's commit day (UTC: every
    commit of a day shares one environment), unless ``HARNESS_ENV_AS_OF`` says ``newest`` (no
    limit) or names a date or time of its own; "" for a commit git could not date."""
    import datetime as dt

    from harness.errors import UsageError

    told = as_of_told()
    if told == "newest":
        return ""
    if told:
        try:
            when = dt.datetime.fromisoformat(told.replace("Z", "+00:00"))
            if when.tzinfo is None:
                when = when.replace(tzinfo=dt.timezone.utc)
            return when.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        except (ValueError, OverflowError):
            raise UsageError(
                f"{AS_OF_ENV}={told!r}: expected head, newest, or a date (2025-05-02) or time"
            ) from None
    if not dated or committer_time <= 0:
        return ""
    day = dt.datetime.fromtimestamp(committer_time, dt.timezone.utc)
    return day.strftime("%Y-%m-%dT23:59:59Z")


def norm(name: str) -> str:
    """PEP 503 normalised distribution name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def read_spec(read: Reader, listing: list[str]) -> EnvSpec:
    """The spec of the tree that ``read`` (path → bytes or None) and ``listing`` (every path of the
    tree) describe; pytest is always in it."""
    spec = EnvSpec()
    tox = _tox(read, listing, spec)
    # the extras and groups a test environment installs: the usual names, and tox's own
    extras = tuple(dict.fromkeys([*GROUPS, *(tox.extras if tox else ())]))
    groups = tuple(dict.fromkeys([*GROUPS, *(tox.groups if tox else ())]))
    made = _from_pyproject(read, spec, extras, groups)
    if made:
        _made_by_backend(read, listing, spec, made, extras)
    found = sorted(p for p in listing if _REQ_FILE.match(p))
    tests = [p for p in found if re.search(r"(?:^|[-_/])test", p)]
    # a project's dev and test lock files may pin one package twice, differently: the test
    # files where there are any, else the dev ones
    for path in tests or found:
        _from_requirements(read, path, spec, depth=0, constraint=False)
    spec.dropped += [
        f"{p} (a test requirements file is read instead)" for p in found if tests and p not in tests
    ]
    if tox is not None:
        _files(read, spec, tox.files, "tox.ini [testenv] deps")
        if tox.deps:
            spec.sources.append("tox.ini [testenv] deps")
        for line in tox.deps:
            _add(spec, line, "tox.ini")
        spec.dropped += tox.dropped
    if not any(requirement_name(r) == "pytest" for r in spec.requirements):
        spec.requirements.append("pytest")
        spec.sources.append("pytest (added: the tests section runs it)")
    spec.requirements = list(dict.fromkeys(spec.requirements))
    return spec


def requirement_name(line: str) -> str | None:
    """The normalised distribution name a requirement line names (None: it names none)."""
    m = _NAME.match(line)
    return norm(m.group(1)) if m else None


def _load_toml(data: bytes) -> dict[str, Any] | None:
    try:
        import tomllib
    except ImportError:  # Python 3.10: no TOML reader in the standard library
        return None
    try:
        loaded = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    return loaded if isinstance(loaded, dict) else None


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


class _Made:
    """What ``pyproject.toml`` leaves to the build backend: which of the dependencies and test
    extras, and what it says about where they are (``files``: setuptools' dynamic files, by
    ``dependencies`` or extra name)."""

    def __init__(self) -> None:
        self.dependencies = False
        self.extras = False
        self.files: dict[str, list[str]] = {}
        self.backend = False  # a [build-system] table, or dependencies named dynamic

    def __bool__(self) -> bool:
        return self.dependencies or self.extras


def _tox(read: Reader, listing: list[str], spec: EnvSpec) -> TestEnv | None:
    """``tox.ini``'s ``[testenv]`` (``envs/tox.py``), its digest kept."""
    from harness.envs.tox import testenv

    data = read("tox.ini") if "tox.ini" in listing else None
    env = testenv(data) if data is not None else None
    if env is not None and data is not None:
        spec.digests["tox.ini"] = hashlib.sha256(data).hexdigest()
    return env


def _from_pyproject(
    read: Reader, spec: EnvSpec, names: tuple[str, ...], group_names: tuple[str, ...]
) -> _Made:
    """``pyproject.toml``'s own lines (the extras ``names`` and the dependency groups
    ``group_names``); what it leaves to the build backend is returned (all of it where there is
    no ``pyproject.toml`` or no ``[project]`` table)."""
    made = _Made()
    data = read("pyproject.toml")
    if data is None:
        made.dependencies = made.extras = True
        return made
    if len(data) > MAX_FILE:
        spec.dropped.append(f"pyproject.toml: larger than {MAX_FILE} bytes, not read")
        made.dependencies = made.extras = made.backend = True  # (setup.cfg may still say)
        return made
    spec.digests["pyproject.toml"] = hashlib.sha256(data).hexdigest()
    doc = _load_toml(data)
    if doc is None:
        spec.dropped.append("pyproject.toml: not valid TOML (or no TOML reader), not read")
        made.dependencies = made.extras = made.backend = True
        return made
    build = doc.get("build-system")
    raw_project = doc.get("project")
    if not isinstance(raw_project, dict):
        made.dependencies = made.extras = True
    else:
        dynamic = _strings(raw_project.get("dynamic"))
        made.dependencies = "dependencies" in dynamic
        made.extras = "optional-dependencies" in dynamic
    made.backend = isinstance(build, dict) or (isinstance(raw_project, dict) and made.dependencies)
    tool = doc.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    if not isinstance(raw_project, dict) and isinstance(poetry, dict):
        _from_poetry(poetry, spec, group_names)
        made.dependencies = made.extras = False  # (poetry's tables declare them)
    setuptools = tool.get("setuptools") if isinstance(tool, dict) else None
    files = setuptools.get("dynamic") if isinstance(setuptools, dict) else None
    if isinstance(files, dict):
        deps = files.get("dependencies")
        if made.dependencies and isinstance(deps, dict):
            made.files["dependencies"] = _file_names(deps.get("file"))
        extras = files.get("optional-dependencies")
        for g in names if made.extras and isinstance(extras, dict) else ():
            entry = extras.get(g)  # type: ignore[union-attr]
            if isinstance(entry, dict):
                made.files[g] = _file_names(entry.get("file"))
    project: dict[str, Any] = raw_project if isinstance(raw_project, dict) else {}
    name = project.get("name") if isinstance(project.get("name"), str) else None
    spec.project = norm(name) if name else spec.project
    extras = project.get("optional-dependencies")
    extras = extras if isinstance(extras, dict) else {}
    deps = _strings(project.get("dependencies"))
    if deps:
        spec.sources.append("pyproject.toml [project.dependencies]")
    wanted = [g for g in names if g in extras]
    for g in wanted:
        spec.sources.append(f"pyproject.toml [project.optional-dependencies.{g}]")
    deps += _expand_extras(extras, wanted, spec.project)
    groups = doc.get("dependency-groups")
    groups = groups if isinstance(groups, dict) else {}
    for g in (g for g in group_names if g in groups):
        spec.sources.append(f"pyproject.toml [dependency-groups.{g}]")
        deps += _expand_group(groups, g, set())
    for line in deps:
        _add(spec, line, "pyproject.toml")
    return made


def _from_poetry(poetry: dict[str, Any], spec: EnvSpec, groups: tuple[str, ...]) -> None:
    """Poetry's own tables (``envs/poetry.py``): the project's dependencies and test groups."""
    from harness.envs.poetry import requirement_lines

    name = poetry.get("name")
    spec.project = norm(name) if isinstance(name, str) and name else None
    lines, dropped = requirement_lines(poetry, groups)
    spec.dropped += dropped
    for where in dict.fromkeys(w for _, w in lines):
        spec.sources.append(f"pyproject.toml {where}")
    for line, _ in lines:
        _add(spec, line, "pyproject.toml")


def _file_names(value: Any) -> list[str]:
    """``file = "a.txt"`` or ``file = ["a.txt", "b.txt"]``."""
    return [value] if isinstance(value, str) else _strings(value)


def _made_by_backend(
    read: Reader, listing: list[str], spec: EnvSpec, made: _Made, names: tuple[str, ...]
) -> None:
    """The dependencies and test extras the build backend makes, read where they are declared:
    setuptools' dynamic files, else ``setup.cfg`` (``[options] install_requires``,
    ``[options.extras_require]``; pbr's ``[extras]``), else pbr's ``requirements.txt``; what none
    declares is named as not installed."""
    cfg = _setup_cfg(read, spec) if "setup.cfg" in listing else None
    pbr = uses_pbr(read, listing)
    if spec.project is None and cfg is not None:
        name = cfg.get("metadata", "name", fallback=None)
        spec.project = norm(name.strip()) if name and name.strip() else None
    if made.dependencies:
        keys = ("install_requires", "install-requires")  # (setuptools reads the dashed one too)
        options = (
            next((cfg.get("options", k) for k in keys if cfg.has_option("options", k)), None)
            if cfg
            else None
        )
        if "dependencies" in made.files:
            _files(read, spec, made.files["dependencies"], "[tool.setuptools.dynamic]")
        elif options is not None:
            _cfg_lines(read, spec, options, "setup.cfg [options] install_requires")
        elif pbr and "requirements.txt" in listing:
            _files(read, spec, ["requirements.txt"], "pbr: the project's dependencies")
        elif "setup.py" in listing or made.backend:
            spec.dropped.append(
                "the project's own dependencies: made by its build backend (setup.py or a dynamic "
                "field no file declares), not read"
            )
    if made.extras:
        for g in names:
            if g in made.files:
                _files(read, spec, made.files[g], f"[tool.setuptools.dynamic] {g}")
                continue
            for section in ("options.extras_require", "extras") if cfg else ():
                value = cfg.get(section, g, fallback=None)  # type: ignore[union-attr]
                if value is not None:
                    _cfg_lines(read, spec, value, f"setup.cfg [{section}] {g}")


_PBR_SETUP = re.compile(rb"\bpbr\s*=\s*True\b")
_PBR_SECTION = re.compile(rb"^\[pbr\][ \t]*\r?$", re.MULTILINE)


def uses_pbr(read: Reader, listing: list[str]) -> bool:
    """Whether pbr builds the project (OpenStack): its ``[build-system]`` requires pbr, its
    ``setup.cfg`` has a ``[pbr]`` section or its ``setup.py`` calls ``setup(pbr=True)``."""
    data = read("pyproject.toml") if "pyproject.toml" in listing else None
    doc = _load_toml(data) if data is not None and len(data) <= MAX_FILE else None
    build = doc.get("build-system") if doc else None
    if isinstance(build, dict) and any(
        requirement_name(r) == "pbr" for r in _strings(build.get("requires"))
    ):
        return True
    cfg = read("setup.cfg") if "setup.cfg" in listing else None
    if cfg is not None and len(cfg) <= MAX_FILE and _PBR_SECTION.search(cfg):
        return True
    return _pbr_setup(read, listing)


def _pbr_setup(read: Reader, listing: list[str]) -> bool:
    """``setup.py`` calls ``setup(pbr=True)`` (its text searched, never run)."""
    data = read("setup.py") if "setup.py" in listing else None
    return data is not None and len(data) <= MAX_FILE and bool(_PBR_SETUP.search(data))


def _files(read: Reader, spec: EnvSpec, paths: list[str], why: str) -> None:
    """Requirement files the packaging names (a path outside the tree is named, never read)."""
    for path in paths:
        inner = posixpath.normpath(path.strip())
        if not path.strip() or inner.startswith(("..", "/")):
            spec.dropped.append(f"{path[:120]!r} ({why}): outside the repository")
            continue
        before = len(spec.sources)
        _from_requirements(read, inner, spec, depth=0, constraint=False)
        if len(spec.sources) > before:
            spec.sources[before] += f" ({why})"


def _setup_cfg(read: Reader, spec: EnvSpec) -> configparser.RawConfigParser | None:
    data = read("setup.cfg")
    if data is None or len(data) > MAX_FILE:
        spec.dropped.append(f"setup.cfg: missing or larger than {MAX_FILE} bytes, not read")
        return None
    cfg = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        cfg.read_string(data.decode("utf-8", "replace"), "setup.cfg")
    except configparser.Error as exc:
        spec.dropped.append(f"setup.cfg: not read ({str(exc).splitlines()[0][:120]})")
        return None
    spec.digests["setup.cfg"] = hashlib.sha256(data).hexdigest()
    return cfg


def _cfg_lines(read: Reader, spec: EnvSpec, value: str, where: str) -> None:
    """A ``setup.cfg`` list (one requirement a line; ``file: a.txt, b.txt`` names files)."""
    text = value.strip()
    if text.startswith("file:"):
        paths = [p for p in text[len("file:") :].split(",") if p.strip()]
        _files(read, spec, paths, where)
        return
    lines = [ln for ln in (x.strip() for x in text.splitlines()) if ln]
    if lines:
        spec.sources.append(where)
    for line in lines:
        _add(spec, line, "setup.cfg")


def _expand_extras(extras: dict[str, Any], names: list[str], project: str | None) -> list[str]:
    """The extras' lines, a self-reference (``proj[other]``) replaced by that extra's lines."""
    out: list[str] = []
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.add(name)
        for line in _strings(extras.get(name)):
            m = _NAME.match(line)
            if m and project and norm(m.group(1)) == project:
                todo += [e.strip() for e in (m.group(3) or "").split(",") if e.strip() in extras]
            else:
                out.append(line)
    return out


def _expand_group(groups: dict[str, Any], name: str, seen: set[str]) -> list[str]:
    if name in seen or len(seen) > MAX_INCLUDES:
        return []
    seen.add(name)
    out: list[str] = []
    for item in groups.get(name) or []:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict) and isinstance(item.get("include-group"), str):
            out += _expand_group(groups, item["include-group"], seen)
    return out


def _add(spec: EnvSpec, line: str, where: str) -> None:
    """One requirement line, kept when it names a distribution from the index (not the project)."""
    line = line.split(" #", 1)[0].strip()
    if not line or line.startswith("#"):
        return
    if not line.isprintable():
        # a line break inside one entry (pip's reader also breaks at \x85 and \u2028) would give
        # the installer a line of its own: an option
        spec.dropped.append(f"{where}: {line[:120]!r} (not one requirement line)")
        return
    name = requirement_name(line)
    if name is None or "://" in line or line.startswith((".", "/")) or " @ " in line:
        spec.dropped.append(f"{where}: {line[:120]!r} (not a distribution from the package index)")
        return
    if spec.project and name == spec.project:
        return  # the project itself: its tree is on the path
    spec.requirements.append(line)


def _from_requirements(
    read: Reader, path: str, spec: EnvSpec, *, depth: int, constraint: bool
) -> None:
    if path in spec.digests or depth > 3 or len(spec.digests) > MAX_INCLUDES:
        return
    data = read(path)
    if data is None or len(data) > MAX_FILE:
        spec.dropped.append(f"{path}: missing or larger than {MAX_FILE} bytes")
        return
    spec.digests[path] = hashlib.sha256(data).hexdigest()
    spec.sources.append(path)
    for raw in data.decode("utf-8", "replace").splitlines():
        line = raw.strip()
        for flag in ("-r", "--requirement", "-c", "--constraint"):
            if line.startswith(flag + " ") or line.startswith(flag + "="):
                target = line[len(flag) + 1 :].strip()
                inc = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
                if inc.startswith("..") or inc.startswith("/"):
                    spec.dropped.append(f"{path}: {line!r} (outside the repository)")
                else:
                    _from_requirements(
                        read, inc, spec, depth=depth + 1, constraint=flag in ("-c", "--constraint")
                    )
                break
        else:
            if line.startswith("-"):
                if line:
                    spec.dropped.append(f"{path}: {line[:120]!r} (installer options are not taken)")
            elif not constraint:
                _add(spec, line, path)


def python_version(python: str = sys.executable) -> str:
    """``major.minor.micro`` of this interpreter (other interpreters are asked by ``build``)."""
    return ".".join(map(str, sys.version_info[:3])) if python == sys.executable else python
