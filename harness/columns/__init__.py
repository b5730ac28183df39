"""Columns: refs and controls (a ref plus edits) materialized as trees the harness owns."""
