"""Does `tmdns serve --workers N` keep its work per core? tmdns with 1 and
with 2 DNS worker processes (SO_REUSEPORT on one port, each process with its
own snapshot from the same database) on the weighted and SRV names, judged by
queries per server-CPU-second: if a second process cost nothing, each query
would take the same CPU.

Placement: every tmdns process on core 0, the server core of the main table,
and dnsperf on core 1. Both configurations get the same CPU, so what running
two processes costs (their own loops, turns on the core, colder caches) shows
as fewer queries per server-CPU-second. Letting the processes float over both
cores measured dnsperf instead: it needs most of core 1, a second process
sharing that core slowed it, and in a trial core 0 then sat idle 40 % of the
time while the server waited for queries: an unsaturated server, whose
batches are small.

Load per process: dnsperf keeps OUTSTANDING_PER_PROCESS queries in flight for
each process (-q 200 for two) over 64 sockets, since the kernel hands each
socket to one process by a hash and 4 sockets often split 3 to 1; each
process then has the queue one process had.

Scheduling: each configuration runs under the default policy and under
SCHED_BATCH (`chrt --batch 0`, which the workers inherit). Under the default
policy a process woken by a datagram preempts the one answering, so two
processes on one core take turns per few datagrams; SCHED_BATCH stops
wakeup preemption and each answers what it has read before the other runs,
as each would on a core of its own.

Servers of one policy stay up together and their runs alternate (1-2, then
2-1), ROUNDS per name, so a burst of other work falls on both; the figures
sum the rounds."""

from __future__ import annotations

import contextlib
from pathlib import Path

from tests.bench import dnsperf
from tests.bench.dns_launch import CLIENT_CORE, SERVER_CORE, Running
from tests.bench.dns_results import Report
from tests.bench.dns_tmdns import tmdns
from tests.bench.dns_zone import CASES
from tests.bench.dnsperf import Measurement

CASE_KEYS = ("weighted", "srv")
WORKERS = (1, 2)
POLICIES = ("default", "batch")  # batch: SCHED_BATCH, as `chrt --batch 0` sets
ROUNDS = 2
CLIENTS = 64
OUTSTANDING_PER_PROCESS = dnsperf.OUTSTANDING
GOAL = 0.9  # per core with 2 workers, against 1

Table = tuple[list[str], list[list[str]]]


def title(policy: str, workers: int) -> str:
    plural = "s" if workers > 1 else ""
    return f"tmdns, {workers} worker{plural}, {policy} scheduling"


def heading(report: Report) -> str:
    """One line that says what the scaling table compares."""
    return (
        f"tmdns --workers 1 against 2, under the default scheduling policy and "
        f"under SCHED_BATCH: {ROUNDS} alternating runs of {report.seconds:g} s per "
        f"name and server, every tmdns process on core {SERVER_CORE}, dnsperf on "
        f"core {CLIENT_CORE} with {CLIENTS} sockets and {OUTSTANDING_PER_PROCESS} "
        "queries in flight per process"
    )


def measure(report: Report, seconds: float, workdir: Path) -> None:
    cases = [c for c in CASES if c.key in CASE_KEYS]
    for p, policy in enumerate(POLICIES):
        started = WORKERS if p % 2 == 0 else tuple(reversed(WORKERS))
        with contextlib.ExitStack() as stack:
            servers: dict[int, Running] = {}
            for w in started:
                key = f"tmdns-{w}w-{policy}"
                servers[w] = stack.enter_context(
                    tmdns(
                        workdir,
                        w,
                        str(SERVER_CORE),
                        key,
                        title(policy, w),
                        batch_scheduling=policy == "batch",
                    )
                )
                (workdir / f"runs-{key}").mkdir()
            for case in cases:
                for turn in range(ROUNDS):
                    for w in WORKERS if turn % 2 == 0 else tuple(reversed(WORKERS)):
                        running = servers[w]
                        m = dnsperf.run(
                            case,
                            running.port,
                            running.pids,
                            seconds,
                            workdir / f"runs-tmdns-{w}w-{policy}",
                            str(CLIENT_CORE),
                            CLIENTS,
                            outstanding=OUTSTANDING_PER_PROCESS * w,
                        )
                        report.scaling.setdefault((policy, w, case.key), []).append(m)
                        _print(running, case.label, m)


def _print(running: Running, label: str, m: Measurement) -> None:
    cpu = " + ".join(f"{c:.2f}" for c in m.process_cpu)
    per_core = m.qps / m.server_cpu if m.server_cpu else 0.0
    print(
        f"  {running.title:<38} {label:<16} {m.qps:>9,.0f} q/s  "
        f"server CPU {cpu}  {per_core:,.0f} per core  "
        f"{m.switches_per_s:,.0f} switches/s",
        flush=True,
    )


