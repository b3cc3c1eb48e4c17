"""What one `make bench` run measured, kept apart from how it is shown: every
dnsperf measurement keyed by server and name, the tmdns worker-scaling runs,
tmdns on its full path, at 80 % of its maximum and under random ECS for
memory, the servers' configurations, and the load average around the run."""

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
    # tmdns with 1 and with 2 worker processes (dns_scaling):
    # (scheduling policy, workers, case key) -> its rounds
    scaling: dict[tuple[str, int, str], list[Measurement]] = field(default_factory=dict)
    # tmdns with TMDNS_DNS__FAST_PATH=false: case key -> result (dns_fullpath)
    full_path: dict[str, Measurement] = field(default_factory=dict)
    # tmdns counting queries or not: (counting, case key) -> runs (dns_metrics_cost)
    metrics_cost: dict[tuple[bool, str], list[Measurement]] = field(
        default_factory=dict
    )
    # CPU ns per fast-path reply in-process: case key -> {counting: ns}
    counting_ns: dict[str, dict[bool, float]] = field(default_factory=dict)
    # tmdns with dnsperf -Q: case key -> (offered q/s, result) (dns_latency)
    latency: dict[str, tuple[int, Measurement]] = field(default_factory=dict)
    # random ECS run after run on one tmdns (dns_memory): the runs in order, and
    # the file-backed part of the RSS before the first and after each
    memory: list[Measurement] = field(default_factory=list)
    memory_file_mib: list[float] = field(default_factory=list)
    load_before: str = ""
    load_after: str = ""
    stolen: float = 0.0  # the share of CPU time the host took during the run

    def get(self, server: str, case: str) -> Measurement | None:
        return self.results.get((server, case))


def bound(m: Measurement) -> str:
    """Which side used its whole core in a run: the one that set the pace."""
    if m.server_cpu >= FULL:
        return "server"
    return "dnsperf" if m.client_cpu >= FULL else "neither"
