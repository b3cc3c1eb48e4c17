"""`make bench-probe`: 5,000 endpoints probed over TCP and HTTP on loopback at a
10 s interval for 60 s, the prober pinned to one core and the listeners to the
other; prints CPU use and schedule slip (p50, p99, max)."""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import subprocess
import sys
import tempfile
import time
from ipaddress import ip_address
from pathlib import Path
from random import Random

from app.domain.model import Endpoint, Method, Monitor, MonitorProtocol, Profile, Zone
from app.freshness import Freshness, Source
from app.metrics import Metrics
from app.prober.worker import Prober
from app.refresh import SnapshotHolder, build_snapshot, refresh_forever
from app.store import SqlStore, migrate
from app.supervisor import Supervisor
from tests.support.ports import free_port

PROFILES = 50
LOOPBACK = ip_address("127.0.0.1")  # every probe stays on this machine


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


async def seed(
    store: SqlStore, ports: list[int], endpoints: int, interval: float
) -> None:
    zone = Zone("bench.example.", ("ns.example.net.",), "hostmaster@bench.example")
    await store.create_zone(zone, actor="bench")
    per_profile = endpoints // len(ports)
    for i, port in enumerate(ports):
        protocol = MonitorProtocol.TCP if i % 2 == 0 else MonitorProtocol.HTTP
        monitor = Monitor(
            protocol=protocol,
            port=port,
            path="/health",
            interval=interval,
            timeout=2.0,
            tolerated_failures=3,
        )
        members = tuple(
            Endpoint(name=f"e{j}", address=LOOPBACK, priority=j + 1)
            for j in range(per_profile)
        )
        profile = Profile(
            name=f"p{i}", method=Method.WEIGHTED, monitor=monitor, endpoints=members
        )
        await store.create_profile(zone.name, profile, actor="bench")


async def run(endpoints: int, interval: float, seconds: float, workdir: Path) -> dict:
    url = f"sqlite:///{workdir}/bench.db"
    await asyncio.to_thread(migrate.upgrade, url)
    ports = [free_port() for _ in range(PROFILES)]
    listeners = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.bench.listeners",
            *[str(p) for p in ports[0::2]],
            *[str(p) for p in ports[1::2]],
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        _pin(listeners.pid, 1)
        assert (
            listeners.stdout is not None
            and listeners.stdout.readline().strip() == "ready"
        )
        async with SqlStore.open(url) as store:
            await seed(store, ports, endpoints, interval)
            holder = SnapshotHolder(await build_snapshot(store), Freshness(0.0))
            holder.freshness.source = Source.DATABASE
            stop = asyncio.Event()
            supervisor = Supervisor(stop)
            prober = Prober(store, holder.get, 256, Random(1), Metrics(), 86400.0)
            supervisor.start(
                "refresh", lambda: refresh_forever(store, holder, stop, 0.2)
            )
            cpu0, wall0 = _cpu(), time.monotonic()
            for name, loop in prober.loops(stop).items():
                supervisor.start(name, loop)
            await asyncio.sleep(seconds)
            cpu, wall = _cpu() - cpu0, time.monotonic() - wall0
            stop.set()
            await supervisor.wait()
        slips = list(prober.slips)
        steady = slips[endpoints:]  # after every endpoint's first probe
        return {
            "endpoints": endpoints,
            "interval": interval,
            "seconds": round(wall, 1),
            "probes": len(slips),
            "cpu_cores": round(cpu / wall, 3),
            "slip_p50": percentile(steady, 0.5),
            "slip_p99": percentile(steady, 0.99),
            "slip_max": max(steady, default=0.0),
            "startup_slip_max": max(slips[:endpoints], default=0.0),
        }
    finally:
        listeners.terminate()
        listeners.wait(timeout=10)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _pin(pid: int, core: int) -> None:
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > core:
        os.sched_setaffinity(pid, {core})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--endpoints", type=int, default=5000)
    parser.add_argument("--interval", type=float, default=10.0)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    _pin(0, 0)
    with tempfile.TemporaryDirectory() as tmp:
        r = asyncio.run(run(args.endpoints, args.interval, args.seconds, Path(tmp)))
    print(
        f"probe benchmark: {r['endpoints']} endpoints (TCP and HTTP), "
        f"interval {r['interval']:g} s, {r['seconds']} s, {r['probes']} probes"
    )
    print(f"  CPU: {r['cpu_cores']:.2f} of one core (goal < 0.50)")
    print(
        f"  schedule slip: p50 {r['slip_p50'] * 1e3:.1f} ms, "
        f"p99 {r['slip_p99'] * 1e3:.1f} ms (goal < 1000), "
        f"max {r['slip_max'] * 1e3:.1f} ms"
    )
    print(
        f"  start-up burst (every endpoint new): worst slip "
        f"{r['startup_slip_max'] * 1e3:.0f} ms"
    )


if __name__ == "__main__":
    main()
