"""What do the query metrics cost the fast path? Two tmdns servers, one
counting (the default) and one with TMDNS_DNS__QUERY_METRICS=false, both
placed like the main table (core 0, dnsperf on core 1) and both up while
their runs alternate on the weighted, SRV and random names, so other work on
the machine falls on both alike.

The end-to-end figure is queries per server-CPU-second, summed over the
rounds: how much of it the counting server gives up. Two identical servers
differ by a few per cent, and the one started first is not always the
faster: the rounds are run by two pairs of servers, PAIRS, started in
opposite orders, ROUNDS_PER_PAIR rounds each, so the order cancels out. The
precise figure (dns_counting_ns) is the CPU counting adds to a reply in the
handler, as a share of what a whole reply costs the server that does not
count (one over its queries per server-CPU-second). The goal (GOAL, 5 %)
holds for a name when both are within it."""

from __future__ import annotations

import contextlib
from pathlib import Path

from tests.bench import dns_counting_ns, dnsperf
from tests.bench.dns_launch import CLIENT_CORE, SERVER_CORE, Running
from tests.bench.dns_results import Report
from tests.bench.dns_tmdns import tmdns
from tests.bench.dns_zone import CASES, Case

CASE_KEYS = ("weighted", "srv", "random")
PAIRS = ((True, False), (False, True))  # the order each pair of servers starts in
ROUNDS_PER_PAIR = 2
GOAL = 0.05
TITLES = {True: "tmdns, counting", False: "tmdns, not counting"}
ENV = {True: {}, False: {"TMDNS_DNS__QUERY_METRICS": "false"}}

Table = tuple[list[str], list[list[str]]]


def heading(report: Report) -> str:
    rounds = len(PAIRS) * ROUNDS_PER_PAIR
    return (
        f"tmdns counting queries (the default) against TMDNS_DNS__QUERY_METRICS="
        f"false: {rounds} alternating runs of {report.seconds:g} s per name and "
        f"server, by {len(PAIRS)} pairs of servers started in opposite orders, "
        f"tmdns on core {SERVER_CORE}, dnsperf on core {CLIENT_CORE}; in the "
        f"benchmark's process, {dns_counting_ns.ROUNDS} alternating rounds of "
        f"{dns_counting_ns.QUERIES:,} queries per handler"
    )


def measure(report: Report, seconds: float, workdir: Path) -> None:
    cases = [c for c in CASES if c.key in CASE_KEYS]
    for pair, order in enumerate(PAIRS):
        with contextlib.ExitStack() as stack:
            servers: dict[bool, Running] = {}
            for on in order:
                key = f"tmdns-count-{on}-{pair}".lower()
                servers[on] = stack.enter_context(
                    tmdns(workdir, key=key, title=TITLES[on], extra_env=ENV[on])
                )
                (workdir / f"runs-{key}").mkdir()
            if pair == 0:
                _in_process(report, cases, workdir / "tmdns-count-true-0")
            for round_ in range(ROUNDS_PER_PAIR):
                for case in cases:
                    turns = order if round_ % 2 == 0 else order[::-1]
                    for on in turns:
                        _run(report, case, servers[on], on, seconds, workdir, pair)


def _in_process(report: Report, cases: list[Case], folder: Path) -> None:
    snapshot = dns_counting_ns.load_snapshot(
        folder / "tmdns-snapshot.json", cases[0].qname
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


def _run(
    report: Report,
    case: Case,
    running: Running,
    on: bool,
    seconds: float,
    workdir: Path,
    pair: int,
) -> None:
    folder = workdir / f"runs-tmdns-count-{on}-{pair}".lower()
    m = dnsperf.run(case, running.port, running.pids, seconds, folder)
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
                f"{1 - counting / plain:+.1%}",  # as end_to_end()
                f"{found[True]:,.0f}",
                f"{found[False]:,.0f}",
                f"{found[True] - found[False]:+,.0f}",
                f"{1e9 / plain:,.0f}",
                f"{share:+.1%}",
            ]
        )
    return head, out


def end_to_end(report: Report, key: str) -> float | None:
    """The share of queries per server-CPU-second the counting server gave up."""
    counting, plain = per_core(report, True, key), per_core(report, False, key)
    if counting is None or not plain:
        return None
    return 1 - counting / plain


def summary(report: Report) -> str:
    costs = [
        (case.label, share, end_to_end(report, case.key))
        for case in CASES
        if (share := cost(report, case.key)) is not None
    ]
    if not costs:
        return ""
    label, worst, _ = max(costs, key=lambda item: item[1])
    whole = [e for _, _, e in costs if e is not None]
    met = sum(share <= GOAL and (e is None or e <= GOAL) for _, share, e in costs)
    return (
        f"Goal: counting costs at most {GOAL:.0%} of the server CPU per reply, "
        f"in the handler and end to end. Met on {met} of {len(costs)} names; "
        f"the most in the handler is {worst:+.1%} ({label}), end to end "
        f"{max(whole, default=0.0):+.1%}."
    )
