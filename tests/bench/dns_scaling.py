"""Does `tmdns serve --workers N` scale? tmdns with 1 and with 2 DNS worker
processes (SO_REUSEPORT on one port, each process with its own snapshot from
the same database) on the weighted and SRV names, in the same run as the rest.

The machine has 2 cores and dnsperf needs most of one, so the placement is
chosen not to favour either side: tmdns's processes may use every core and
dnsperf stays pinned to core 1, as in the main table. One process keeps the
core it has there; a second gets what dnsperf leaves. (Letting dnsperf float
too lowered both runs in trials, which would measure the scheduler.) Both
servers stay up and the runs alternate, 1-2 then 2-1, so a burst of other
work on the machine falls on both. dnsperf opens 64 sockets, not 4: the kernel
spreads sockets over the workers by a hash, and 4 sockets often split 3 to 1
or 4 to 0, which would hide the second worker."""

from __future__ import annotations

import contextlib
from pathlib import Path

from tests.bench import dnsperf
from tests.bench.dns_launch import ALL_CORES, CLIENT_CORE, Running
from tests.bench.dns_results import Report
from tests.bench.dns_tmdns import tmdns
from tests.bench.dns_zone import CASES

CASE_KEYS = ("weighted", "srv")
WORKERS = (1, 2)
SERVER_CORES = ALL_CORES
CLIENT_CORES = str(CLIENT_CORE)
CLIENTS = 64


def title(workers: int) -> str:
    return f"tmdns, {workers} worker{'s' if workers > 1 else ''}"


def heading(report: Report) -> str:
    """One line that says what the scaling table compares."""
    return (
        f"tmdns --workers 1 against 2: {report.seconds:g} s per run, tmdns on cores "
        f"{SERVER_CORES}, dnsperf on core {CLIENT_CORES} with {CLIENTS} sockets"
    )


def measure(report: Report, seconds: float, workdir: Path) -> None:
    cases = [c for c in CASES if c.key in CASE_KEYS]
    with contextlib.ExitStack() as stack:
        servers: dict[int, Running] = {
            w: stack.enter_context(
                tmdns(workdir, w, SERVER_CORES, f"tmdns-{w}w", title(w))
            )
            for w in WORKERS
        }
        for w in WORKERS:
            (workdir / f"runs-tmdns-{w}w").mkdir()
        for i, case in enumerate(cases):
            for w in WORKERS if i % 2 == 0 else tuple(reversed(WORKERS)):
                running = servers[w]
                m = dnsperf.run(
                    case,
                    running.port,
                    running.pids,
                    seconds,
                    workdir / f"runs-tmdns-{w}w",
                    CLIENT_CORES,
                    CLIENTS,
                )
                report.scaling[(w, case.key)] = m
                cpu = " + ".join(f"{c:.2f}" for c in m.process_cpu)
                print(
                    f"  {running.title:<26} {case.label:<22} {m.qps:>9,.0f} q/s  "
                    f"p99 {m.p99_ms:.2f} ms  lost {m.lost}  server CPU {cpu}",
                    flush=True,
                )
