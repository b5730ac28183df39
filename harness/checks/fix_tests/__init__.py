"""The tests section: the tests a pick and its source changed, run without the fix, with it and at
the source, each node id judged (proves-fix, passes-both, fails-head, …), gaps pinned to the
commit the pick lacks. Stages: files (which tests) → columns (which trees) → cells (runs, through
the executor and the cache) → verdicts → gaps → section; ``check.py`` ties them together."""
