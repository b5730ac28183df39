"""Probes of a tree's own request handler (``serving/handler.py`` in the demo repository).

Run by the ``python`` probe kind with the column's tree first on sys.path. ``FakeEngine`` is a
stand-in for the engine that only RECORDS calls: the question is about the tree's handler code
(which ids its cancellation aborts), not about sglang, so a recorder is the right instrument.
"""

from __future__ import annotations

from serving.handler import Handler

UNDER_TEST = ["serving.handler"]


class FakeEngine:
    """Records generate/abort calls (stand-in engine; see the module docstring)."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.aborted: list[str] = []

    def generate(self, choice_id, params):  # noqa: ANN001
        self.started.append(choice_id)

    def abort(self, choice_id):  # noqa: ANN001
        self.aborted.append(choice_id)


def build_params(min_tokens=0, max_tokens=16, stop=None, **_):  # noqa: ANN001
    """The params dict the tree's handler builds for this request row."""
    request = {"max_tokens": max_tokens, "min_tokens": min_tokens}
    if stop:
        request["stop"] = [stop] if isinstance(stop, str) else list(stop)
    return Handler(None)._build_sampling_params(request)


def cancel(n=2, late=0, **_):  # noqa: ANN001
    """Start n choices, cancel, then see ``late`` choices first seen after the cancellation.
    Returns "aborted A/U" (U = unfinished choices, all of them here) plus the late ones."""
    engine = FakeEngine()
    handler = Handler(engine)
    first = handler.generate("req-1", {"n": n})
    handler.cancel("req-1")
    later = handler.generate("req-1", {"n": late}) if late else []
    hit = sum(c in engine.aborted for c in first)
    hit_late = sum(c in engine.aborted for c in later)
    text = f"aborted {hit}/{len(first)}"
    if late:
        text += f"; late {hit_late}/{len(later)}"
    return text
