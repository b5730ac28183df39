"""The built-in demo: a small repository that reproduces a whole backport review.

History (all dates fixed, so every sha and every report byte is reproducible):

    main:        init ── #40 typo fix ── #41 engine pin bump ── #42 min_tokens fix (squash of the PR)
                   │
    release/1.0:   └── release pin ── pick of #40 (trailer) ── pick of #42 (cut after 2 of 4 PR commits)
    pr/42:       init ── c1 min_tokens ── c2 n>1 handler ── c3 increment before read ── c4 drop log line

The pick of #42 lacks c3 (functional: the decoder reads the count before incrementing it, so the
hidden-stop leak boundary moves by one token) and c4 (deletes the "Engine ready" log line that a
nightly test still polls for). The handler's cancellation aborts only the first of n choices, and
no test pins either gap.
"""

from __future__ import annotations

from pathlib import Path

from harness.git.writer import CommitSpec, write_repo

DECODER_BASE = '''"""Streaming decoder with hidden stop strings."""


def decode(tokens, stop, min_tokens=0):
    """Visible text of a token stream; ``stop`` is hidden (never shown)."""
    text = ""
    for tok in tokens:
        start = max(0, len(text) - len(stop) + 1)
        text += tok
        hit = text.find(stop, start)
        if hit != -1:
            return text[:hit]
    return text
'''

# c1: min_tokens support, with the check reading the count before the increment.
DECODER_C1 = '''"""Streaming decoder with hidden stop strings."""


def decode(tokens, stop, min_tokens=0):
    """Visible text of a token stream; ``stop`` is hidden (never shown).

    Stop strings are honoured only once ``min_tokens`` tokens were generated.
    """
    text = ""
    count = 0
    for tok in tokens:
        start = max(0, len(text) - len(stop) + 1)
        text += tok
        if count >= min_tokens:
            hit = text.find(stop, start)
            if hit != -1:
                return text[:hit]
        count += 1
    return text
'''

# c3: the increment moves back above the read.
DECODER_C3 = DECODER_C1.replace(
    "        if count >= min_tokens:\n", "        count += 1\n        if count >= min_tokens:\n"
).replace(
    "                return text[:hit]\n        count += 1\n", "                return text[:hit]\n"
)

HANDLER_BASE = '''"""Request handler: builds sampling params and fans n>1 requests out to the engine."""

import uuid


class Handler:
    def __init__(self, engine):
        self.engine = engine
        self.choices = {}

    def _build_sampling_params(self, request):
        params = {"max_new_tokens": request.get("max_tokens", 16)}
        if request.get("stop"):
            params["stop"] = list(request["stop"])
        return params

    def generate(self, request_id, request):
        ids = [uuid.uuid4().hex for _ in range(request.get("n", 1))]
        self.choices[request_id] = ids
        for choice_id in ids:
            self.engine.generate(choice_id, self._build_sampling_params(request))
        return ids

    def cancel(self, request_id):
        ids = self.choices.get(request_id, [])
        if ids:
            self.engine.abort(ids[0])
'''

HANDLER_C1 = HANDLER_BASE.replace(
    '            params["stop"] = list(request["stop"])\n',
    '            params["stop"] = list(request["stop"])\n'
    '        if request.get("min_tokens"):\n'
    '            params["min_new_tokens"] = request["min_tokens"]\n',
)

# c2 only reformats how choices are recorded; cancellation still aborts the first choice only.
HANDLER_C2 = HANDLER_C1.replace(
    "        self.choices[request_id] = ids\n",
    "        self.choices.setdefault(request_id, []).extend(ids)\n",
)

WORKER_BASE = '''"""Engine worker process."""

import logging

log = logging.getLogger("serving.worker")


def start(engine):
    engine.load()
    log.info("Engine ready")
    return engine
'''

WORKER_C4 = WORKER_BASE.replace('    log.info("Engine ready")\n', "")

TEST_DECODER = """import pytest

from serving.decoder import decode

STREAM = ["hi", " delta", " epsilon", " zeta"]


@pytest.mark.pre_merge
def test_hidden_stop_is_not_shown():
    assert decode(STREAM, " delta epsilon") == "hi"


@pytest.mark.pre_merge
def test_no_stop_keeps_everything():
    assert decode(STREAM, " omega") == "hi delta epsilon zeta"
"""

