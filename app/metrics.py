"""Prometheus metrics, one registry per running tmdns (no module globals)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

PROBE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
SLIP_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.probe_duration = Histogram(
            "tmdns_probe_duration_seconds",
            "Time one health probe took",
            ["protocol"],
            buckets=PROBE_BUCKETS,
            registry=r,
        )
        self.probe_results = Counter(
            "tmdns_probe_results_total",
            "Health probe verdicts",
            ["protocol", "result", "outcome"],
            registry=r,
        )
        self.probe_slip = Histogram(
            "tmdns_probe_schedule_slip_seconds",
            "How late a probe started against its schedule",
            buckets=SLIP_BUCKETS,
            registry=r,
        )
        self.transitions = Counter(
            "tmdns_health_transitions_total",
            "Endpoint health state changes",
            ["zone", "profile", "endpoint", "state"],
            registry=r,
        )
        self.endpoint_state = Gauge(
            "tmdns_endpoint_state",
            "1 for each endpoint's current state",
            ["zone", "profile", "endpoint", "state"],
            registry=r,
        )
        self.endpoint_stale = Gauge(
            "tmdns_endpoint_stale",
            "1 when the prober has not reported on the endpoint for 3 intervals",
            ["zone", "profile", "endpoint"],
            registry=r,
        )
        self.snapshot_age = Gauge(
            "tmdns_snapshot_age_seconds",
            "Age of the snapshot DNS answers from",
            registry=r,
        )
        self.snapshot_generation = Gauge(
            "tmdns_snapshot_generation",
            "Configuration generation being served",
            registry=r,
        )
