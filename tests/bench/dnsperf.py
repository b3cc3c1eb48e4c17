"""One dnsperf run against one name, pinned to the client core: throughput, loss,
and latency (average and p99 from dnsperf's per-query `-v` lines), with the CPU
the server's processes and dnsperf used meanwhile."""

from __future__ import annotations

import dataclasses
import math
import re
import resource
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.bench.dns_launch import CLIENT_CORE
from tests.bench.dns_programs import tool
from tests.bench.dns_zone import Case, ecs_option_hex
from tests.bench.processes import context_switches, cpu_seconds

CLIENTS = 4  # -c: UDP sockets
OUTSTANDING = 100  # -q: queries in flight (no -Q rate cap unless asked)
TIMEOUT = 5  # -t: a query unanswered after this is lost


@dataclass(frozen=True)
class Measurement:
    sent: int
    completed: int
    lost: int
    qps: float
    avg_ms: float
    p50_ms: float
    p99_ms: float
    max_ms: float
    rcodes: str  # dnsperf's "Response codes" line
    reply_bytes: int  # average response size
    server_cpu: float  # cores the server used during the run, all processes
    client_cpu: float  # cores dnsperf used
    cache_hits: float | None = None  # PowerDNS packet cache hit share
    process_cpu: tuple[float, ...] = ()  # server_cpu per process, main first
    rss_mib: tuple[float, float] = (0.0, 0.0)  # server memory before and after
    switches_per_s: float = 0.0  # the server's context switches, all processes


def command(
    case: Case,
    port: int,
    seconds: float,
    data: Path,
    cores: str = str(CLIENT_CORE),
    clients: int = CLIENTS,
    rate: int | None = None,
    outstanding: int = OUTSTANDING,
) -> list[str]:
    """dnsperf's command line; `rate` caps the queries per second it sends
    (-Q), for latency below the maximum, where queues do not build up;
    `outstanding` is how many queries it keeps in flight (-q)."""
    cmd = [
        tool("taskset"), "-c", cores, tool("dnsperf"),
        "-s", "127.0.0.1", "-p", str(port), "-d", str(data),
        "-l", f"{seconds:g}", "-c", str(clients), "-q", str(outstanding),
        "-t", str(TIMEOUT), "-v",
    ]  # fmt: skip
    if case.binary:
        cmd.append("-B")  # whole messages, their EDNS included
    else:
        cmd.append("-e")
    if case.ecs:
        cmd += ["-E", ecs_option_hex(*case.ecs)]
    if case.tcp:
        cmd += ["-m", "tcp"]
    if rate is not None:
        cmd += ["-Q", str(rate)]
    return cmd


def run(
    case: Case,
    port: int,
    server_pids: Sequence[int],
    seconds: float,
    folder: Path,
    cores: str = str(CLIENT_CORE),
    clients: int = CLIENTS,
    rate: int | None = None,
    outstanding: int = OUTSTANDING,
) -> Measurement:
    """Measure `case` for `seconds`; `server_pids` are all the processes that
    answer on `port`, `cores` where dnsperf runs, `clients` its sockets, `rate`
    the queries per second it may send (None: as many as are answered),
    `outstanding` the queries it keeps in flight."""
    data = folder / f"{case.key}.queries"
    data.write_bytes(case.query_data())
    rss_before = sum(rss_mib(pid) for pid in server_pids)
    out = folder / f"{case.key}.dnsperf"
    cpu_server = [cpu_seconds(pid) for pid in server_pids]
    switches = sum(context_switches(pid) for pid in server_pids)
    cpu_client = _children_cpu()
    started = time.monotonic()
    with out.open("wb") as sink:
        process = subprocess.Popen(
            command(case, port, seconds, data, cores, clients, rate, outstanding),
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        try:
            process.wait(timeout=seconds + TIMEOUT + 30)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)
    wall = time.monotonic() - started
    server = tuple(
        (cpu_seconds(pid) - before) / wall
        for pid, before in zip(server_pids, cpu_server, strict=True)
    )
    client = (_children_cpu() - cpu_client) / wall
    switches = sum(context_switches(pid) for pid in server_pids) - switches
    if process.returncode != 0:
        raise RuntimeError(f"dnsperf failed ({process.returncode}): see {out}")
    measured = parse(out.read_text(errors="replace"), sum(server), client)
    rss_after = sum(rss_mib(pid) for pid in server_pids)
    return dataclasses.replace(
        measured,
        process_cpu=server,
        rss_mib=(rss_before, rss_after),
        switches_per_s=switches / wall,
    )


def rss_mib(pid: int, field: str = "VmRSS") -> float:
    """Resident memory of a process, MiB (0 if it is gone); `field` another
    line of /proc/PID/status, e.g. RssFile: the pages of mapped files."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    found = re.search(rf"^{field}:\s+(\d+) kB", status, re.M)
    return int(found.group(1)) / 1024 if found else 0.0


def parse(text: str, server_cpu: float = 0.0, client_cpu: float = 0.0) -> Measurement:
    def number(label: str) -> float:
        found = re.search(rf"^\s*{re.escape(label)}:\s+([\d.]+)", text, re.M)
        if found is None:
            raise ValueError(f"dnsperf printed no {label!r}")
        return float(found.group(1))

    latencies = sorted(
        float(parts[-1])
        for line in text.splitlines()
        if line.startswith("> ") and _is_number((parts := line.split())[-1])
    )
    rcodes = re.search(r"^\s*Response codes:\s+(.*)$", text, re.M)
    sizes = re.search(r"^\s*Average packet size:.*response (\d+)", text, re.M)
    return Measurement(
        sent=int(number("Queries sent")),
        completed=int(number("Queries completed")),
        lost=int(number("Queries lost")),
        qps=number("Queries per second"),
        avg_ms=number("Average Latency (s)") * 1e3,
        p50_ms=percentile(latencies, 0.50) * 1e3,
        p99_ms=percentile(latencies, 0.99) * 1e3,
        max_ms=(latencies[-1] if latencies else 0.0) * 1e3,
        rcodes=rcodes.group(1).strip() if rcodes else "",
        reply_bytes=int(sizes.group(1)) if sizes else 0,
        server_cpu=server_cpu,
        client_cpu=client_cpu,
    )


def percentile(ordered: list[float], share: float) -> float:
    """Nearest rank of a sorted list."""
    if not ordered:
        return 0.0
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def _is_number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
