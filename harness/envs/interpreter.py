"""The interpreter a run uses, as an ``Env``: the harness's own (``own``), one the user named with
``--python`` (``given``), or one built from a spec (``build.ensure_env``: built or reused).

Mutation, sweep, selection and the tests section resolve ``--python`` here and key their results
by ``Env.fingerprint``: a built environment by its spec's key, any other interpreter by
``fingerprint.interpreter_fingerprint`` (what it is and holds, asked of a fresh process).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from harness.envs.fingerprint import Store, interpreter_fingerprint


@dataclass(frozen=True)
class Env:
    """A ready interpreter: its path, how it was had, and for a built one its spec key and the
    installer that made it."""

    python: str
    how: str  # "own" | "given" (--python) | "built" | "reused"
    key: str = ""  # a built environment's spec key
    installer: str = ""
    note: str = ""  # what a built one holds other than its spec asked (the newest packages)
    left_out: tuple[str, ...] = ()  # requirements not installed, each with why (they don't build)

    def fingerprint(self, store: Store | None = None) -> str:
        """What results run with this interpreter are keyed by (``store``: where an interpreter's
        description may be kept between runs): a built one's spec key, and what it holds other
        than the spec asked (the newest packages, requirements left out), where anything: the same
        spec built elsewhere with every package is another environment."""
        if not self.key:
            return interpreter_fingerprint(self.python, store)
        if not self.note and not self.left_out:
            return self.key
        import hashlib

        held = "\0".join([self.note, *self.left_out]).encode("utf-8", "surrogateescape")
        return f"{self.key}-{hashlib.sha256(held).hexdigest()[:12]}"


def own() -> Env:
    """The interpreter the harness runs on."""
    return Env(sys.executable, "own")


def given(python: str) -> Env:
    """An interpreter the user named (``--python``): used as it is, never built into."""
    return Env(python, "given")


def resolve(python: str | None) -> Env:
    """``--python`` as an ``Env``: the one given, else the harness's own."""
    return given(python) if python else own()
