"""What does a query cost tmdns when no stored reply fits? tmdns with
TMDNS_DNS__FAST_PATH=false decodes, decides and encodes every query anew, as
it does for a query the pre-encoded replies do not cover: measured on the
weighted, SRV, random-name and random-ECS names, placed like the main run
(tmdns on core 0, dnsperf on core 1), after the main table.

The figure that matters is queries per server-CPU-second, not QPS: it is the
cost of the path, whatever share of its core tmdns got. The goal is at least
GOAL_PER_CORE of them, so that one core carries a real load even when every
query misses the stored replies (a flood of new names or networks)."""

from __future__ import annotations

from pathlib import Path

from tests.bench import dnsperf
from tests.bench.dns_launch import CLIENT_CORE, SERVER_CORE
from tests.bench.dns_results import Report
from tests.bench.dns_tmdns import tmdns
from tests.bench.dns_zone import CASES

CASE_KEYS = ("weighted", "srv", "random", "random-ecs")
ENV = {"TMDNS_DNS__FAST_PATH": "false"}
KEY = "tmdns-full"
TITLE = "tmdns, full path"
GOAL_PER_CORE = 30_000  # queries per server-CPU-second


def heading(report: Report) -> str:
    """One line that says what the full-path table compares."""
    return (
        f"tmdns on the full path (TMDNS_DNS__FAST_PATH=false) against the fast "
        f"path of the main table: {report.seconds:g} s per run, tmdns on core "
        f"{SERVER_CORE}, dnsperf on core {CLIENT_CORE}"
    )


def measure(report: Report, seconds: float, workdir: Path) -> None:
    cases = [c for c in CASES if c.key in CASE_KEYS]
    with tmdns(workdir, key=KEY, title=TITLE, extra_env=ENV) as running:
        folder = workdir / f"runs-{KEY}"
        folder.mkdir()
        for case in cases:
            m = dnsperf.run(case, running.port, running.pids, seconds, folder)
            report.full_path[case.key] = m
            per_core = m.qps / m.server_cpu if m.server_cpu else 0.0
            print(
                f"  {TITLE:<26} {case.label:<22} {m.qps:>9,.0f} q/s  "
                f"p99 {m.p99_ms:.2f} ms  lost {m.lost}  server CPU "
                f"{m.server_cpu:.2f}  {per_core:,.0f} per core",
                flush=True,
            )
