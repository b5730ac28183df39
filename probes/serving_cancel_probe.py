"""Demo probe: does the column's handler abort every choice of an n>1 request on cancel?

The engine here is a recording stand-in on purpose: the question is about the TREE's handler
code (which ids it aborts), not about the engine. Runs inside the column's subprocess.
"""

UNDER_TEST = ["serving.handler"]


class RecordingEngine:
    """Stand-in engine: records the ids it is asked to generate and abort."""

    def __init__(self) -> None:
        self.generated: list[str] = []
        self.aborted: list[str] = []

    def generate(self, rid: str, params: dict) -> None:
        self.generated.append(rid)

    def abort(self, rid: str) -> None:
        self.aborted.append(rid)


def run(n: int) -> str:
    from serving.handler import Handler

    engine = RecordingEngine()
    handler = Handler(engine)
    handler.generate("req-1", {"n": n, "max_tokens": 8})
    handler.cancel("req-1")
    left = [c for c in engine.generated if c not in engine.aborted]
    return f"aborted {len(set(engine.aborted))}/{len(engine.generated)}" + (
        f", {len(left)} left running" if left else ""
    )
