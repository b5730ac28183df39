"""Cherry-pick fidelity: each pick against its source (``check.py`` assembles the section)."""
