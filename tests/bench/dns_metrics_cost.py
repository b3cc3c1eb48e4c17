"""What do the query metrics cost the fast path? Two tmdns servers, one
counting (the default) and one with TMDNS_DNS__QUERY_METRICS=false, both
placed like the main table (core 0, dnsperf on core 1) and both up while
their runs alternate on the weighted, SRV and random names, ROUNDS times
each, so other work on the machine falls on both alike.

The figure is queries per server-CPU-second, summed over the rounds: the
cost of counting is how much of it the counting server gives up. The goal is
at most GOAL (5 %)."""

from __future__ import annotations

import contextlib
from pathlib import Path

from tests.bench import dnsperf
from tests.bench.dns_launch import CLIENT_CORE, SERVER_CORE, Running
from tests.bench.dns_results import Report
from tests.bench.dns_tmdns import tmdns
from tests.bench.dns_zone import CASES

CASE_KEYS = ("weighted", "srv", "random")
ROUNDS = 2
GOAL = 0.05
TITLES = {True: "tmdns, counting", False: "tmdns, not counting"}
ENV = {True: {}, False: {"TMDNS_DNS__QUERY_METRICS": "false"}}

Table = tuple[list[str], list[list[str]]]


def heading(report: Report) -> str:
    return (
        f"tmdns counting queries (the default) against TMDNS_DNS__QUERY_METRICS="
        f"false: {ROUNDS} alternating runs of {report.seconds:g} s per name and "
        f"server, tmdns on core {SERVER_CORE}, dnsperf on core {CLIENT_CORE}"
    )


def measure(report: Report, seconds: float, workdir: Path) -> None:
    cases = [c for c in CASES if c.key in CASE_KEYS]
    with contextlib.ExitStack() as stack:
        servers: dict[bool, Running] = {
            on: stack.enter_context(
                tmdns(
                    workdir,
                    key=f"tmdns-count-{on}".lower(),
                    title=TITLES[on],
                    extra_env=ENV[on],
                )
            )
            for on in (True, False)
        }
        for on in servers:
            (workdir / f"runs-tmdns-count-{on}".lower()).mkdir()
        for round_ in range(ROUNDS):
            for case in cases:
                order = (True, False) if round_ % 2 == 0 else (False, True)
                for on in order:
                    running = servers[on]
                    m = dnsperf.run(
                        case,
                        running.port,
                        running.pids,
                        seconds,
                        workdir / f"runs-tmdns-count-{on}".lower(),
                    )
                    report.metrics_cost.setdefault((on, case.key), []).append(m)
                    print(
                        f"  {running.title:<26} {case.label:<22} {m.qps:>9,.0f} q/s  "
                        f"server CPU {m.server_cpu:.2f}  "
                        f"{m.qps / m.server_cpu if m.server_cpu else 0:,.0f} per core",
                        flush=True,
                    )


def per_core(report: Report, on: bool, key: str) -> float | None:
    """Queries per server-CPU-second over every round of one server and name."""
    runs = report.metrics_cost.get((on, key), [])
    cpu = sum(m.server_cpu for m in runs)
    return sum(m.qps for m in runs) / cpu if cpu > 0 else None


def rows(report: Report) -> Table:
    head = ["name", "counting per core", "not counting per core", "cost"]
    out = []
    for case in CASES:
        counting, plain = (
            per_core(report, True, case.key),
            per_core(report, False, case.key),
        )
        if counting is None or plain is None:
            continue
        out.append(
            [
                case.label,
                f"{counting:,.0f}",
                f"{plain:,.0f}",
                f"{1 - counting / plain:+.1%}",
            ]
        )
    return head, out


def summary(report: Report) -> str:
    costs = [
        (case.label, 1 - c / p)
        for case in CASES
        if (c := per_core(report, True, case.key))
        and (p := per_core(report, False, case.key))
    ]
    if not costs:
        return ""
    label, worst = max(costs, key=lambda item: item[1])
    met = sum(cost <= GOAL for _, cost in costs)
    return (
        f"Goal: counting costs at most {GOAL:.0%} of the queries per server-CPU-"
        f"second. Met on {met} of {len(costs)} names; the most is {worst:+.1%} "
        f"({label}); a negative cost is noise between the two servers."
    )
