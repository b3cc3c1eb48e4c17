"""`make bench-snapshot`: how a large configuration loads, compiles and moves.

Builds one zone of 10,000 profiles × 10 endpoints (every method, every endpoint
with a health row) in SQLite, then measures, each in a fresh process so the
resident-memory peak is the load's own:

* a cold start: read everything and compile the snapshot (seconds, peak RSS);
* one change through the store while the refresh loop runs at its default
  interval: how long the write takes, and how long until answer() gives the
  changed endpoint's new address (commit to answer).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from ipaddress import IPv4Address
from pathlib import Path
from typing import Any

import dns.exception
import dns.message
import dns.query

from app.domain.model import Profile
from app.domain.snapshot import compile_snapshot
from app.refresh import collector_paused
from app.settings import Settings
from app.store.migrate import upgrade
from app.store.sql import SqlStore
from tests.bench import snapshot_scale
from tests.support.ports import free_port
from tests.support.process import TMDNS

NEW_ADDRESS = IPv4Address("127.255.255.254")
CHANGES = 10


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def cold(url: str) -> dict[str, Any]:
    async with SqlStore.open(url) as store:
        with collector_paused():  # as build_snapshot does, timed in two parts
            started, cpu = time.perf_counter(), time.process_time()
            generation = await store.generation()
            config, health = await store.load_all()
            loaded = time.perf_counter()
            snapshot = compile_snapshot(config, health, generation, time.time())
            done = time.perf_counter()
    return {
        "read_s": loaded - started,
        "compile_s": done - loaded,
        "total_s": done - started,
        "total_cpu_s": time.process_time() - cpu,
        "names": len(snapshot.nodes),
        "endpoints": sum(len(p.endpoints) for z in config.zones for p in z.profiles),
        "health_rows": len(health),
        "peak_rss_mb": _peak_mb(),
    }


def _dns_answer(port: int, fqdn: str) -> set[str]:
    query = dns.message.make_query(fqdn, "A")
    try:
        reply = dns.query.udp(query, "127.0.0.1", port=port, timeout=0.5)
    except dns.exception.Timeout:
        return set()
    return {r.to_text() for rrset in reply.answer for r in rrset}


def _moved(address: IPv4Address) -> Callable[[Profile], Profile]:
    """The first (highest priority) endpoint gets a new address."""

    def change(profile: Profile) -> Profile:
        first = replace(profile.endpoints[0], address=address)
        return replace(profile, endpoints=(first, *profile.endpoints[1:]))

    return change


def _peak_of(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def change(url: str) -> dict[str, Any]:
    """A DNS server process follows the database; this process commits one edit
    through the store and asks the server over UDP until the answer moves."""
    name = snapshot_scale.profile_name(0)  # a priority profile
    fqdn = f"{name}.{snapshot_scale.ZONE}"
    port = free_port()
    command = [*TMDNS, "--db", url, "serve", "--role", "dns"]
    command += ["--dns", f"127.0.0.1:{port}"]
    server = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        started = time.perf_counter()
        while not _dns_answer(port, fqdn):
            if server.poll() is not None or time.perf_counter() - started > 60:
                raise RuntimeError("the DNS server did not start")
            await asyncio.sleep(0.05)
        ready = time.perf_counter() - started
        writes, waits = [], []
        async with SqlStore.open(url) as store:
            for change in range(CHANGES):
                await asyncio.sleep(0.5)
                address = IPv4Address(int(NEW_ADDRESS) - change)
                asked = time.perf_counter()
                await store.update_profile(
                    snapshot_scale.ZONE,
                    name,
                    _moved(address),
                    actor="bench",
                    action="profile.update",
                )
                written = time.perf_counter()
                while str(address) not in _dns_answer(port, fqdn):
                    if time.perf_counter() - written > 30:
                        raise RuntimeError("the change never reached the answers")
                    await asyncio.sleep(0.002)
                writes.append(written - asked)
                waits.append(time.perf_counter() - asked)
        peak = _peak_of(server.pid)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(10)
    return {
        "server_ready_s": ready,
        "changes": CHANGES,
        "write_s_median": statistics.median(writes),
        "asked_to_answer_s_median": statistics.median(waits),
        "asked_to_answer_s_max": max(waits),
        "refresh_interval_s": Settings().refresh_interval,
        "server_peak_rss_mb": peak,
    }


def _in_child(step: str, url: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", "tests.bench.snapshot_bench", "--step", step, url],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"{step} failed:\n{out.stderr}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--profiles", type=int, default=10_000)
    parser.add_argument("--endpoints", type=int, default=10)
    parser.add_argument("--step", choices=("cold", "change"))
    parser.add_argument("url", nargs="?")
    args = parser.parse_args()
    if args.step:
        run = cold if args.step == "cold" else change
        print(json.dumps(asyncio.run(run(args.url))))
        return
    with tempfile.TemporaryDirectory(prefix="tmdns-snapshot-") as folder:
        url = f"sqlite:///{Path(folder) / 'big.db'}"
        upgrade(url)
        took = asyncio.run(snapshot_scale.populate(url, args.profiles, args.endpoints))
        print(
            f"{args.profiles:,} profiles × {args.endpoints} endpoints written "
            f"in {took:.1f} s",
            flush=True,
        )
        cold_run, change_run = _in_child("cold", url), _in_child("change", url)
    print(report(cold_run, change_run, os.getloadavg()))


def report(cold_run: dict[str, Any], change_run: dict[str, Any], load: Any) -> str:
    return "\n".join(
        [
            f"cold build: {cold_run['total_s']:.2f} s "
            f"({cold_run['total_cpu_s']:.2f} s CPU; read {cold_run['read_s']:.2f} s, "
            f"compile {cold_run['compile_s']:.2f} s), "
            f"peak RSS {cold_run['peak_rss_mb']:.0f} MB, "
            f"{cold_run['names']:,} names",
            f"one change, {change_run['changes']} times: write "
            f"{change_run['write_s_median'] * 1e3:.0f} ms (median); from the call "
            f"to the DNS answer {change_run['asked_to_answer_s_median'] * 1e3:.0f} "
            f"ms median, {change_run['asked_to_answer_s_max'] * 1e3:.0f} ms max "
            f"(refresh every {change_run['refresh_interval_s']} s); DNS server "
            f"peak RSS {change_run['server_peak_rss_mb']:.0f} MB, ready in "
            f"{change_run['server_ready_s']:.1f} s",
            f"load average during the run: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
        ]
    )


if __name__ == "__main__":
    main()
