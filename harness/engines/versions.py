"""Engine specs and pin values -> versions.

``version_from_pin`` is what other checks call to turn what a branch pins (a docker tag, an image
reference, a requirement) into the version an engine environment is built for.
"""

from __future__ import annotations

import re

from harness.errors import UsageError

ENGINES = ("sglang",)

# A release number inside a pin: 0.5.18, v0.5.18, 0.5.15.post1, 0.5.3rc1. It must stand alone:
# preceded by the start, ':', '/', '=', '@', 'v' or space; followed by the end, '-', '_', '+', space.
_PIN_VERSION = re.compile(
    r"(?:^|(?<=[:/=@\s]))v?(?P<v>\d+\.\d+\.\d+(?:\.post\d+|rc\d+|\.dev\d+)?)(?=$|[-_+\s,;])"
)
_VERSION = re.compile(r"\d+\.\d+\.\d+(?:\.post\d+|rc\d+|\.dev\d+)?")
_SPEC = re.compile(r"(?P<engine>[a-z][a-z0-9_-]*)==(?P<version>\S+)")


def version_from_pin(value: str) -> str | None:
    """The release a pin names, or None.

    ``v0.5.18-cu130-runtime``, ``lmsysorg/sglang:v0.5.18-cu130``, ``sglang==0.5.18`` and
    ``0.5.18`` all give ``"0.5.18"``; ``latest``, digests and ranges give None.
    """
    text = value.strip()
    if not text or "@sha256:" in text:
        return None
    if re.search(r"[<>~!]=?|\^|\*", text):  # a range pins no single version
        return None
    matches = {m.group("v") for m in _PIN_VERSION.finditer(text)}
    return matches.pop() if len(matches) == 1 else None


def version_key(version: str) -> tuple[int, ...]:
    """Numeric sort key for a release (post/rc suffixes ignored beyond the three numbers)."""
    return tuple(int(p) for p in version.split(".")[:3])


def parse_spec(spec: str) -> tuple[str, str]:
    """``sglang==0.5.18`` (or a pin value after ``sglang==``) -> ("sglang", "0.5.18"); UsageError otherwise."""
    m = _SPEC.fullmatch(spec.strip())
    if not m:
        raise UsageError(f"engine spec {spec!r}: expected ENGINE==VERSION, e.g. sglang==0.5.18")
    engine = m.group("engine")
    if engine not in ENGINES:
        raise UsageError(
            f"engine spec {spec!r}: unknown engine {engine!r} (known: {', '.join(ENGINES)})"
        )
    raw = m.group("version")
    version = raw if _VERSION.fullmatch(raw) else version_from_pin(raw)
    if version is None:
        raise UsageError(f"engine spec {spec!r}: {raw!r} names no single release")
    return engine, version
