"""Prometheus metrics, one registry per running tmdns (no module globals); the
loop restart counts are read from the supervisor when scraped."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

Q_LABELS = ("zone", "profile", "qtype", "rcode")
A_LABELS = ("zone", "profile", "endpoint")
P_LABELS = ("transport", "path")
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
        self.vantage_view = Gauge(
            "tmdns_vantage_view",
            "This prober's own view of each endpoint: 1 up, 0 down, -1 checking",
            ["vantage", "zone", "profile", "endpoint"],
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
        self.store_generation = Gauge(
            "tmdns_store_generation",
            "The database's configuration generation, as of the last poll",
            registry=r,
        )
        self.snapshot_lag = Gauge(
            "tmdns_snapshot_lag_seconds",
            "Seconds since the snapshot was last confirmed to hold the "
            "database's generation",
            registry=r,
        )
        self.store_up = Gauge(
            "tmdns_store_up",
            "1 when the last poll reached the database",
            registry=r,
        )
        self.snapshot_from_file = Gauge(
            "tmdns_snapshot_from_file",
            "1 while serving the local snapshot file (database unreachable at start)",
            registry=r,
        )
        self.quarantined = Gauge(
            "tmdns_quarantined_profiles",
            "Stored profiles (or zones) that could not be loaded or compiled",
            registry=r,
        )
        self.verdicts_pending = Gauge(
            "tmdns_verdicts_pending",
            "Probe verdicts kept for writing (grows while the database is away)",
            registry=r,
        )

    def count_restarts(self, restarts: Callable[[], Mapping[str, int]]) -> None:
        """`tmdns_loop_restarts_total{loop}`, read from the supervisor at scrape."""
        self.registry.register(
            _ReadAtScrape(
                "tmdns_loop_restarts",
                "Times a background loop failed and was started again",
                "loop",
                restarts,
            )
        )

    def count_queries(self, totals: Callable[[], QueryTotals]) -> None:
        """The DNS process's query totals (app.dns.querystats), labelled when
        scraped: by zone, profile, qtype and rcode; answers by the endpoint
        handed out; replies by transport and answer path; queries by the
        client's country."""
        families: tuple[tuple[str, str, Labels, Callable[[], Any]], ...] = (
            ("queries", "DNS queries answered", Q_LABELS, lambda: totals().queries),
            ("answers", "Endpoints handed out", A_LABELS, lambda: totals().answers),
            (
                "replies",
                "Replies by transport and path",
                P_LABELS,
                lambda: totals().paths,
            ),
            (
                "client_queries",
                "Queries by the client's country (ECS, else the source; GeoIP)",
                ("country",),
                lambda: totals().countries,
            ),
        )
        for name, help_text, labels, read in families:
            family = _ReadAtScrape(f"tmdns_dns_{name}", help_text, labels, read)
            self.registry.register(family)

    def count_rrl(self, counts: Callable[[], Mapping[str, int]]) -> None:
        """`tmdns_rrl_responses_total{action}`: replies response rate limiting
        limited (dropped or slipped), slipped (sent empty with TC=1), let
        through over the rate (exempt network or valid cookie), or shed before
        answering; per process."""
        self.registry.register(
            _ReadAtScrape(
                "tmdns_rrl_responses",
                "Replies response rate limiting acted on, by action",
                "action",
                counts,
            )
        )


Labels = tuple[str, ...]


class QueryTotals(Protocol):
    """What app.dns.querystats keeps (not imported: metrics is below dns)."""

    @property
    def queries(self) -> Mapping[tuple[str, str, str, str], int]: ...
    @property
    def answers(self) -> Mapping[tuple[str, str, str], int]: ...
    @property
    def paths(self) -> Mapping[tuple[str, str], int]: ...
    @property
    def countries(self) -> Mapping[str, int]: ...


class _ReadAtScrape(Collector):
    """A counter family whose values another object keeps, read when scraped
    (so the hot path only increments plain integers); `read` gives them by
    label value, or by a tuple of values with several labels."""

    def __init__(
        self,
        name: str,
        help_text: str,
        label: str | tuple[str, ...],
        read: Callable[[], Mapping[str, int]] | Callable[[], Mapping[Labels, int]],
    ) -> None:
        self._labels = (label,) if isinstance(label, str) else label
        self._name, self._help, self._read = name, help_text, read

    def collect(self) -> Iterator[CounterMetricFamily]:
        family = CounterMetricFamily(self._name, self._help, labels=self._labels)
        for value, count in self._read().items():
            family.add_metric([value] if isinstance(value, str) else value, count)
        yield family

    def describe(self) -> Iterable[CounterMetricFamily]:
        return []
