"""The health prober: probes endpoints and records verdicts (DESIGN §5)."""
