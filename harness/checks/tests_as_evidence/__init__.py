"""Checks whose evidence is the project's own tests: lane counts from one ``pytest --collect-only``
(``selection``), a pytest selection run per control mutation (``mutation``), and mutmut over the
changed functions (``sweep``); all three run pytest through ``pytest_run``."""
