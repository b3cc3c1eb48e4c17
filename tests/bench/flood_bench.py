"""`make bench-flood`: does a legitimate client still get answers while a
random-name UDP flood arrives as fast as one core can send it, with response
rate limiting (RRL) off and then on?

tmdns runs on core 0 (dns_tmdns). On core 1 two dnsperf processes run at the
same time: the flood, from 127.0.0.2, asks random names below tm.example.
(each one NXDOMAIN) with no rate cap; the legitimate client, from 127.0.9.1 (a
different /24, so RRL gives it its own buckets), asks names that exist at a
steady 200 queries per second, no (name, type) faster than the RRL rate, as a
resolver with a cache would. Its success is answered / sent. Prints a table and
writes docs/benchmarks-flood.md."""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from tests.bench import dns_machine, dnsperf
from tests.bench.dns_bench import stopped_on_sigterm
from tests.bench.dns_launch import CLIENT_CORE, ROOT, SERVER_CORE
from tests.bench.dns_programs import ensure_packages, tool
from tests.bench.dns_tmdns import tmdns
from tests.bench.dns_zone import ZONE, Case
from tests.bench.processes import cpu_seconds

DOC = ROOT / "docs" / "benchmarks-flood.md"
FLOOD = Case("flood", "random names", ZONE, "A", random_names=200_000)
FLOOD_SOURCE = "127.0.0.2"
# dnsperf sends a query only when one of its -q slots is free, and a dropped
# reply holds its slot until the -t timeout: with RRL dropping half the replies,
# -q 500 -t 1 would cap the flood near 1,000 queries/s. -q / -t is far above what
# one core can send (about 80,000/s here), so the core is the limit in both modes.
FLOOD_SOCKETS, FLOOD_OUTSTANDING, FLOOD_TIMEOUT = 4, 100_000, 0.2  # -c, -q, -t
LEGIT_SOURCE = "127.0.9.1"  # another /24 than the flood's
LEGIT_QPS = 200
LEGIT_TIMEOUT = 1.0  # seconds, about what a resolver waits before it retries
RRL_RATE, RRL_SLIP = 20, 2
GOAL = 0.99  # the legitimate client's success with RRL on

# Names of the bench zone, asked in turn. Under RRL each (name, type) is its
# own bucket of RRL_RATE replies/s per /24: 20 pairs at LEGIT_QPS is 10/s each,
# so a well-behaved client stays under the rate and only the flood is limited.
_NAMES = ("prio", "weighted", "multi", "net", "geo", "ns1", "s1.sip", "s2.sip")
LEGIT_QUESTIONS: tuple[tuple[str, str], ...] = (
    *((f"{n}.{ZONE}", t) for n in _NAMES for t in ("A", "AAAA")),
    (f"_sip._udp.sip.{ZONE}", "SRV"),
    (ZONE, "SOA"),
    (ZONE, "NS"),
    (f"s3.sip.{ZONE}", "A"),
)


@dataclass(frozen=True)
class Mode:
    key: str
    label: str
    env: dict[str, str]


MODES = (
    Mode("off", "RRL off", {"TMDNS_DNS__RRL__RATE": "0"}),
    Mode(
        "on",
        f"RRL on ({RRL_RATE}/s, slip {RRL_SLIP})",
        {
            "TMDNS_DNS__RRL__RATE": str(RRL_RATE),
            "TMDNS_DNS__RRL__SLIP": str(RRL_SLIP),
            # dns_tmdns checks the answers from 127.0.0.1 before measuring, up
            # to 40 times per name: too many for the rate. Only that address is
            # exempt; the flood's 127.0.0.2 shares its /24 buckets, unexempted.
            "TMDNS_DNS__RRL__EXEMPT": "127.0.0.1",
        },
    ),
)


@dataclass(frozen=True)
class Result:
    mode: Mode
    seconds: float
    flood: dnsperf.Measurement
    legit: dnsperf.Measurement
    server_cpu: float  # cores tmdns used while both ran

    @property
    def legit_success(self) -> float:
        return self.legit.completed / max(1, self.legit.sent)


