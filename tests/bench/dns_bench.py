"""`make bench`: tmdns, gdnsd and PowerDNS serve the same zone `tm.example.` in
turn, each pinned to core 0 on 127.0.0.1, and dnsperf, pinned to core 1, measures
each name (priority, weighted, multivalue, SRV, subnet with ECS, apex SOA):
queries per second, latency, loss; each tmdns run is followed by one at 80 %
of the QPS it reached, for latency below saturation (dns_latency). Then tmdns
on its full path, without pre-encoded replies (dns_fullpath), counting queries
or not (dns_metrics_cost), with 1 and with 2 worker processes on two names
(dns_scaling), and its memory over runs of random ECS prefixes (dns_memory).
Prints the tables and writes docs/benchmarks.md and docs/benchmarks.png."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import shlex
import signal
import sys
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType

from tests.bench import (
    dns_chart,
    dns_fullpath,
    dns_latency,
    dns_machine,
    dns_markdown,
    dns_memory,
    dns_metrics_cost,
    dns_scaling,
    dns_terminal,
    dnsperf,
)
from tests.bench.dns_gdnsd import gdnsd
from tests.bench.dns_launch import CLIENT_CORE, ROOT, Running
from tests.bench.dns_powerdns import PDNS_VARIANTS, port_up, powerdns
from tests.bench.dns_programs import ensure_packages
from tests.bench.dns_results import Report
from tests.bench.dns_tmdns import tmdns
from tests.bench.dns_zone import CASES

DOCS = ROOT / "docs"


@dataclasses.dataclass(frozen=True)
class Sections:
    """Which of the optional parts of the benchmark run."""

    variants: bool = True
    scaling: bool = True
    full_path: bool = True
    metrics_cost: bool = True
    latency: bool = True
    memory: bool = True


def measure(
    report: Report,
    running: Running,
    seconds: float,
    folder: Path,
    then: dns_latency.FollowUp | None = None,
) -> None:
    """Measure every name on `running`; `then` runs after each name with its
    measurement, while the server is still up (dns_latency)."""
    report.titles[running.key] = running.title
    report.files[running.key] = running.files
    folder.mkdir()
    for case in CASES:
        before = running.counters() if running.counters else None
        m = dnsperf.run(case, running.port, running.pids, seconds, folder)
        if running.counters and before is not None:
            after = running.counters()
            hits = after["packetcache-hit"] - before["packetcache-hit"]
            misses = after["packetcache-miss"] - before["packetcache-miss"]
            m = dataclasses.replace(m, cache_hits=hits / max(1, hits + misses))
        report.results[(running.key, case.key)] = m
        print(
            f"  {running.title:<26} {case.label:<22} {m.qps:>9,.0f} q/s  "
            f"avg {m.avg_ms:.2f} ms  p99 {m.p99_ms:.2f} ms  lost {m.lost}  "
            f"server CPU {m.server_cpu:.2f}",
            flush=True,
        )
        if then is not None:
            then(case, m)


def run(seconds: float, sections: Sections, workdir: Path) -> Report:
    command = shlex.join(["python", "-m", "tests.bench.dns_bench", *sys.argv[1:]])
    report = Report(
        seconds=seconds,
        command=command,
        date=datetime.now(UTC).isoformat(timespec="seconds"),
        load_before=dns_machine.load(),
    )
    ticks = dns_machine.cpu_ticks()
    with tmdns(workdir) as running:
        serial = running.serial  # the others serve tmdns's serial
        capped = (
            dns_latency.follow_up(report, running, seconds, workdir / "runs-tmdns-80")
            if sections.latency
            else None
        )
        measure(report, running, seconds, workdir / "runs-tmdns", capped)
    with gdnsd(workdir, serial) as running:
        measure(report, running, seconds, workdir / "runs-gdnsd")
    pdns = list(PDNS_VARIANTS) if sections.variants else ["powerdns"]
    with port_up() as check_port:
        for variant in pdns:
            with powerdns(workdir, serial, check_port, variant) as running:
                measure(report, running, seconds, workdir / f"runs-{variant}")
    if sections.full_path:
        dns_fullpath.measure(report, seconds, workdir)
    if sections.metrics_cost:
        dns_metrics_cost.measure(report, seconds, workdir)
    if sections.scaling:
        dns_scaling.measure(report, seconds, workdir)
    if sections.memory:
        dns_memory.measure(report, seconds, workdir)
    report.load_after = dns_machine.load()
    report.stolen = dns_machine.stolen_share(ticks, dns_machine.cpu_ticks())
    return report


@contextlib.contextmanager
def stopped_on_sigterm() -> Iterator[None]:
    """A SIGTERM unwinds like Ctrl-C, so every server is stopped on the way out."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def sections(args: argparse.Namespace) -> Sections:
    return Sections(
        variants=not args.no_variants,
        scaling=not args.no_scaling,
        full_path=not args.no_full_path,
        metrics_cost=not args.no_metrics_cost,
        latency=not args.no_latency,
        memory=not args.no_memory,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--seconds", type=float, default=10.0, help="per measurement (default 10)"
    )
    parser.add_argument(
        "--no-variants",
        action="store_true",
        help="skip PowerDNS with shared Lua state and without packet cache",
    )
    parser.add_argument(
        "--no-scaling",
        action="store_true",
        help="skip tmdns with 1 against 2 worker processes",
    )
    parser.add_argument(
        "--no-full-path",
        action="store_true",
        help="skip tmdns with TMDNS_DNS__FAST_PATH=false",
    )
    parser.add_argument(
        "--no-metrics-cost",
        action="store_true",
        help="skip tmdns with TMDNS_DNS__QUERY_METRICS=false against the default",
    )
    parser.add_argument(
        "--no-latency",
        action="store_true",
        help="skip tmdns at 80%% of its maximum QPS (dnsperf -Q)",
    )
    parser.add_argument(
        "--no-memory",
        action="store_true",
        help="skip tmdns's memory over runs of random ECS prefixes",
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the working folder (configs, logs)"
    )
    args = parser.parse_args()
    if args.seconds <= 0:
        parser.error("--seconds must be positive")
    ensure_packages()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {CLIENT_CORE})  # keep this process off core 0
    with stopped_on_sigterm(), tempfile.TemporaryDirectory(prefix="dns-bench-") as tmp:
        workdir = Path(tmp)
        try:
            report = run(args.seconds, sections(args), workdir)
        finally:
            if args.keep:
                kept = Path(tempfile.mkdtemp(prefix="dns-bench-kept-"))
                os.rename(workdir, kept / "run")
                workdir.mkdir()
                print(f"working folder kept in {kept / 'run'}")
    dns_terminal.print_tables(report)
    DOCS.mkdir(exist_ok=True)
    dns_chart.chart(report, DOCS / "benchmarks.png")
    (DOCS / "benchmarks.md").write_text(dns_markdown.markdown(report, "benchmarks.png"))
    print(f"\nwrote {DOCS / 'benchmarks.md'} and {DOCS / 'benchmarks.png'}")


if __name__ == "__main__":
    main()
