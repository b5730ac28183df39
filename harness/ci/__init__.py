"""What the GitHub Action (``action.yml`` at the repository root) runs between its steps.

``python -m harness.ci STEP`` — ``prepare`` (inputs, source branch, previous round's report),
``compare`` (runs ``harness compare``, records its exit code and, when it could not run, why),
``summary`` (the job summary), ``comment`` (one sticky pull request comment), ``fetch-run``
(the ``workflow_run`` half of the fork pattern) and ``gate`` (the exit code). The steps hand state
on through ``harness-ci.json`` in the report folder, which the artifact carries too. GitHub's REST
API is spoken with ``urllib`` (``github.py``) at ``GITHUB_API_URL`` with ``GITHUB_TOKEN``.
"""