def command(
    source: str,
    port: int,
    data: Path,
    seconds: float,
    timeout: float,
    extra: Sequence[str],
) -> list[str]:
    """dnsperf on the client core, sending from `source` (any 127/8 address is
    local on Linux loopback)."""
    return [
        tool("taskset"), "-c", str(CLIENT_CORE), tool("dnsperf"),
        "-s", "127.0.0.1", "-p", str(port), "-a", source, "-d", str(data),
        "-l", f"{seconds:g}", "-t", f"{timeout:g}", "-e", "-v", *extra,
    ]  # fmt: skip


def measure(
    mode: Mode,
    seconds: float,
    workdir: Path,
    questions: Sequence[tuple[str, str]] = LEGIT_QUESTIONS,
) -> Result:
    """Start tmdns with `mode`'s settings and run the flood and the legitimate
    client (asking `questions` in turn) against it at the same time."""
    folder = workdir / f"runs-{mode.key}"
    folder.mkdir()
    flood_data, legit_data = folder / "flood.queries", folder / "legit.queries"
    flood_data.write_bytes(FLOOD.query_data())
    legit_data.write_text("".join(f"{n} {t}\n" for n, t in questions))
    flood = ["-c", str(FLOOD_SOCKETS), "-q", str(FLOOD_OUTSTANDING)]
    legit = ["-Q", str(LEGIT_QPS)]
    with tmdns(workdir, key=f"tmdns-{mode.key}", extra_env=mode.env) as running:
        port = running.port
        cmds = {
            "flood": command(
                FLOOD_SOURCE, port, flood_data, seconds, FLOOD_TIMEOUT, flood
            ),
            "legit": command(
                LEGIT_SOURCE, port, legit_data, seconds, LEGIT_TIMEOUT, legit
            ),
        }
        before = sum(cpu_seconds(pid) for pid in running.pids)
        started = time.monotonic()
        _run_together(cmds, folder, seconds + LEGIT_TIMEOUT + 30)
        wall = time.monotonic() - started
        server_cpu = (sum(cpu_seconds(pid) for pid in running.pids) - before) / wall
    flooded, answered = (
        dnsperf.parse((folder / f"{k}.dnsperf").read_text(errors="replace"))
        for k in cmds
    )
    return Result(mode, seconds, flooded, answered, server_cpu)


def _run_together(cmds: dict[str, list[str]], folder: Path, limit: float) -> None:
    """Start every command at once, wait for all (killing any still running after
    `limit` seconds) and raise if one failed; output goes to folder/KEY.dnsperf."""
    processes: dict[str, subprocess.Popen[bytes]] = {}
    try:
        for key, cmd in cmds.items():
            with (folder / f"{key}.dnsperf").open("wb") as sink:
                processes[key] = subprocess.Popen(
                    cmd, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
                )
        deadline = time.monotonic() + limit
        for process in processes.values():
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)
    for key, process in processes.items():
        if process.returncode != 0:
            raise RuntimeError(f"dnsperf ({key}) failed: see {folder / key}.dnsperf")


HEADER = (
    "mode",
    "flood sent/s",
    "flood answered/s",
    "legit success",
    "legit p99 ms",
    "server CPU",
)


def rows(results: Sequence[Result]) -> list[tuple[str, ...]]:
    return [
        (
            r.mode.label,
            f"{r.flood.sent / r.seconds:,.0f}",
            f"{r.flood.completed / r.seconds:,.0f}",
            f"{100 * r.legit_success:.2f} % ({r.legit.completed:,}/{r.legit.sent:,})",
            f"{r.legit.p99_ms:.2f}",
            f"{r.server_cpu:.2f}",
        )
        for r in results
    ]


def terminal(results: Sequence[Result]) -> str:
    table = [HEADER, *rows(results)]
    widths = [max(len(row[i]) for row in table) for i in range(len(HEADER))]
    return "\n".join(
        "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in
                  enumerate(zip(row, widths, strict=True)))
        for row in table
    )  # fmt: skip


