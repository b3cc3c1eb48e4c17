"""What do the query metrics cost the fast path? Two tmdns servers, one
counting (the default) and one with TMDNS_DNS__QUERY_METRICS=false, both
placed like the main table (core 0, dnsperf on core 1) and both up while
their runs alternate on the weighted, SRV and random names, ROUNDS times
each, so other work on the machine falls on both alike.

The end-to-end figure is queries per server-CPU-second, summed over the
rounds: how much of it the counting server gives up. Two identical servers
differ by more than counting costs, so the goal (at most GOAL, 5 %) is judged
on the precise figure (dns_counting_ns): the CPU counting adds to a reply in
the handler, as a share of what a whole reply costs the server that does not
count (one over its queries per server-CPU-second)."""

from __future__ import annotations

import contextlib
from pathlib import Path

from tests.bench import dns_counting_ns, dnsperf
from tests.bench.dns_launch import CLIENT_CORE, SERVER_CORE, Running
from tests.bench.dns_results import Report
from tests.bench.dns_tmdns import tmdns
from tests.bench.dns_zone import CASES

CASE_KEYS = ("weighted", "srv", "random")
ROUNDS = 3
GOAL = 0.05
TITLES = {True: "tmdns, counting", False: "tmdns, not counting"}
ENV = {True: {}, False: {"TMDNS_DNS__QUERY_METRICS": "false"}}

Table = tuple[list[str], list[list[str]]]


def heading(report: Report) -> str:
    return (
        f"tmdns counting queries (the default) against TMDNS_DNS__QUERY_METRICS="
        f"false: {ROUNDS} alternating runs of {report.seconds:g} s per name and "
        f"server, tmdns on core {SERVER_CORE}, dnsperf on core {CLIENT_CORE}; "
        f"in the benchmark's process, {dns_counting_ns.ROUNDS} alternating rounds "
        f"of {dns_counting_ns.QUERIES:,} queries per handler"
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
        snapshot = dns_counting_ns.load_snapshot(
            workdir / "tmdns-count-true" / "tmdns-snapshot.json", cases[0].qname
        )
        for case in cases:
            report.counting_ns[case.key] = found = dns_counting_ns.ns_per_reply(
                snapshot, case
            )
            print(
                f"  in-process {case.label:<22} counting {found[True]:,.0f} ns, "
                f"not counting {found[False]:,.0f} ns per reply",
                flush=True,
            )
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


def added_ns(report: Report, key: str) -> float | None:
    """The handler CPU counting adds to one reply, in nanoseconds."""
    found = report.counting_ns.get(key)
    return None if found is None else found[True] - found[False]


def cost(report: Report, key: str) -> float | None:
    """Counting's share of the server CPU a reply costs: the nanoseconds it
    adds over the nanoseconds of a whole reply in the server not counting."""
    added, plain = added_ns(report, key), per_core(report, False, key)
    if added is None or not plain:
        return None
    return added * plain / 1e9


def rows(report: Report) -> Table:
    head = [
        "name",
        "counting per core",
        "not counting per core",
        "end to end",
        "handler ns, counting",
        "handler ns, not",
        "added ns",
        "server CPU per reply ns",
        "cost",
    ]
    out = []
    for case in CASES:
        counting, plain = (
            per_core(report, True, case.key),
            per_core(report, False, case.key),
        )
        found, share = report.counting_ns.get(case.key), cost(report, case.key)
        if counting is None or plain is None or found is None or share is None:
            continue
        out.append(
            [
                case.label,
                f"{counting:,.0f}",
                f"{plain:,.0f}",
                f"{1 - counting / plain:+.1%}",
                f"{found[True]:,.0f}",
                f"{found[False]:,.0f}",
                f"{found[True] - found[False]:+,.0f}",
                f"{1e9 / plain:,.0f}",
                f"{share:+.1%}",
            ]
        )
    return head, out


def summary(report: Report) -> str:
    costs = [
        (case.label, share)
        for case in CASES
        if (share := cost(report, case.key)) is not None
    ]
    if not costs:
        return ""
    label, worst = max(costs, key=lambda item: item[1])
    met = sum(share <= GOAL for _, share in costs)
    return (
        f"Goal: counting costs at most {GOAL:.0%} of the server CPU per reply. "
        f"Met on {met} of {len(costs)} names; the most is {worst:+.1%} ({label})."
    )
