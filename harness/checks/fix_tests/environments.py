"""The interpreter each column of the tests section runs with, and what its runs are given.

HEAD's columns (and the hunks, pins, reruns and lanes, all HEAD's trees) run in the environment
HEAD's packaging asks for (``envs/spec.py``), as of HEAD's commit day, or in ``--python``. The
source's columns (``source``, ``source_parent``) run in the environment the newest source's
packaging asks for, where its requirement lines differ from HEAD's (a source on another major
version: urllib3's main needs ``hypercorn`` for its conftest, 1.26.x does not), dated by the
source's commit day; where that environment cannot be built, they run in HEAD's and the report
says so. The runs also get the version a build would have read from git metadata (setuptools_scm,
hatch-vcs, pbr; an exported tree has no ``.git``): HEAD's, and the source's in the source columns
where they run in the source's environment.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from harness.checks.fix_tests.cells import Options
from harness.checks.fix_tests.runners import get_runner
from harness.checks.paths import is_test_path
from harness.envs import interpreter
from harness.envs.build import ensure_env
from harness.envs.interpreter import Env
from harness.envs.spec import AS_OF_ENV, EnvSpec, as_of, as_of_told, read_spec, uses_pbr
from harness.envs.step import EnvError
from harness.envs.version import pep440, uses_scm, version_file
from harness.git.history import describe
from harness.git.mutation import changed_lines
from harness.git.repo import GitRepo
from harness.infra.progress import note as progress_note
from harness.infra.progress import phase

if TYPE_CHECKING:
    from harness.checks.fix_tests.result import TestsRun

MAX_PROOFS = 50
SOURCE_COLUMNS = ("source", "source_parent")


def column_options(
    repo: GitRepo,
    run: TestsRun,
    given: str | None,
    timeout: float,
    setup: Sequence[str],
    constraints: Sequence[str] = (),
) -> tuple[Options, dict[str, Options]] | None:
    """HEAD's options, and the source columns' where they differ; None (with ``run.env_error``)
    when HEAD's environment could not be had. ``given``: ``--python``; ``timeout`` and ``setup``:
    a column's run limit and the project's build steps; ``constraints``: the pins every built
    environment is under (``--test-constraints``)."""
    listing = run.selection.head_listing
    env = interpreter.resolve(given)
    python, env_key = env.python, ""  # the own one for runners of no Python (cargo, go): no key
    needs_python = any(get_runner(f.runner).USES_PYTHON for f in run.selection.files)
    spec: EnvSpec | None = None
    if env.how == "given":
        env_key = env.fingerprint()
        run.env = f"given: {python} (its own environment, not built)"
    elif needs_python:
        spec = read_spec(_reader(repo, run.head), listing)
        spec.constraints = list(constraints)
        try:
            with phase("tests: the project's test environment"):
                env = _built(repo, run.head, spec, "HEAD's", run.env_notes)
        except EnvError as exc:
            run.env_error = str(exc)
            return None
        python, env_key = env.python, env.fingerprint()
        run.env = _described(env, spec, "HEAD's", "HEAD's commit day")
    extra, vfile = _version(repo, run.head, listing, run.env_notes, "")
    run.proof_paths = _fix_modules(repo, run)
    opts = Options(
        python,
        env_key,
        timeout,
        tuple(setup),
        tuple(run.proof_paths),
        vfile,
        tuple(sorted(extra.items())),
    )
    source = run.sources.newest
    if spec is None or source is None:
        return opts, {}
    theirs = _source_options(repo, run, source, spec, opts)
    return opts, dict.fromkeys(SOURCE_COLUMNS, theirs) if theirs is not None else {}


def _source_options(
    repo: GitRepo, run: TestsRun, source: str, head_spec: EnvSpec, opts: Options
) -> Options | None:
    """The source columns' options where the source's packaging asks for other requirement lines
    than HEAD's (None: HEAD's serve)."""
    listing = run.selection.source_listing
    spec = read_spec(_reader(repo, source), listing)
    spec.constraints = list(head_spec.constraints)
    # (a source whose packaging the spec cannot read names nothing but pytest: HEAD's serves it
    # better than an environment of pytest alone)
    if spec.requirements == head_spec.requirements or not spec.digests:
        return None
    notes: list[str] = []
    try:
        with phase("tests: the source's test environment"):
            env = _built(repo, source, spec, "the source's", notes)
    except EnvError as exc:
        run.env_notes.append(
            f"environment of the source columns: the source's packaging asks for other packages "
            f"than HEAD's, and their environment could not be built ({exc}): they ran in HEAD's"
        )
        return None
    run.env_notes.append(
        "environment of the source columns (source, source parent): the source's packaging asks "
        "for other packages than HEAD's; "
        + _described(env, spec, "the source's", "the source's commit day")
    )
    run.env_notes += [
        x.replace("environment:", "environment of the source columns:") for x in notes
    ]
    extra, vfile = _version(repo, source, listing, run.env_notes, " (source columns)")
    return replace(
        opts,
        python=env.python,
        env_key=env.fingerprint(),
        version_file=vfile,
        env=tuple(sorted(extra.items())),
    )


def _reader(repo: GitRepo, commit: str) -> Callable[[str], bytes | None]:
    return lambda p: repo.blob_at(commit, p)


def _built(repo: GitRepo, commit: str, spec: EnvSpec, whose: str, notes: list[str]) -> Env:
    """``spec``'s environment, dated by ``commit``'s day; its notes added to ``notes``."""
    at = repo.commit(commit)
    spec.as_of = as_of(at.committer_time, at.dated)
    notes += [f"environment: not installed: {d}" for d in spec.dropped]
    env = ensure_env(spec)
    progress_note(f"tests: environment {env.key[:12]} ({whose}) {env.how}")
    if env.note:
        notes.append(f"environment: {env.note}")
    notes += [f"environment: not installed: {x}" for x in env.left_out]
    return env


def _described(env: Env, spec: EnvSpec, whose: str, day: str) -> str:
    told = f"{AS_OF_ENV}" if as_of_told() else day
    dated = f"packages as of {spec.as_of} ({told}), " if spec.as_of and not env.note else ""
    pins = f", under {len(spec.constraints)} constraint(s) given" if spec.constraints else ""
    return (
        f"made with {env.installer or 'pip'} from {whose} "
        + (", ".join(spec.sources) or "nothing")
        + f" ({dated}key {env.key[:12]}, {len(spec.requirements)} requirement(s){pins})"
    )


def _version(
    repo: GitRepo, commit: str, listing: list[str], notes: list[str], where: str
) -> tuple[dict[str, str], tuple[str, str] | None]:
    """The variables (and version file) that stand for what ``commit``'s build would have read
    from git metadata."""
    read = _reader(repo, commit)
    pyproject = read("pyproject.toml") if "pyproject.toml" in listing else None
    extra: dict[str, str] = {}
    vfile = None
    if uses_scm(pyproject):
        version = pep440(describe(repo, commit))
        extra["SETUPTOOLS_SCM_PRETEND_VERSION"] = version
        found = version_file(pyproject, version)
        vfile = (found.path, found.text()) if found else None
        notes.append(
            f"version from git metadata supplied as {version}{where} (SETUPTOOLS_SCM_PRETEND_VERSION"
            + (f", {found.path} written" if found else "")
            + ")"
        )
    if uses_pbr(read, listing):
        # pbr asks git for the version at import (``pbr.version.VersionInfo``): an exported tree
        # has no git metadata. Its own answer without it is PBR_VERSION (no local part: pbr's
        # version parser refuses ``+gSHA``).
        version = pep440(describe(repo, commit)).partition("+")[0]
        extra["PBR_VERSION"] = version
        notes.append(f"version from git metadata supplied as {version}{where} (PBR_VERSION)")
    return extra, vfile


def _fix_modules(repo: GitRepo, run: TestsRun) -> list[str]:
    """The Python modules (not tests) that HEAD changes: where each column imported them from is
    the module proof."""
    changed = changed_lines(repo, run.base, run.head)
    return sorted(p for p in changed if p.endswith(".py") and not is_test_path(p))[:MAX_PROOFS]
