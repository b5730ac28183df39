"""Hostile inputs across every verb: exit 2, exactly one line on stderr, no traceback, nothing written.

Each case runs the real CLI in-process (``run_cli``) in an empty working folder, against a real
repository built once, with a cache and a work area that valid runs filled (issue 41); afterwards the
working folder, the scratch folder of inputs, the cache, the work area and the repository must be as
they were, byte for byte.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from harness.testing.repos import RepoBuilder

BOMB = (
    "\n".join(
        ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
        + [
            f"{b}: &{b} [{', '.join(['*' + a] * 9)}]"
            for a, b in zip("abcdefgh", "bcdefghi", strict=False)
        ]
    )
    + "\n"
)

FILES = {
    "afile": "not a folder\n",
    "p-waivers-int.yaml": "waivers: 5\n",
    "p-bad-date.yaml": "waivers:\n  - {id: x, reason: r, expires: 2026-02-30}\n",
    "p-text-date.yaml": "waivers:\n  - {id: x, reason: r, expires: someday}\n",
    "p-list.yaml": "- 1\n- 2\n",
    "p-unknown.yaml": "gate: always\n",
    "p-failon.yaml": "fail_on: p7\n",
    "p-block.yaml": "block: 5\n",
    "p-waiver-str.yaml": "waivers: [hello]\n",
    "p-waiver-missing.yaml": "waivers:\n  - {id: x}\n",
    "p-bomb.yaml": BOMB,
    "p-syntax.yaml": "fail_on: [p1\n",
    "prev-syntax.json": "{",
    "prev-list.json": "[]",
    "prev-other.json": '{"schema": "something/9"}',
    "prev-empty.json": "",
    "s-bomb.yaml": BOMB,
    "s-deep.yaml": "refs: " + "[" * 300 + "]" * 300 + "\n",
    "s-recursive.yaml": "refs: &r {base: *r}\n",
    "s-syntax.yaml": "refs: {base: main\n",
    "s-list.yaml": "- a\n",
    "s-unknown.yaml": "refs: {base: main}\nflavour: x\n",
    "s-empty.yaml": "",
    "s-pin-outside.yaml": "pins:\n  - {file: ../../etc/passwd, key: x}\n",
    "s-trace-outside.yaml": "traces:\n  - {string: x, under: /etc}\n",
    "m-bomb.yaml": BOMB,
    "m-syntax.yaml": "- {name: x\n",
}
REPORT = '{"schema": "harness.report/1", %s}'
PROBE_LINE = "probes:\n  - {id: p, kind: python, file: PROBE, function: run, rows: {n: [1]}}\n"
ROUND3 = {  # issue 27: the third round of hostile inputs
    "prev-no-id.json": REPORT % '"sections": [{"id": "s", "findings": [{"kind": "k"}]}]',
    "prev-sections-int.json": REPORT % '"sections": 5',
    "prev-sections-strs.json": REPORT % '"sections": ["x"]',
    "prev-inputs-list.json": REPORT % '"inputs": [1, 2]',
    "prev-inputs-int.json": REPORT % '"inputs": {"base": 5}',
    "prev-id-list.json": REPORT % '"sections": [{"findings": [{"id": ["a"], "kind": "k"}]}]',
    "prev-id-empty.json": REPORT % '"sections": [{"findings": [{"id": "", "kind": "k"}]}]',
    "prev-deep.json": REPORT % ('"sections": ' + "[" * 100000 + "]" * 100000),
    "prev-deep-object.json": REPORT % ('"inputs": ' + '{"a": ' * 100000 + "1" + "}" * 100000),
    "prev-severity.json": REPORT
    % '"sections": [{"findings": [{"id": "a", "kind": "k", "severity": "P9"}]}]',
    "prev-findings-map.json": REPORT % '"sections": [{"findings": {}}]',
    "prev-finding-str.json": REPORT % '"sections": [{"findings": ["x"]}]',
    "prev-title-int.json": REPORT % '"sections": [{"findings": [{"id": "a", "title": 5}]}]',
    "prev-section-id-int.json": REPORT % '"sections": [{"id": 5, "findings": []}]',
    "prev-status-list.json": REPORT % '"sections": [{"findings": [{"id": "a", "status": []}]}]',
    "prev-other-repo.json": REPORT
    % (
        '"inputs": {"base": "main @ 0123456789ab", "head": "topic @ fedcba987654"}, '
        '"sections": [{"id": "s", "findings": [{"id": "f-1", "kind": "k", "severity": "P1"}]}]'
    ),
    "prev-truncated.json": '{"schema": "harness.report/1", "sections": [',
    "prev-bom.json": "\ufeff" + REPORT % '"sections": []',
    "prev-control-char.json": '{"schema": "harness.report/1", "title": "a\x01b"}',
    "prev-number.json": "5",
    "prev-null.json": "null",
    "p-expires-datetime.yaml": "waivers:\n  - {id: x, reason: r, expires: 2027-01-01T10:00:00}\n",
    "p-id-list.yaml": "waivers:\n  - {id: [a, b], reason: r, expires: 2027-01-01}\n",
    "p-kind-int.yaml": "waivers:\n  - {kind: 5, reason: r, expires: 2027-01-01}\n",
    "p-reason-map.yaml": "waivers:\n  - {id: x, reason: {a: 1}, expires: 2027-01-01}\n",
    "p-waiver-extra.yaml": "waivers:\n  - {id: x, reason: r, expires: 2027-01-01, until: 2028-01-01}\n",
    "p-python-tag.yaml": "fail_on: !!python/object/apply:os.system [p1]\n",
    "p-python-name.yaml": "block: [!!python/name:os.system '']\n",
    "p-custom-tag.yaml": "fail_on: !mine p1\n",
    "p-dup-key.yaml": "fail_on: p1\nfail_on: never\n",
    "p-dup-waiver-key.yaml": "waivers:\n  - {id: x, id: y, reason: r, expires: 2027-01-01}\n",
    "s-python-tag-tests.yaml": "mutations:\n  tests: [!!python/object/apply:os.system [echo hi]]\n",
    "s-python-tag-ref.yaml": "refs: {head: !!python/object/apply:os.system [main]}\n" + PROBE_LINE,
    "s-custom-tag.yaml": "title: !foo bar\nrefs: {head: main}\n" + PROBE_LINE,
    "s-python-tag-deep.yaml": "refs: {head: main}\n"
    + PROBE_LINE.replace("[1]", "[!!python/object/new:os.system [x]]"),
    "s-dup-name.yaml": (
        "mutations:\n  tests: [tests]\n  edits:\n"
        "    - {name: a, name: b, replace: x = 2, new: x = 3, path: a.py}\n"
    ),
    "s-dup-probe-key.yaml": "refs: {head: main}\n" + PROBE_LINE.replace("id: p,", "id: p, id: q,"),
    "s-timeout-nan.yaml": "refs: {head: main}\n"
    + PROBE_LINE.replace("rows:", "timeout: .nan, rows:"),
    "s-timeout-inf.yaml": "refs: {head: main}\n"
    + PROBE_LINE.replace("rows:", "timeout: .inf, rows:"),
    "s-timeout-neg-inf.yaml": "refs: {head: main}\n"
    + PROBE_LINE.replace("rows:", "timeout: -.inf, rows:"),
    "s-edit-parent.yaml": "refs: {head: main}\ncontrols:\n  c: {ref: head, edits: "
    "[{replace: x, new: y, path: ../a.py}]}\n" + PROBE_LINE,
    "s-edit-absolute.yaml": "refs: {head: main}\ncontrols:\n  c: {ref: head, edits: "
    "[{replace: x, new: y, path: /etc/passwd}]}\n" + PROBE_LINE,
    "s-edit-nul.yaml": "refs: {head: main}\ncontrols:\n  c: {ref: head, edits: "
    '[{replace: x, new: y, path: "a\\0b"}]}\n' + PROBE_LINE,
    "s-patch-parent.yaml": "refs: {head: main}\ncontrols:\n  c: {ref: head, edits: "
    '[{patch: "--- a/../x.py\\n+++ b/../x.py\\n@@ -1 +1 @@\\n-a\\n+b\\n"}]}\n' + PROBE_LINE,
    "s-patch-absolute.yaml": "refs: {head: main}\ncontrols:\n  c: {ref: head, edits: "
    '[{patch: "--- /etc/passwd\\n+++ /etc/passwd\\n@@ -1 +1 @@\\n-a\\n+b\\n"}]}\n' + PROBE_LINE,
    "s-mutation-parent.yaml": (
        "mutations:\n  tests: [tests]\n  edits:\n"
        "    - {name: a, replace: x = 2, new: x = 3, path: ../../a.py}\n"
    ),
    "s-pin-key-bracket.yaml": "pins:\n  - {file: c.yaml, key: 'a[\"'}\n",
    "s-pin-key-open.yaml": "pins:\n  - {file: c.yaml, key: '[0'}\n",
    "s-pin-key-empty-seg.yaml": "pins:\n  - {file: c.yaml, key: 'a..b'}\n",
    "s-pin-key-close.yaml": "pins:\n  - {file: c.yaml, key: 'a]'}\n",
    "s-apply-commit-path.yaml": "refs: {head: main}\ncontrols:\n  c: {ref: head, edits: "
    '[{apply-commit: "HEAD:a.py"}]}\n' + PROBE_LINE,
    "s-apply-commit-unknown.yaml": "refs: {head: main}\ncontrols:\n  c: {ref: head, edits: "
    "[{apply-commit: no-such-commit}]}\n" + PROBE_LINE,
    "s-mutation-apply-commit.yaml": (
        "mutations:\n  tests: [tests]\n  edits:\n    - {name: a, apply-commit: 'HEAD:a.py'}\n"
    ),
    "s-unicode-ref.yaml": "refs: {head: ma\u00efn}\n" + PROBE_LINE,
    "s-rtl-ref.yaml": 'refs: {head: "main\u202e"}\n' + PROBE_LINE,
    "s-nul.yaml": "refs: {head: main}\n" + PROBE_LINE + "# a\x00b\n",
    "s-bell.yaml": "refs: {head: main}\n# \x07\n" + PROBE_LINE,
    "m-python-tag.yaml": "- {name: !!python/object/apply:os.system [x], replace: a, new: b, path: a.py}\n",
    "m-dup-name.yaml": "- {name: a, name: b, replace: x = 2, new: x = 3, path: a.py}\n",
    "m-parent-path.yaml": "- {name: a, replace: x = 2, new: x = 3, path: ../a.py}\n",
    "m-absolute-patch.yaml": '- {name: a, patch: "--- a//etc/x\\n+++ b//etc/x\\n"}\n',
    "m-apply-commit-path.yaml": "- {name: a, apply-commit: 'HEAD:a.py'}\n",
    "m-nul.yaml": "- {name: a, replace: x = 2, new: x = 3, path: a.py}\n#\x00\n",
}
BINARY = {
    "s-latin1.yaml": b"title: caf\xe9\n",
    "p-latin1.yaml": b"fail_on: p\xe91\n",
    "prev-latin1.json": b'{"a": "\xe9"}',
}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_world(tmp_path_factory.mktemp("hostile"))


def build_world(root: Path) -> dict[str, Path]:
    """The repository and the folder of hostile input files the cases name (also bench/hostile.py)."""
    b = RepoBuilder(root / "repo")
    b.commit(
        "one",
        {"a.py": "x = 1\n", "c.yaml": "ok: 1\n", "tests/test_a.py": "def test_a():\n    pass\n"},
    )
    b.commit("two", {"a.py": "x = 2\n"})
    inputs = root / "inputs"
    inputs.mkdir()
    for name, text in FILES.items():
        (inputs / name).write_text(text)
    for name, text in ROUND3.items():
        (inputs / name).write_text(text.replace("PROBE", str(inputs / "probe.py")), "utf-8")
    (inputs / "demo-foreign" / "repo").mkdir(parents=True)
    (inputs / "demo-file").mkdir()
    (inputs / "demo-file" / "repo").write_text("not the demo's\n")
    for name, data in BINARY.items():
        (inputs / name).write_bytes(data)
    (inputs / "adir").mkdir()
    for name in ("report.md", "report.json", "report.html", "comment.md"):
        (inputs / f"holds-{name}" / name).mkdir(parents=True)
    probe = inputs / "probe.py"
    probe.write_text("UNDER_TEST = ['a']\ndef run(n):\n    return n\n")
    (inputs / "ok.yaml").write_text(
        f"refs: {{head: main}}\nprobes:\n  - {{id: p, kind: python, file: {probe}, function: run, rows: {{n: [1]}}}}\n"
    )
    return {"repo": root / "repo", "in": inputs, "builder": b}  # type: ignore[dict-item]


# Verbs with their smallest valid arguments (a report verb each, plus the odd ones).
VERBS: dict[str, list[str]] = {
    "backports": ["backports", "--source", "main", "--release", "HEAD~1"],
    "compare": ["compare", "HEAD~1", "HEAD"],
    "drift": ["drift", "HEAD~1", "HEAD"],
    "fidelity": ["fidelity", "HEAD~1..HEAD", "--source", "main"],
    "lanes": ["lanes"],
    "mutate": ["mutate", "--replace", "a.py", "x = 2", "x = 3"],
    "pin": ["pin", "c.yaml", "ok", "--refs", "HEAD"],
    "probe": ["probe", "{in}/ok.yaml"],
    "select": ["select", "--lane", "all="],
    "shape": ["shape", "HEAD~1..HEAD"],
    "sweep": ["sweep", "HEAD~1..HEAD"],
    "tests": ["tests", "HEAD~1..HEAD", "--source", "main"],
    "trace": ["trace", "x", "--refs", "HEAD"],
}
FILE_OUTPUT = [v for v in VERBS if v != "compare"]

CASES: list[tuple[str, list[str], str, dict[str, str]]] = []


def case(name: str, argv: list[str], says: str, env: dict[str, str] | None = None) -> None:
    CASES.append((name, argv, says, env or {}))


for verb, argv in VERBS.items():
    with_repo = [*argv, "--repo", "{repo}"]
    case(f"{verb}-repo-missing", [*argv, "--repo", "{in}/nowhere"], "")
    case(f"{verb}-repo-a-file", [*argv, "--repo", "{in}/afile"], "")
    case(f"{verb}-repo-not-git", [*argv, "--repo", "{in}/adir"], "")
    case(f"{verb}-unknown-option", [*with_repo, "--frobnicate"], "unrecognized arguments")
    case(f"{verb}-bad-format", [*with_repo, "--format", "pdf"], "invalid choice")
    case(f"{verb}-bad-fail-on", [*with_repo, "--fail-on", "p9"], "invalid choice")
    case(f"{verb}-output-under-a-file", [*with_repo, "--output", "{in}/afile/out"], "")
    case(f"{verb}-output-read-only-fs", [*with_repo, "--output", "/proc/harness-out/x"], "")
    if verb in FILE_OUTPUT:  # compare makes its report folder, parents included
        case(
            f"{verb}-output-missing-parent",
            [*with_repo, "--output", "{in}/no/such/place/out"],
            "does not exist",
        )
        case(f"{verb}-output-a-directory", [*with_repo, "--output", "{in}/adir"], "is a directory")
        case(f"{verb}-output-a-device", [*with_repo, "--output", "/dev/null"], "not a regular file")
        case(
            f"{verb}-output-names-a-folder",
            [*with_repo, "--output", "{in}/new-folder/"],
            "names a folder",
        )
    else:
        case(f"{verb}-output-a-file", [*with_repo, "--output", "{in}/afile"], "not a directory")
        for name in (
            "report.md",
            "report.json",
            "report.html",
            "comment.md",
        ):  # a folder where a report goes
            case(
                f"{verb}-output-dir-{name}-is-a-folder",
                [*with_repo, "--output-dir", "{in}/holds-" + name],
                f"{name} there is not a regular file",
            )

for verb in ("compare", "drift"):
    case(f"{verb}-base-range", [verb, "HEAD~1..HEAD", "HEAD", "--repo", "{repo}"], "range")
    case(f"{verb}-head-range", [verb, "HEAD~1", "main..main", "--repo", "{repo}"], "range")
    case(f"{verb}-head-symmetric", [verb, "HEAD~1", "HEAD~1...HEAD", "--repo", "{repo}"], "range")
    case(f"{verb}-range-then-more", [verb, "HEAD~1..HEAD~1..HEAD", "--repo", "{repo}"], "range")
    case(f"{verb}-head-negated", [verb, "HEAD~1", "^HEAD", "--repo", "{repo}"], "is a range")
    case(f"{verb}-head-parents", [verb, "HEAD~1", "HEAD^@", "--repo", "{repo}"], "is a range")
    case(
        f"{verb}-unknown-ref", [verb, "HEAD~1", "no-such-branch", "--repo", "{repo}"], "unknown ref"
    )
    case(f"{verb}-newline-ref", [verb, "HEAD~1", "HEAD\nmain", "--repo", "{repo}"], "invalid ref")
for verb, argv in (
    ("shape", ["shape"]),
    ("fidelity", ["fidelity", "--source", "main"]),
    ("sweep", ["sweep"]),
):
    case(f"{verb}-not-a-range", [*argv, "HEAD", "--repo", "{repo}"], "expected a range")
    case(f"{verb}-triple-range", [*argv, "HEAD~1..HEAD..HEAD", "--repo", "{repo}"], "is a range")
    case(f"{verb}-unknown-end", [*argv, "HEAD~1..nope", "--repo", "{repo}"], "unknown ref")
case(
    "pin-refs-range",
    ["pin", "c.yaml", "ok", "--refs", "main..main", "--repo", "{repo}"],
    "is a range",
)
case(
    "pin-refs-unknown",
    ["pin", "c.yaml", "ok", "--refs", "HEAD", "nope", "--repo", "{repo}"],
    "unknown ref",
)
case(
    "pin-outside",
    ["pin", "../../../etc/passwd", "x", "--refs", "HEAD", "--repo", "{repo}"],
    "inside the repository",
)
case(
    "pin-absolute",
    ["pin", "/etc/passwd", "x", "--refs", "HEAD", "--repo", "{repo}"],
    "inside the repository",
)
case("pin-bad-keypath", ["pin", "c.yaml", 'a["', "--refs", "HEAD", "--repo", "{repo}"], "")
case(
    "trace-under-parent",
    ["trace", "x", "--refs", "HEAD", "--under", "../..", "--repo", "{repo}"],
    "inside the repository",
)
case(
    "trace-under-absolute",
    ["trace", "x", "--refs", "HEAD", "--under", "/etc", "--repo", "{repo}"],
    "inside the repository",
)
case("trace-refs-range", ["trace", "x", "--refs", "HEAD~1..HEAD", "--repo", "{repo}"], "is a range")
case(
    "trace-range-not-range",
    ["trace", "x", "--refs", "HEAD", "--range", "HEAD", "--repo", "{repo}"],
    "expected a range",
)
case("lanes-ref-range", ["lanes", "--ref", "main..main", "--repo", "{repo}"], "is a range")
case(
    "lanes-workflow-outside",
    ["lanes", "--workflow", "../x.yml", "--repo", "{repo}"],
    "inside the repository",
)
case(
    "shape-same-tree-range",
    ["shape", "HEAD~1..HEAD", "--same-tree", "main..main", "HEAD", "--repo", "{repo}"],
    "is a range",
)
case(
    "select-python-missing",
    ["select", "--lane", "a=", "--python", "/nonexistent", "--repo", "{repo}"],
    "no such interpreter",
)
case(
    "select-python-not-exec",
    ["select", "--lane", "a=", "--python", "{in}/afile", "--repo", "{repo}"],
    "not executable",
)
case(
    "select-timeout-negative",
    ["select", "--lane", "a=", "--timeout", "-1", "--repo", "{repo}"],
    "positive",
)
case(
    "select-timeout-zero",
    ["select", "--lane", "a=", "--timeout", "0", "--repo", "{repo}"],
    "positive",
)
case(
    "select-timeout-nan",
    ["select", "--lane", "a=", "--timeout", "nan", "--repo", "{repo}"],
    "positive",
)
case(
    "select-timeout-inf",
    ["select", "--lane", "a=", "--timeout", "inf", "--repo", "{repo}"],
    "positive",
)
case(
    "select-timeout-text",
    ["select", "--lane", "a=", "--timeout", "soon", "--repo", "{repo}"],
    "invalid float",
)
case("select-lane-no-equals", ["select", "--lane", "smoke", "--repo", "{repo}"], "NAME=EXPR")
case(
    "select-lane-bad-expr",
    ["select", "--lane", "a=not (", "--repo", "{repo}"],
    "invalid marker expression",
)
case("select-no-lanes", ["select", "--repo", "{repo}"], "no lanes")
case(
    "select-file-outside",
    ["select", "--lane", "a=", "--file", "../x", "--repo", "{repo}"],
    "inside the repository",
)
case(
    "select-ref-range",
    ["select", "--lane", "a=", "--ref", "HEAD~1..HEAD", "--repo", "{repo}"],
    "is a range",
)
case(
    "mutate-timeout-negative", [*VERBS["mutate"], "--timeout", "-1", "--repo", "{repo}"], "positive"
)
case(
    "mutate-python-missing",
    [*VERBS["mutate"], "--python", "/nonexistent", "--repo", "{repo}"],
    "no such interpreter",
)
case(
    "mutate-replace-outside",
    ["mutate", "--replace", "../a.py", "x", "y", "--repo", "{repo}"],
    "inside the repository",
)
case("mutate-mutation-missing", ["mutate", "--mutation", "{in}/nope.yaml", "--repo", "{repo}"], "")
case(
    "mutate-mutation-bomb",
    ["mutate", "--mutation", "{in}/m-bomb.yaml", "--repo", "{repo}"],
    "alias expansion over",
)
case(
    "mutate-mutation-syntax", ["mutate", "--mutation", "{in}/m-syntax.yaml", "--repo", "{repo}"], ""
)
case(
    "mutate-bad-marker",
    [*VERBS["mutate"], "-m", "not (", "--repo", "{repo}"],
    "invalid marker expression",
)
case(
    "sweep-bad-marker",
    [*VERBS["sweep"], "-m", "a and", "--repo", "{repo}"],
    "invalid marker expression",
)
case("mutate-nothing", ["mutate", "--repo", "{repo}"], "no mutations")
case(
    "mutate-ref-range",
    [*VERBS["mutate"], "--ref", "HEAD~1..HEAD", "--repo", "{repo}"],
    "is a range",
)
case("sweep-timeout-negative", [*VERBS["sweep"], "--timeout", "-5", "--repo", "{repo}"], "positive")
case(
    "sweep-max-children-zero",
    [*VERBS["sweep"], "--max-children", "0", "--repo", "{repo}"],
    "positive",
)
case(
    "sweep-python-missing",
    [*VERBS["sweep"], "--python", "/nonexistent", "--repo", "{repo}"],
    "no such interpreter",
)
case(
    "sweep-source-path-outside",
    [*VERBS["sweep"], "--source-path", "/etc", "--repo", "{repo}"],
    "inside the repository",
)
case("probe-jobs-zero", [*VERBS["probe"], "--jobs", "0", "--repo", "{repo}"], "positive")
case(
    "probe-python-missing",
    [*VERBS["probe"], "--python", "/nonexistent", "--repo", "{repo}"],
    "no such interpreter",
)
for name in (
    "s-bomb",
    "s-deep",
    "s-recursive",
    "s-syntax",
    "s-list",
    "s-unknown",
    "s-empty",
    "s-latin1",
):
    case(f"probe-scenario-{name}", ["probe", f"{{in}}/{name}.yaml", "--repo", "{repo}"], "")
    case(
        f"compare-scenario-{name}",
        [*VERBS["compare"], "--scenario", f"{{in}}/{name}.yaml", "--repo", "{repo}"],
        "",
    )
case(
    "compare-scenario-pin-outside",
    [*VERBS["compare"], "--scenario", "{in}/s-pin-outside.yaml", "--repo", "{repo}"],
    "s-pin-outside.yaml:2: pins[0].file",
)
case(
    "compare-scenario-trace-outside",
    [*VERBS["compare"], "--scenario", "{in}/s-trace-outside.yaml", "--repo", "{repo}"],
    "s-trace-outside.yaml:2: traces[0].under",
)
case("probe-scenario-missing", ["probe", "{in}/nope.yaml", "--repo", "{repo}"], "no such scenario")
case("probe-scenario-a-dir", ["probe", "{in}/adir", "--repo", "{repo}"], "")
for name in (
    "p-waivers-int",
    "p-bad-date",
    "p-text-date",
    "p-list",
    "p-unknown",
    "p-failon",
    "p-block",
    "p-waiver-str",
    "p-waiver-missing",
    "p-bomb",
    "p-syntax",
    "p-latin1",
):
    case(
        f"compare-policy-{name}",
        [*VERBS["compare"], "--policy", f"{{in}}/{name}.yaml", "--repo", "{repo}"],
        "",
    )
case(
    "compare-policy-missing",
    [*VERBS["compare"], "--policy", "{in}/nope.yaml", "--repo", "{repo}"],
    "no such",
)
case("compare-policy-a-dir", [*VERBS["compare"], "--policy", "{in}/adir", "--repo", "{repo}"], "")
for name in ("prev-syntax", "prev-list", "prev-other", "prev-empty", "prev-latin1"):
    case(
        f"compare-previous-{name}",
        [*VERBS["compare"], "--previous", f"{{in}}/{name}.json", "--repo", "{repo}"],
        "--previous",
    )
case(
    "compare-previous-missing",
    [*VERBS["compare"], "--previous", "{in}/nope.json", "--repo", "{repo}"],
    "--previous",
)
case(
    "compare-previous-a-dir",
    [*VERBS["compare"], "--previous", "{in}/adir", "--repo", "{repo}"],
    "--previous",
)
case(
    "compare-python-missing",
    [*VERBS["compare"], "--python", "/nonexistent", "--repo", "{repo}"],
    "no such interpreter",
)
case("compare-jobs-zero", [*VERBS["compare"], "--jobs", "0", "--repo", "{repo}"], "positive")
case(
    "compare-today-bad",
    [*VERBS["compare"], "--today", "2026-02-30", "--repo", "{repo}"],
    "not a date",
)
case(
    "compare-source-range",
    [*VERBS["compare"], "--source", "main..main", "--repo", "{repo}"],
    "is a range",
)
case(
    "compare-source-branch-unknown",
    [*VERBS["compare"], "--source", "main", "--source-branch", "nope", "--repo", "{repo}"],
    "--source-branch 'nope'",
)
case(
    "fidelity-source-range",
    ["fidelity", "HEAD~1..HEAD", "--source", "main..main", "--repo", "{repo}"],
    "is a range",
)
case(
    "fidelity-bad-map",
    ["fidelity", "HEAD~1..HEAD", "--source", "main", "--map", "nonsense", "--repo", "{repo}"],
    "",
)
case("demo-dir-a-file", ["demo", "--dir", "{in}/afile"], "not a directory")
case("demo-dir-under-a-file", ["demo", "--dir", "{in}/afile/sub"], "")
case("demo-dir-read-only-fs", ["demo", "--dir", "/proc/harness-demo"], "")
case(
    "demo-python-missing",
    ["demo", "--dir", "{in}/demo-out", "--python", "/nonexistent"],
    "no such interpreter",
)
case("demo-bad-format", ["demo", "--format", "pdf"], "invalid choice")
case("engine-no-action", ["engine"], "")
case("engine-bad-action", ["engine", "build"], "invalid choice")
case("engine-check-bad-spec", ["engine", "check", "sglang", "--params", "{}"], "ENGINE==VERSION")
case(
    "engine-check-unknown-engine",
    ["engine", "check", "vllm==0.1", "--params", "{}"],
    "unknown engine",
)
case(
    "engine-check-bad-json",
    ["engine", "check", "sglang==0.5.18", "--params", "{"],
    "not valid JSON",
)
case(
    "engine-check-json-list", ["engine", "check", "sglang==0.5.18", "--params", "[]"], "JSON object"
)
case(
    "engine-check-vocab-zero",
    ["engine", "check", "sglang==0.5.18", "--params", "{}", "--vocab", "0"],
    "positive",
)
case("engine-add-bad-spec", ["engine", "add", "sglang=0.5.18"], "ENGINE==VERSION")
case(
    "engine-add-bad-runtime",
    ["engine", "add", "sglang==0.5.18", "--runtime", "tpu"],
    "invalid choice",
)
_BP = [*VERBS["backports"], "--repo", "{repo}"]
case("backports-unknown-release", [*_BP, "--release", "nope"], "")
case("backports-option-release", [*_BP, "--release", "--upload-pack=x"], "")
case("backports-candidates-missing", [*_BP, "--candidates", "{in}/nope.txt"], "no such file")
case("backports-candidates-a-dir", [*_BP, "--candidates", "{in}/adir"], "is a directory")
case("backports-bad-since", [*_BP, "--since", "last tuesday"], "YYYY-MM-DD")
case("backports-bad-rule", [*_BP, "--rule", "(x"], "regular expression")
case("no-verb-unknown", ["frobnicate"], "invalid choice")

# -- issue 41: refused only after the cache was written --------------------------------------
for verb, argv in (
    ("compare", ["compare", "HEAD~1", "HEAD"]),
    ("fidelity", ["fidelity", "HEAD~1..HEAD"]),
):
    case(
        f"{verb}-source-an-option",
        [*argv, "--source", "--all", "--repo", "{repo}"],
        "--source",
    )
    case(
        f"{verb}-source-a-range-of-unknown-refs",
        [*argv, "--source", "main..pr/42", "--repo", "{repo}"],
        "range",
    )
case("compare-empty-range", ["compare", "HEAD", "HEAD", "--source", "main", "--repo", "{repo}"], "")
case("fidelity-empty-range", ["fidelity", "HEAD..HEAD", "--source", "main", "--repo", "{repo}"], "")
case("compare-no-source", ["compare", "HEAD~1", "HEAD", "--repo", "{repo}"], "no --source")
# -- issue 39: the tests section's own verb and options ------------------------------------------
case("tests-empty-range", ["tests", "HEAD..HEAD", "--source", "main", "--repo", "{repo}"], "")
case("tests-no-source", ["tests", "HEAD~1..HEAD", "--repo", "{repo}"], "--source")
case(
    "tests-source-an-option",
    ["tests", "HEAD~1..HEAD", "--source", "--all", "--repo", "{repo}"],
    "--source",
)
for bad in ("0", "-5", "soon", "nan"):
    case(
        f"tests-timeout-{bad}",
        ["tests", "HEAD~1..HEAD", "--source", "main", "--test-timeout", bad, "--repo", "{repo}"],
        "--test-timeout",
    )
case(
    "compare-test-timeout-zero",
    ["compare", "HEAD~1", "HEAD", "--source", "main", "--test-timeout", "0", "--repo", "{repo}"],
    "--test-timeout",
)
case("cache-bad-action", ["cache", "frob"], "invalid choice")
case("cache-bad-format", ["cache", "--format", "pdf"], "invalid choice")
case("cache-clear-repo-missing", ["cache", "clear", "--repo", "{in}/nowhere"], "no such directory")
case("cache-clear-repo-not-git", ["cache", "clear", "--repo", "{in}/adir"], "")
case("cache-clear-repo-a-file", ["cache", "clear", "--repo", "{in}/afile"], "")
case("cache-info-with-repo", ["cache", "info", "--repo", "{repo}"], "goes with clear or list")
case("cache-gc-with-repo", ["cache", "gc", "--repo", "{repo}"], "goes with clear or list")

# -- issue 27: the third round ---------------------------------------------------------------
COMPARE = [*VERBS["compare"], "--repo", "{repo}"]
for name, says in (
    ("prev-no-id", "findings[0].id must be a non-empty string"),
    ("prev-sections-int", "'sections' must be a list"),
    ("prev-sections-strs", "sections[0] must be a mapping"),
    ("prev-inputs-list", "'inputs' must be a mapping of strings"),
    ("prev-inputs-int", "'inputs' must be a mapping of strings"),
    ("prev-id-list", "findings[0].id must be a non-empty string"),
    ("prev-id-empty", "findings[0].id must be a non-empty string"),
    ("prev-deep", "not a JSON report (RecursionError)"),
    ("prev-deep-object", "not a JSON report (RecursionError)"),
    ("prev-severity", "severity must be one of P1, P2, info"),
    ("prev-findings-map", "findings must be a list"),
    ("prev-finding-str", "findings[0] must be a mapping"),
    ("prev-title-int", "findings[0].title must be a string"),
    ("prev-section-id-int", "sections[0].id must be a string"),
    ("prev-status-list", "findings[0].status must be a string"),
    ("prev-other-repo", "a report of another repository?"),
    ("prev-truncated", "not a JSON report"),
    ("prev-bom", "not a JSON report"),
    ("prev-control-char", "not a JSON report"),
    ("prev-number", "not a harness.report/1 report"),
    ("prev-null", "not a harness.report/1 report"),
):
    case(f"compare-previous-{name}", [*COMPARE, "--previous", f"{{in}}/{name}.json"], says)
for name, says in (
    ("p-expires-datetime", "expires must be a date YYYY-MM-DD"),
    ("p-id-list", "waivers[0].id must be a string"),
    ("p-kind-int", "waivers[0].kind must be a string"),
    ("p-reason-map", "waivers[0].reason must be a string"),
    ("p-waiver-extra", "unknown key 'until'"),
    ("p-python-tag", "p-python-tag.yaml:1: tag 'tag:yaml.org,2002:python/object/apply:os.system'"),
    ("p-python-name", "p-python-name.yaml:1: tag"),
    ("p-custom-tag", "p-custom-tag.yaml:1: tag '!mine'"),
    ("p-dup-key", "p-dup-key.yaml:2: duplicate key 'fail_on'"),
    ("p-dup-waiver-key", "p-dup-waiver-key.yaml:2: duplicate key 'id'"),
):
    case(f"compare-policy-{name}", [*COMPARE, "--policy", f"{{in}}/{name}.yaml"], says)
for name, says in (
    ("s-python-tag-tests", "s-python-tag-tests.yaml:2: tag"),
    ("s-python-tag-ref", "s-python-tag-ref.yaml:1: tag"),
    ("s-custom-tag", "s-custom-tag.yaml:1: tag '!foo'"),
    ("s-python-tag-deep", "s-python-tag-deep.yaml:3: tag"),
    ("s-dup-name", "s-dup-name.yaml:4: duplicate key 'name'"),
    ("s-dup-probe-key", "s-dup-probe-key.yaml:3: duplicate key 'id'"),
    ("s-timeout-nan", "expected a finite number"),
    ("s-timeout-inf", "expected a finite number"),
    ("s-timeout-neg-inf", "expected a finite number"),
    ("s-edit-parent", "lies outside the tree"),
    ("s-edit-absolute", "lies outside the tree"),
    ("s-edit-nul", "is not a path in the tree"),
    ("s-patch-parent", "lies outside the tree"),
    ("s-patch-absolute", "lies outside the tree"),
    ("s-mutation-parent", "s-mutation-parent.yaml:4: mutations.edits[0]: replace edit: 'path'"),
    ("s-pin-key-bracket", "s-pin-key-bracket.yaml:2: pins[0].key: invalid key path"),
    ("s-pin-key-open", "s-pin-key-open.yaml:2: pins[0].key: invalid key path"),
    ("s-pin-key-empty-seg", "s-pin-key-empty-seg.yaml:2: pins[0].key: invalid key path"),
    ("s-pin-key-close", "s-pin-key-close.yaml:2: pins[0].key: invalid key path"),
    ("s-apply-commit-path", "controls.c.edits[0]: apply-commit: unknown ref 'HEAD:a.py'"),
    ("s-apply-commit-unknown", "controls.c.edits[0]: apply-commit: unknown ref 'no-such-commit'"),
    ("s-mutation-apply-commit", "s-mutation-apply-commit.yaml:4: mutations.edits[0]: apply-commit"),
    ("s-unicode-ref", "s-unicode-ref.yaml:1: refs.head: unknown ref"),
    ("s-rtl-ref", "s-rtl-ref.yaml:1: refs.head: unknown ref"),
    ("s-nul", "s-nul.yaml:4: a character YAML text cannot hold: 0x0000"),
    ("s-bell", "s-bell.yaml:2: a character YAML text cannot hold: 0x0007"),
):
    case(f"compare-scenario-{name}", [*COMPARE, "--scenario", f"{{in}}/{name}.yaml"], says)
for name in (
    "s-python-tag-ref",
    "s-custom-tag",
    "s-python-tag-deep",
    "s-dup-probe-key",
    "s-timeout-nan",
    "s-timeout-inf",
    "s-edit-parent",
    "s-edit-absolute",
    "s-patch-parent",
    "s-patch-absolute",
    "s-apply-commit-path",
    "s-apply-commit-unknown",
    "s-unicode-ref",
    "s-rtl-ref",
    "s-nul",
    "s-bell",
):
    case(
        f"probe-scenario-{name}",
        ["probe", f"{{in}}/{name}.yaml", "--repo", "{repo}"],
        f"{name}.yaml",
    )
for name, says in (
    ("m-python-tag", "m-python-tag.yaml:1: tag"),
    ("m-dup-name", "m-dup-name.yaml:1: duplicate key 'name'"),
    ("m-parent-path", "lies outside the tree"),
    ("m-absolute-patch", "lies outside the tree"),
    ("m-apply-commit-path", "mutations[0]: apply-commit: unknown ref 'HEAD:a.py'"),
    ("m-nul", "m-nul.yaml: a character YAML text cannot hold: 0x0000 (line 2)"),
):
    case(
        f"mutate-mutation-{name}",
        ["mutate", "--mutation", f"{{in}}/{name}.yaml", "--repo", "{repo}"],
        says,
    )
LONG_NAME, LONG_PATH = "x" * 300, "ab/" * 1400
case(
    "compare-output-dir-long-name",
    [*COMPARE, "--output-dir", "{in}/" + LONG_NAME],
    "over 255 bytes",
)
case(
    "compare-output-dir-long-path",
    [*COMPARE, "--output-dir", "{in}/" + LONG_PATH],
    "over 4095 bytes",
)
case(
    "compare-output-dir-long-name-deep",
    [*COMPARE, "--output-dir", "{in}/no/such/" + LONG_NAME + "/x"],
    "over 255 bytes",
)
case("compare-output-old-long-name", [*COMPARE, "--output", "{in}/" + LONG_NAME], "over 255 bytes")
for verb in ("fidelity", "shape", "drift", "trace"):
    case(
        f"{verb}-output-long-name",
        [*VERBS[verb], "--repo", "{repo}", "--output", "{in}/" + LONG_NAME],
        "over 255 bytes",
    )
    case(
        f"{verb}-output-long-path",
        [*VERBS[verb], "--repo", "{repo}", "--output", "{in}/" + LONG_PATH + "r.json"],
        "over 4095 bytes",
    )
case("demo-output-dir-long-name", ["demo", "--output-dir", "{in}/" + LONG_NAME], "over 255 bytes")
case(
    "compare-output-dir-in-git",
    [*COMPARE, "--output-dir", "{repo}/.git/reports"],
    "inside the repository",
)
case(
    "compare-output-dir-is-git", [*COMPARE, "--output-dir", "{repo}/.git"], "inside the repository"
)
case(
    "compare-output-dir-in-tree",
    [*COMPARE, "--output-dir", "{repo}/reports"],
    "inside the repository",
)
case("compare-output-dir-is-tree", [*COMPARE, "--output-dir", "{repo}"], "inside the repository")
case("compare-output-old-in-tree", [*COMPARE, "--output", "{repo}/out"], "inside the repository")
case(
    "compare-output-dir-in-tree-dotdot",
    [*COMPARE, "--output-dir", "{in}/../repo/tests/out"],
    "inside the repository",
)
case("demo-output-dir-a-repository", ["demo", "--output-dir", "{repo}"], "is a git repository")
case("demo-output-dir-a-git-dir", ["demo", "--output-dir", "{repo}/.git"], "is a git repository")
case(
    "demo-output-dir-foreign-repo", ["demo", "--output-dir", "{in}/demo-foreign"], "not created by"
)
case("demo-output-dir-repo-a-file", ["demo", "--output-dir", "{in}/demo-file"], "not created by")
DEEP = 60000
case(
    "engine-check-deep-array",
    ["engine", "check", "sglang==0.5.18", "--params", "[" * DEEP + "]" * DEEP],
    "nested too deep",
)
case(
    "engine-check-deep-object",
    ["engine", "check", "sglang==0.5.18", "--params", '{"a":' * DEEP + "1" + "}" * DEEP],
    "nested too deep",
)
for verb, argv in VERBS.items():  # a work area or cache inside the repository under review
    case(
        f"{verb}-work-area-in-repository",
        [*argv, "--repo", "{repo}"],
        "lies inside the repository",
        {"HARNESS_WORK_DIR": "{repo}/.harness-work"},
    )
    case(
        f"{verb}-cache-in-git-dir",
        [*argv, "--repo", "{repo}"],
        "lies inside the repository",
        {"HARNESS_CACHE_DIR": "{repo}/.git/harness-cache"},
    )
case(
    "lanes-work-area-is-repository",
    ["lanes", "--repo", "{repo}"],
    "lies inside the repository",
    {"HARNESS_WORK_DIR": "{repo}"},
)


def test_compare_default_report_folder_in_a_read_only_place_is_refused_before_work(
    world, run_cli, monkeypatch
) -> None:
    monkeypatch.chdir("/proc")  # reports/<base>..<head> cannot be made here
    code, out, err = run_cli(*VERBS["compare"], "--repo", str(world["repo"]))
    assert code == 2 and out == "" and err.count("\n") == 1 and "report folder" in err, err


def test_the_corpus_is_large_and_covers_every_verb() -> None:
    from harness import commands

    assert len(CASES) >= 300
    covered = {argv[0] for _, argv, _, _ in CASES}
    assert set(commands.names()) <= covered, set(commands.names()) - covered


@pytest.fixture(scope="module")
def warm(world, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A cache and a work area as valid runs leave them (history index, sections, code.json)."""
    from harness.cli import main

    root = tmp_path_factory.mktemp("warm")
    areas = {"cache": root / "cache", "work": root / "work"}
    mp = pytest.MonkeyPatch()
    mp.setenv("HARNESS_CACHE_DIR", str(areas["cache"]))
    mp.setenv("HARNESS_WORK_DIR", str(areas["work"]))
    try:
        repo = str(world["repo"])
        for argv in (
            ["compare", "HEAD~1", "HEAD", "--source", "main", "--output-dir", str(root / "out")],
            ["fidelity", "HEAD~1..HEAD", "--source", "main", "--output", str(root / "f.md")],
        ):
            assert main([*argv, "--repo", repo, "--fail-on", "never"]) == 0
    finally:
        mp.undo()
    # fidelity writes its index from a process of its own once the report is out: the areas are
    # what the tests compare before and after each bad input, so that writer must be done
    from harness.infra.history_index import wait_for_writers

    wait_for_writers(areas["cache"])
    assert list(areas["cache"].glob("history/*/results/*.json"))
    return areas