def _runs(report: Report, policy: str, workers: int, key: str) -> list[Measurement]:
    return report.scaling.get((policy, workers, key), [])


def per_core(report: Report, policy: str, workers: int, key: str) -> float | None:
    """Queries per server-CPU-second over every round of one server and name."""
    runs = _runs(report, policy, workers, key)
    cpu = sum(m.server_cpu for m in runs)
    return sum(m.qps for m in runs) / cpu if cpu > 0 else None


def kept(report: Report, policy: str, key: str) -> float | None:
    """What 2 workers keep of 1 worker's queries per server-CPU-second."""
    one, two = per_core(report, policy, 1, key), per_core(report, policy, 2, key)
    return two / one if one and two is not None else None


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def rows(report: Report) -> Table:
    """One row per server and name, its rounds averaged."""
    head = [
        "name",
        "scheduling",
        "workers",
        "QPS",
        "p99 ms",
        "lost",
        "server CPU",
        "CPU per process",
        "dnsperf CPU",
        "switches per s",
        "QPS per server core",
        "per core vs 1 worker",
    ]
    out = []
    for case in CASES:
        for policy in POLICIES:
            for w in WORKERS:
                runs = _runs(report, policy, w, case.key)
                core = per_core(report, policy, w, case.key)
                if not runs or core is None:
                    continue
                share = kept(report, policy, case.key) if w > 1 else None
                processes = zip(*(m.process_cpu for m in runs), strict=True)
                out.append(
                    [
                        case.label,
                        policy,
                        str(w),
                        f"{_mean([m.qps for m in runs]):,.0f}",
                        f"{max(m.p99_ms for m in runs):.2f}",
                        str(sum(m.lost for m in runs)),
                        f"{_mean([m.server_cpu for m in runs]):.2f}",
                        " + ".join(f"{_mean(list(c)):.2f}" for c in processes),
                        f"{_mean([m.client_cpu for m in runs]):.2f}",
                        f"{_mean([m.switches_per_s for m in runs]):,.0f}",
                        f"{core:,.0f}",
                        "–" if share is None else f"{share:.2f}",
                    ]
                )
    return head, out


def summary(report: Report) -> str:
    """The goal, and what 2 workers kept per name and policy."""
    found = [
        (policy, case.label, share)
        for policy in POLICIES
        for case in CASES
        if (share := kept(report, policy, case.key)) is not None
    ]
    if not found:
        return ""
    parts = []
    for policy in POLICIES:
        shares = [(label, s) for p, label, s in found if p == policy]
        met = sum(s >= GOAL for _, s in shares)
        figures = ", ".join(f"{s:.2f} ({label})" for label, s in shares)
        parts.append(
            f"under {policy} scheduling {figures}: met on {met} of {len(shares)}"
        )
    return (
        f"Goal: 2 workers keep at least {GOAL:g} of 1 worker's queries per "
        f"server-CPU-second. Measured here, " + "; ".join(parts) + "."
    )


NOTES = """\
How to read it:

* `tmdns serve --workers N` runs N processes on one port with SO_REUSEPORT:
  the main process (DNS, API, prober, snapshot refresh) starts N-1 workers
  that answer DNS only, each compiling its own snapshot from the same
  database and refreshing it as the main process does. The kernel hands each
  client socket to one process by a hash of its addresses, so dnsperf used
  {clients} sockets here (4 in the main table) to spread the load, and kept
  {outstanding} queries in flight per process; "CPU per process" (main
  process first) shows how evenly it fell.
* **Placement.** Every tmdns process ran on core 0, the server core of the
  main table, and dnsperf on core 1, so 1 and 2 workers had the same CPU and
  the figure to read is "QPS per server core": it falls only by what running
  two processes costs. This machine has 2 cores and dnsperf needs most of
  one, so a second process could not get a core of its own. Letting the
  processes float over both cores measured dnsperf instead: a process on
  core 1 slowed dnsperf, and in a trial core 0 sat idle 40 % of the time
  while the server waited for queries: an unsaturated server reads small
  batches.
* **Scheduling.** Two processes on one core under the default policy
  preempt each other: a process woken by a datagram takes the core from the
  one answering, so each reads a few datagrams per turn and "switches per s"
  rises. Under SCHED_BATCH (`chrt --batch 0 tmdns serve --workers N`; the
  workers inherit it) a woken process waits until the running one has
  answered what it read, as each would on a core of its own; the
  [operations guide](operations.md#roles) says when to use it.
* Both servers of a policy stayed up while their runs alternated (1 then 2
  workers, then 2 then 1), {rounds} rounds per name; the figures sum or
  average the rounds (p99: the worst). "server CPU" adds up every tmdns
  process with all its threads (from /proc).
"""


def notes() -> str:
    return NOTES.format(
        clients=CLIENTS, outstanding=OUTSTANDING_PER_PROCESS, rounds=ROUNDS
    )
