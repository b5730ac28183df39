"""The verdict: the gate, root causes, and the ledger against a previous report."""
