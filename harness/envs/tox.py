"""What tox's ``[testenv]`` installs for the tests (``tox.ini``, read, never run).

``deps`` lines a factor does not condition (``full: twisted`` is one environment's, not the
tests'), requirement files they include (``-r{toxinidir}/test-requirements.txt``), the project's
extras they name (``.[ldap]``, ``-e .[test]``), and the ``extras`` and ``dependency_groups`` keys.
Constraint files (``-c``, often a URL) and other installer options are not taken, but named (the
user can give the pins: ``--test-constraints``); a line with a substitution other than
``{toxinidir}`` is named as not read.
"""

from __future__ import annotations

import configparser
import re
from dataclasses import dataclass, field

MAX_FILE = 512 * 1024
# "full: pycurl", "py3,py310: x", "{py3,py310}: x", "!pylib: x" (not "https://…")
_FACTOR = re.compile(r"^(?:!?[\w.-]+(?:,!?[\w.-]+)*|\{!?[\w.-]+(?:,!?[\w.-]+)*\})\s*:(?!//)")
_SELF = re.compile(r"^(?:-e\s*)?(?:\.|\{toxinidir\})/?\[([^\]]*)\]$")
_NAMES = re.compile(r"[\s,]+")


@dataclass
class TestEnv:
    deps: list[str] = field(default_factory=list)  # requirement lines
    files: list[str] = field(default_factory=list)  # requirement files, tree-relative
    extras: list[str] = field(default_factory=list)  # the project's extras to install
    groups: list[str] = field(default_factory=list)  # PEP 735 groups to install
    dropped: list[str] = field(default_factory=list)


def testenv(data: bytes) -> TestEnv | None:
    """``[testenv]`` of a ``tox.ini``'s bytes; None where it has none or cannot be read."""
    if len(data) > MAX_FILE:
        return None
    cfg = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        cfg.read_string(data.decode("utf-8", "replace"), "tox.ini")
    except configparser.Error:
        return None
    if not cfg.has_section("testenv"):
        return None
    env = TestEnv()
    env.extras = _names(cfg.get("testenv", "extras", fallback=""))
    env.groups = _names(cfg.get("testenv", "dependency_groups", fallback=""))
    for raw in cfg.get("testenv", "deps", fallback="").splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#") or _FACTOR.match(line):
            continue
        own = _SELF.match(line.replace(" ", ""))
        if own:
            env.extras += [n for n in _names(own.group(1)) if n not in env.extras]
        elif line.startswith(("-r", "--requirement")):
            target = re.sub(r"^(?:-r|--requirement)[=\s]*", "", line).removeprefix("{toxinidir}/")
            if "{" in target:
                env.dropped.append(f"tox.ini [testenv] deps: {line[:120]!r} (a substitution)")
            elif target:
                env.files.append(target)
        elif line.startswith(("-c", "--constraint")):
            # (OpenStack's upper-constraints: a URL the repository chooses, never fetched)
            env.dropped.append(
                f"tox.ini [testenv] deps: {line[:120]!r} (constraints, not fetched: "
                "--test-constraints FILE builds under pins you give)"
            )
        elif line.startswith("-"):
            env.dropped.append(f"tox.ini [testenv] deps: {line[:120]!r} (an installer option)")
        elif "{" in line:
            env.dropped.append(f"tox.ini [testenv] deps: {line[:120]!r} (a substitution)")
        else:
            env.deps.append(line)
    return env


def _names(text: str) -> list[str]:
    return [n for n in _NAMES.split(text.strip()) if re.fullmatch(r"[\w.-]+", n)]