TEST_DECODER_C1 = (
    TEST_DECODER
    + """

@pytest.mark.pre_merge
def test_min_tokens_zero_is_the_default():
    assert decode(STREAM, " delta epsilon", min_tokens=0) == "hi"
"""
)

TEST_HANDLER = """import pytest

from serving.handler import Handler


class RecordingEngine:
    def __init__(self):
        self.generated, self.aborted = [], []

    def generate(self, rid, params):
        self.generated.append(rid)

    def abort(self, rid):
        self.aborted.append(rid)


@pytest.mark.pre_merge
@pytest.mark.sglang
@pytest.mark.gpu_0
def test_cancel_single_choice():
    engine = RecordingEngine()
    handler = Handler(engine)
    ids = handler.generate("req-1", {"n": 1})
    handler.cancel("req-1")
    assert engine.aborted == ids
"""

TEST_WORKER = """import logging

import pytest

from serving.worker import start


class Engine:
    def load(self):
        pass


@pytest.mark.nightly
def test_worker_logs_ready(caplog):
    caplog.set_level(logging.INFO)
    start(Engine())
    assert any("Engine ready" in r.getMessage() for r in caplog.records)
"""

PYTEST_INI = """[pytest]
addopts = -q
markers =
    pre_merge: runs on every pull request
    sglang: needs the sglang engine
    gpu_0: runs without a GPU
    gpu_1: needs one GPU
    nightly: nightly only
"""

WORKFLOW = """name: ci
on: [pull_request]

x-common: &common
  python: "3.11"

jobs:
  unit:
    uses: ./.github/workflows/_pytest.yml
    with:
      <<: *common
      pytest_markers: "pre_merge and not sglang"
  sglang-cpu:
    uses: ./.github/workflows/_pytest.yml
    with:
      markers: 'pre_merge and sglang and gpu_0'
  sglang-gpu:
    uses: ./.github/workflows/_pytest.yml
    with:
      markers: pre_merge and sglang and gpu_1
  nightly:
    uses: ./.github/workflows/_pytest.yml
    with:
      pytest_marks: nightly
  smoke:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: smoke
        run: python -m pytest -q -m "not nightly" tests/
"""


def _engine_yaml(tag: str) -> str:
    return f"""# Runtime images per CUDA flavour
sglang:
  "cuda12.8":
    runtime_image_tag: {tag.replace("cu130", "cu128")}
  "cuda13.0":
    runtime_image_tag: {tag}
"""


README = "# serving\n\nA tiny LLM-serving project used by the harness demo.\n"
README_40 = README + "\nRun the workers with `python -m serving`.\n"

BASE_FILES: dict[str, str | None] = {
    "README.md": "# serving\n\nA tiny LLM-serving project used by the harness demo. Run the wrokers.\n",
    "pytest.ini": PYTEST_INI,
    "serving/__init__.py": "",
    "serving/decoder.py": DECODER_BASE,
    "serving/handler.py": HANDLER_BASE,
    "serving/worker.py": WORKER_BASE,
    "tests/test_decoder.py": TEST_DECODER,
    "tests/test_handler.py": TEST_HANDLER,
    "tests/test_worker.py": TEST_WORKER,
    ".github/workflows/ci.yml": WORKFLOW,
    "deploy/engine.yaml": _engine_yaml("v0.5.11-cu130-runtime"),
}

DAY = 86_400
T0 = 1_767_225_600
DEV = "Dana Dev <dana@example.com>"
RM = "Riley Release <riley@example.com>"
BOT = "pick-bot <41898282+pick-bot@users.noreply.github.com>"


