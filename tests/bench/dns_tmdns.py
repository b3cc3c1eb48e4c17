"""tmdns as `make bench` runs it: a fresh SQLite database, `tmdns serve` with
`--workers N`, and the zone of dns_zone created through the API, so the
benchmark measures the same path an operator's configuration takes.

With N > 1 the main process starts N-1 worker processes on the same port
(SO_REUSEPORT); they are found as its children, counted in its CPU, waited for
until each holds the port, and stopped by PID even if the main process fails
to stop them."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.bench import dns_zone as z
from tests.bench.dns_launch import (
    ROOT,
    SERVER_CORE,
    START_LIMIT,
    Running,
    spawn,
    stop,
    wait_ready,
)
from tests.bench.dns_programs import tool
from tests.bench.processes import Pid, children, holds_udp_port, stop_pid
from tests.support.ports import free_port

_HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback only


def _http(method: str, url: str, token: str, body: Any = None) -> int:
    """Send one API call; return the configuration generation that holds it."""
    request = urllib.request.Request(
        url,
        data=None if body is None else json.dumps(body).encode(),
        method=method,
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
        },
    )
    with _HTTP.open(request, timeout=10) as response:
        return int(response.headers["X-Tmdns-Generation"])


def _wait_http(url: str, process: subprocess.Popen[bytes], limit: float) -> None:
    deadline = time.monotonic() + limit
    while True:
        try:
            with _HTTP.open(url, timeout=2):
                return
        except urllib.error.HTTPError:
            return  # it answers, even if not yet healthy
        except OSError:
            if process.poll() is not None:
                raise RuntimeError("tmdns exited during start-up") from None
            if time.monotonic() > deadline:
                raise RuntimeError(f"tmdns API not up within {limit:g} s") from None
            time.sleep(0.2)


def _no_monitor() -> dict[str, str]:
    return {"protocol": "none"}


def tmdns_requests() -> list[tuple[str, dict[str, Any]]]:
    """The API calls that set tmdns up: (path, JSON body)."""
    zone = {"name": z.ZONE, "ns": [z.NS], "glue": {z.NS: [z.NS_ADDRESS]}}
    profiles: list[dict[str, Any]] = [
        {
            "name": "prio",
            "method": "priority",
            "monitor": _no_monitor(),
            "endpoints": [
                {"name": "primary", "address": z.PRIORITY[0], "priority": 1},
                {"name": "secondary", "address": z.PRIORITY[1], "priority": 2},
            ],
        },
        {
            "name": "weighted",
            "method": "weighted",
            "monitor": _no_monitor(),
            "endpoints": [
                {"name": n, "address": a, "weight": w} for n, a, w in z.WEIGHTED
            ],
        },
        {
            "name": "multi",
            "method": "multivalue",
            "max_return": z.MULTI_RETURN,
            "monitor": _no_monitor(),
            "endpoints": [
                {"name": f"m{i}", "address": a} for i, a in enumerate(z.MULTI, 1)
            ],
        },
        {
            "name": "sip",
            "method": "weighted",
            "monitor": _no_monitor(),
            "srv": [{"service": z.SIP_SERVICE, "port": z.SIP_PORT}],
            "endpoints": [{"name": n, "address": a, "weight": w} for n, a, w in z.SIP],
        },
        {
            "name": "net",
            "method": "subnet",
            "monitor": _no_monitor(),
            "endpoints": [
                {"name": "a", "address": z.NET_INSIDE, "subnets": [z.NET_RANGE]},
                {"name": "b", "address": z.NET_OTHER},
            ],
        },
        {
            "name": "geo",
            "method": "geographic",
            "monitor": _no_monitor(),
            "endpoints": [
                {"name": "eu", "address": z.NET_INSIDE, "geo": ["GEO-EU"]},
                {"name": "rest", "address": z.NET_OTHER, "geo": ["WORLD"]},
            ],
        },
    ]
    zone_path = f"/zones/{z.ZONE}/profiles"
    return [("/zones", zone)] + [(zone_path, p) for p in profiles]


def _wait_workers(
    process: subprocess.Popen[bytes], port: int, count: int, limit: float
) -> tuple[Pid, ...]:
    """The main process's `count` workers, once each holds the DNS port: before
    that, the kernel would give all the queries to the processes already there."""
    deadline = time.monotonic() + limit
    while True:
        found = tuple(children(process.pid))
        pids = (process.pid, *(w.pid for w in found))
        if len(found) == count and all(holds_udp_port(p, port) for p in pids):
            return found
        if process.poll() is not None:
            raise RuntimeError("tmdns exited during start-up")
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"tmdns: {len(found)} of {count} workers on the port after {limit:g} s"
            )
        time.sleep(0.2)


@contextlib.contextmanager
def tmdns(
    workdir: Path,
    workers: int = 1,
    cores: str = str(SERVER_CORE),
    key: str = "tmdns",
    title: str = "tmdns",
    extra_env: dict[str, str] | None = None,
    batch_scheduling: bool = False,
) -> Iterator[Running]:
    """`extra_env` adds TMDNS_* settings (e.g. response rate limiting) to the
    clean environment tmdns starts with; `batch_scheduling` starts it under
    `chrt --batch 0` (SCHED_BATCH, which its workers inherit)."""
    folder = workdir / key
    folder.mkdir()
    token = secrets.token_urlsafe(24)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TMDNS_")}
    env |= {
        "TMDNS_DB__URL": f"sqlite:///{folder}/bench.db",
        "TMDNS_BOOTSTRAP_TOKEN": token,
        "TMDNS_LOG_LEVEL": "WARNING",
    }
    env |= extra_env or {}
    python = [sys.executable, "-m", "app"]
    migrate = [*python, "migrate"]
    subprocess.run(
        migrate, env=env, cwd=ROOT, check=True, capture_output=True, timeout=120
    )
    port, api_port = free_port(), free_port()
    log = folder / "serve.log"
    serve = [*python, "serve", "--dns", f"127.0.0.1:{port}"]
    if workers > 1:
        serve += ["--workers", str(workers)]
    serve += ["--api", f"127.0.0.1:{api_port}"]
    if batch_scheduling:
        serve = [tool("chrt"), "--batch", "0", *serve]
    process = spawn(serve, log, env, cores)
    known: set[Pid] = set()  # workers to stop by PID, whatever happens
    try:
        _wait_http(f"http://127.0.0.1:{api_port}/healthz", process, START_LIMIT)
        base = f"http://127.0.0.1:{api_port}/api/v1"
        requests = tmdns_requests()
        for path, body in requests:
            serial = _http("POST", base + path, token, body)  # the SOA serial too
        files = {f"POST {p}": json.dumps(b, indent=1) for p, b in requests}
        running = Running(key, title, port, serial, process, True, files)
        running.workers = _wait_workers(process, port, workers - 1, START_LIMIT)
        known.update(running.workers)
        wait_ready(running, log)  # the checks' random source ports reach every worker
        yield running
    finally:
        if process.poll() is None:
            known.update(children(process.pid))
        stop(process)  # on SIGTERM it stops its workers itself
        for worker in known:
            stop_pid(worker)
