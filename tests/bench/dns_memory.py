"""Does tmdns's memory level off under random ECS? One fresh tmdns (fast path
on, placed like the main run) answers the random ECS name RUNS times back to
back, and its resident memory is read before the first run and after each.

Each run sends its own 100,000 random /24s (another seed per run), so the
runs together ask for more client networks than the prefix cache holds
(PREFIX_CACHE replies, app.dns.prefixcache: emptied and refilled when full): with one
set of prefixes over and over, the cache would fill once and the later runs
would show only that. The GeoIP database file is memory-mapped, so the pages
of it the lookups have touched count in the RSS too; the file-backed part is
recorded beside it (RssFile), to tell them from the server's own memory."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from app.dns.prefixcache import MAX_ENTRIES
from tests.bench import dnsperf
from tests.bench.dns_launch import CLIENT_CORE, SERVER_CORE
from tests.bench.dns_results import Report
from tests.bench.dns_tmdns import tmdns
from tests.bench.dns_zone import CASES

CASE_KEY = "random-ecs"
PREFIX_CACHE = MAX_ENTRIES  # per-prefix replies the server keeps
RUNS = 4
KEY = "tmdns-memory"
TITLE = "tmdns, memory"


def heading(report: Report) -> str:
    """One line that says what the memory table measured."""
    return (
        f"tmdns memory under random ECS /24s: {RUNS} runs of {report.seconds:g} s "
        f"back to back on one server, tmdns on core {SERVER_CORE}, dnsperf on "
        f"core {CLIENT_CORE}"
    )


def file_mib(pids: tuple[int, ...]) -> float:
    return sum(dnsperf.rss_mib(pid, "RssFile") for pid in pids)


def measure(report: Report, seconds: float, workdir: Path) -> None:
    case = next(c for c in CASES if c.key == CASE_KEY)
    with tmdns(workdir, key=KEY, title=TITLE) as running:
        report.memory_file_mib.append(file_mib(running.pids))
        for run in range(1, RUNS + 1):
            folder = workdir / f"runs-{KEY}" / str(run)
            folder.mkdir(parents=True)
            runs_case = dataclasses.replace(case, seed=case.seed + run)
            m = dnsperf.run(runs_case, running.port, running.pids, seconds, folder)
            report.memory.append(m)
            report.memory_file_mib.append(file_mib(running.pids))
            print(
                f"  {TITLE:<26} run {run} {case.label:<16} {m.qps:>9,.0f} q/s  "
                "RSS {:.0f} → {:.0f} MiB".format(*m.rss_mib),
                flush=True,
            )