def verdict(results: Sequence[Result]) -> str:
    """Whether the goal is met: >= GOAL success for the client with RRL on."""
    on = [r for r in results if r.mode.key == "on"]
    met = bool(on) and all(r.legit_success >= GOAL for r in on)
    return (
        f"Goal, the legitimate client keeps at least {100 * GOAL:g} % success "
        f"with RRL on: {'met' if met else 'not met'}."
    )


def markdown(results: Sequence[Result], command_line: str, loads: str) -> str:
    versions = {"dnsperf": dns_machine.debian_versions()["dnsperf"]}
    versions |= {
        k: v for k, v in dns_machine.python_versions().items() if k != "matplotlib"
    }
    lines = [
        "# tmdns under a random-name flood, RRL off and on",
        "",
        f"Measured {datetime.now(UTC).isoformat(timespec='seconds')} with "
        f"`{command_line}` (`make bench-flood`), {results[0].seconds:g} s per mode.",
        "",
        "| " + " | ".join(HEADER) + " |",
        "|" + "---|" * len(HEADER),
        *("| " + " | ".join(row) + " |" for row in rows(results)),
        "",
        "tmdns (one process, SQLite, the `make bench` zone) runs on core "
        f"{SERVER_CORE}; two dnsperf processes run together on core {CLIENT_CORE}. "
        f"The flood sends from {FLOOD_SOURCE} random names below {ZONE} (each "
        f"NXDOMAIN) with {FLOOD_SOCKETS} sockets, up to {FLOOD_OUTSTANDING:,} "
        f"queries in flight, a {FLOOD_TIMEOUT:g} s timeout and no rate cap: as "
        "fast as that core can, whether replies come back or not. The legitimate "
        f"client sends from {LEGIT_SOURCE}, another /24, {LEGIT_QPS} queries/s "
        f"over {len(LEGIT_QUESTIONS)} names and types that exist, so no "
        f"(name, type) goes above the RRL rate of {RRL_RATE}/s: what a resolver "
        "with a cache would ask. *legit success* is the share of its queries "
        f"answered within {LEGIT_TIMEOUT:g} s, *legit p99* the 99th percentile "
        "latency of those answered. *flood answered/s* counts every reply dnsperf "
        f"got, the empty TC=1 replies RRL lets slip (one limited reply in "
        f"{RRL_SLIP}) included; a dropped reply counts as lost. With RRL on, "
        "the flood's /24 is shed within its first second (more than 4 × the "
        "rate limited): its queries are dropped before they are answered, one "
        "in 16 excepted, which is why tmdns has CPU to spare. *server CPU* is "
        "the cores tmdns used while both ran. During the RRL run 127.0.0.1, from "
        "which "
        "the answers are checked before measuring, is exempt.",
        "",
        f"Machine: {dns_machine.cpu_model()}, {os.cpu_count()} cores, "
        f"{dns_machine.memory()}, Linux {platform.release()}; "
        f"load average before / after: {loads}.",
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()) + ".",
        "",
        verdict(results),
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--seconds", type=float, default=10.0, help="per mode (default 10)"
    )
    args = parser.parse_args()
    if not 0 < args.seconds <= 600:
        parser.error("--seconds must be in (0, 600]")
    ensure_packages()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {CLIENT_CORE})  # keep this process off core 0
    load_before = dns_machine.load()
    results = []
    with stopped_on_sigterm(), tempfile.TemporaryDirectory(prefix="dns-flood-") as tmp:
        for mode in MODES:
            result = measure(mode, args.seconds, Path(tmp))
            print(
                f"  {mode.label}: legit {result.legit.rcodes or 'no replies'}; "
                f"flood {result.flood.rcodes or 'no replies'}",
                flush=True,
            )
            results.append(result)
    loads = f"{load_before} / {dns_machine.load()}"
    print("\n" + terminal(results) + "\n\n" + verdict(results))
    command_line = shlex.join(
        ["python", "-m", "tests.bench.flood_bench", *sys.argv[1:]]
    )
    DOC.parent.mkdir(exist_ok=True)
    DOC.write_text(markdown(results, command_line, loads))
    print(f"\nwrote {DOC}")


if __name__ == "__main__":
    main()
