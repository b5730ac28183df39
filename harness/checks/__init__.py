"""Checks: each takes resolved inputs and returns ``Checked(result, section)`` (``result.py``): a
typed result the plan or the verb passes on, and the Section that renders it (checks never
format). ``registry.py`` lists the checks that take only a range."""