def _tree(root: Path) -> list[tuple[str, str]]:
    """Every entry under ``root``: its kind, mode and bytes (a link: its target)."""
    out = []
    for p in sorted(root.rglob("*")) if root.exists() else []:
        st = p.lstat()
        if p.is_symlink():
            what = "link " + os.readlink(p)
        elif p.is_file():
            what = hashlib.sha256(p.read_bytes()).hexdigest()
        else:
            what = "folder"
        out.append((str(p.relative_to(root)), f"{st.st_mode:o} {what}"))
    return out


def _listing(root: Path) -> list[tuple[str, int]]:
    return (
        sorted(
            (str(p.relative_to(root)), p.stat().st_size if p.is_file() else -1)
            for p in root.rglob("*")
        )
        if root.exists()
        else []
    )


@pytest.mark.parametrize("areas_as", ["empty", "warm"])
@pytest.mark.parametrize("name,argv,says,env", CASES, ids=[c[0] for c in CASES])
def test_hostile_input_is_one_line_exit_2_and_writes_nothing(
    world,
    warm,
    run_cli,
    tmp_path: Path,
    monkeypatch,
    name: str,
    argv: list[str],
    says: str,
    env: dict[str, str],
    areas_as: str,
) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv(
        "XDG_CACHE_HOME", str(tmp_path / "xdg")
    )  # default report folders would land here
    areas = {k: tmp_path / k for k in warm}
    for key, folder in areas.items():  # this case's own: compared byte for byte after it
        if areas_as == "warm":
            shutil.copytree(warm[key], folder, symlinks=True)
        else:
            folder.mkdir(mode=0o700)
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(areas["cache"]))
    monkeypatch.setenv("HARNESS_WORK_DIR", str(areas["work"]))
    args = [a.replace("{repo}", str(world["repo"])).replace("{in}", str(world["in"])) for a in argv]
    for key, value in env.items():
        monkeypatch.setenv(key, value.replace("{repo}", str(world["repo"])))
    trees = [world["in"], areas["cache"], areas["work"]]
    before = (world["builder"].snapshot(), [_tree(t) for t in trees])
    repo_files = _listing(world["repo"])
    code, out, err = run_cli(*args)
    assert code == 2, (code, err)
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err and "internal error" not in err, err
    assert says in err, err
    assert out == ""
    assert list(cwd.iterdir()) == [] and not (tmp_path / "xdg").exists()
    assert (world["builder"].snapshot(), [_tree(t) for t in trees]) == before
    assert _listing(world["repo"]) == repo_files, "nothing written into the repository's folders"
