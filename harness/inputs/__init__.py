"""What a run reads before any check: the scenario, the policy, bounded YAML."""
