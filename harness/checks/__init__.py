"""Checks: each a function from resolved inputs to a report Section (checks never format)."""
