"""harness: differential regression and cherry-pick fidelity harness."""

__version__ = "0.1.0"
