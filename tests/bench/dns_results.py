"""What one `make bench` run measured, kept apart from how it is shown: every
dnsperf measurement keyed by server and name, the tmdns worker-scaling runs,
the servers' configurations, and the load average around the run."""

from __future__ import annotations

from dataclasses import dataclass, field

from tests.bench.dnsperf import Measurement

FULL = 0.95  # a process using this much of its core is the bottleneck


@dataclass
class Report:
    seconds: float
    command: str
    date: str
    titles: dict[str, str] = field(default_factory=dict)  # server key -> title
    results: dict[tuple[str, str], Measurement] = field(default_factory=dict)
    files: dict[str, dict[str, str]] = field(default_factory=dict)
    # tmdns with 1 and with 2 worker processes: (workers, case key) -> result
    scaling: dict[tuple[int, str], Measurement] = field(default_factory=dict)
    load_before: str = ""
    load_after: str = ""

    def get(self, server: str, case: str) -> Measurement | None:
        return self.results.get((server, case))


def bound(m: Measurement) -> str:
    """Which side used its whole core in a run: the one that set the pace."""
    if m.server_cpu >= FULL:
        return "server"
    return "dnsperf" if m.client_cpu >= FULL else "neither"