def commits() -> tuple[list[CommitSpec], dict[str, str]]:
    """The demo history as commit specs, plus the extra branch names.

    Long on purpose: the history is data, one spec per commit in order, read top to bottom."""
    typo = {"README.md": BASE_FILES["README.md"].replace("wrokers", "workers")}  # type: ignore[union-attr]
    c1 = {
        "serving/decoder.py": DECODER_C1,
        "serving/handler.py": HANDLER_C1,
        "tests/test_decoder.py": TEST_DECODER_C1,
    }
    c2 = {"serving/handler.py": HANDLER_C2}
    c3 = {"serving/decoder.py": DECODER_C3}
    c4 = {"serving/worker.py": WORKER_C4}
    squash = {**c1, **c2, **c3, **c4}
    specs = [
        CommitSpec(
            "init",
            "main",
            "Initial serving project\n",
            dict(BASE_FILES),
            author=DEV,
            author_time=T0,
        ),
        CommitSpec(
            "release",
            "release/1.0",
            "Release 1.0: pin engine v0.5.18\n",
            {"deploy/engine.yaml": _engine_yaml("v0.5.18-cu130-runtime")},
            ["init"],
            author=RM,
            author_time=T0 + DAY,
        ),
        CommitSpec(
            "main40",
            "main",
            "Fix typo in README (#40)\n",
            typo,
            ["init"],
            author=DEV,
            author_time=T0 + 2 * DAY,
        ),
        CommitSpec(
            "main41",
            "main",
            "Bump engine to v0.5.21 (#41)\n",
            {"deploy/engine.yaml": _engine_yaml("v0.5.21-cu130-runtime")},
            ["main40"],
            author=DEV,
            author_time=T0 + 3 * DAY,
        ),
        CommitSpec(
            "c1",
            "pr/42",
            "Add min_tokens to the decoder and the handler\n",
            c1,
            ["init"],
            author=DEV,
            author_time=T0 + 4 * DAY,
        ),
        CommitSpec(
            "c2",
            "pr/42",
            "Record every choice id of n>1 requests\n",
            c2,
            ["c1"],
            author=DEV,
            author_time=T0 + 5 * DAY,
        ),
        CommitSpec(
            "c3",
            "pr/42",
            "Count the token before the min_tokens check\n",
            c3,
            ["c2"],
            author=DEV,
            author_time=T0 + 7 * DAY,
        ),
        CommitSpec(
            "c4",
            "pr/42",
            "Drop the noisy 'Engine ready' log line\n",
            c4,
            ["c3"],
            author=DEV,
            author_time=T0 + 8 * DAY,
        ),
        CommitSpec(
            "main42",
            "main",
            "Fix min_tokens handling (#42)\n\n* Add min_tokens\n* n>1 choice ids\n"
            "* Count before check\n* Drop log line\n\nSigned-off-by: Dana Dev <dana@example.com>\n",
            squash,
            ["main41"],
            author=DEV,
            committer="GitHub <noreply@github.com>",
            author_time=T0 + 9 * DAY,
        ),
        CommitSpec(
            "pick40",
            "backport/42",
            "[release/1.0] Fix typo in README (#40) (#55)\n\n"
            "(cherry picked from commit {main40})\n\nSigned-off-by: Riley Release <riley@example.com>\n",
            typo,
            ["release"],
            author=DEV,
            committer=RM,
            author_time=T0 + 2 * DAY,
            committer_time=T0 + 10 * DAY,
        ),
        CommitSpec(
            "pick42",
            "backport/42",
            "[release/1.0] Fix min_tokens handling (#42) (#57)\n\n"
            "Signed-off-by: Dana Dev <dana@corp.example.com>\n",
            {**c1, **c2},
            ["pick40"],
            author=DEV,
            committer=BOT,
            author_time=T0 + 6 * DAY,
            committer_time=T0 + 10 * DAY + 60,
        ),
    ]
    return specs, {}


def build(path: Path) -> dict[str, str]:
    """Write the demo repository at ``path`` (replacing an earlier demo there); mark → sha."""
    specs, branches = commits()
    # The trailer names the real sha of main's #40, known only once main40 is written: write in
    # two passes (shas are deterministic, so the second pass reproduces the first).
    first = write_repo(path, specs, branches, checkout="main")
    for s in specs:
        s.message = s.message.replace("{main40}", first["main40"])
    return write_repo(path, specs, branches, checkout="main")


REFS = {
    "base": "release/1.0",
    "head": "backport/42",
    "source": "main",
    "source_branch": "pr/42",
}
