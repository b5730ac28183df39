"""CI lanes: workflow jobs, their matrices, expressions and shell steps (``check.py``)."""
