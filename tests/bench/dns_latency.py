"""How fast does tmdns answer when it is busy but not saturated? The main
table's latencies are at the maximum, where dnsperf keeps 100 queries in
flight and they queue, while a server in service runs below it. So on tmdns,
for every name, dnsperf runs once more right after the main measurement, on
the same server process and placement, capped (-Q) at SHARE of the QPS just
measured.

Measuring on the same server, seconds after the maximum, keeps the rate
relative to what that process did under the same conditions (a second server
started later would meet other load on the machine). Each capped run finds
what the main run of its name left, e.g. a warm prefix cache for the random
ECS name. The goal: p99 at most GOAL_P99_MS milliseconds."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.bench import dnsperf
from tests.bench.dns_launch import Running
from tests.bench.dns_results import Report
from tests.bench.dns_zone import Case
from tests.bench.dnsperf import Measurement

SHARE = 0.8  # of the maximum QPS
GOAL_P99_MS = 2.0

FollowUp = Callable[[Case, Measurement], None]


def offered(fastest: Measurement) -> int:
    """The rate cap for dnsperf: SHARE of the maximum, at least 1 query a
    second (a lower cap would not be one)."""
    return max(1, int(SHARE * fastest.qps))


def heading(report: Report) -> str:
    """One line that says what the latency table measured."""
    return (
        f"tmdns at {SHARE:.0%} of its maximum (dnsperf -Q): {report.seconds:g} s "
        "per run, right after each name's main run, on the same server"
    )


def follow_up(
    report: Report, running: Running, seconds: float, folder: Path
) -> FollowUp:
    """What the main measurement of tmdns calls after each name: measure it
    again at SHARE of the QPS it just reached."""
    folder.mkdir()

    def measure(case: Case, fastest: Measurement) -> None:
        rate = offered(fastest)
        m = dnsperf.run(case, running.port, running.pids, seconds, folder, rate=rate)
        report.latency[case.key] = (rate, m)
        print(
            f"  {running.title + f' at {SHARE:.0%}':<26} {case.label:<22} "
            f"{m.qps:>9,.0f} q/s  p50 {m.p50_ms:.2f} ms  p99 {m.p99_ms:.2f} ms  "
            f"max {m.max_ms:.2f} ms  lost {m.lost}",
            flush=True,
        )

    return measure
