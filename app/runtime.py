"""Role supervisor: opens the store, starts the chosen roles, stops them in order."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import ssl
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from random import Random
from typing import Any

from aiohttp import web

from app.api.app import create_app
from app.demo import ensure_demo
from app.dns.handler import make_handler
from app.dns.server import DnsListeners, TcpLimits, start_dns
from app.domain.explain import Question, explain
from app.domain.snapshot import Snapshot
from app.domain.tokens import Scope, Token, digest_of
from app.geoip import GeoIp, bundled_database
from app.metrics import Metrics
from app.prober.worker import Prober
from app.refresh import SnapshotHolder, build_snapshot, refresh_forever
from app.settings import Role, Settings, split_hostport
from app.store.sql import SqlStore

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Running:
    """What a started tmdns exposes to its caller (tests bind port 0 and read these)."""

    holder: SnapshotHolder
    dns: list[DnsListeners] = field(default_factory=list)
    workers: list[asyncio.subprocess.Process] = field(default_factory=list)
    api_runner: web.AppRunner | None = None
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    @property
    def dns_port(self) -> int:
        """The port of the first DNS address (tests bind one address, port 0)."""
        return self.dns[0].port

    @property
    def api_port(self) -> int:
        assert self.api_runner is not None
        return int(self.api_runner.addresses[0][1])

    def snapshot(self) -> Snapshot:
        return self.holder.current


def api_tls(settings: Settings) -> ssl.SSLContext | None:
    """An HTTPS listener when a certificate and key are configured."""
    api = settings.api
    if api.tls_certificate is None or api.tls_key is None:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(api.tls_certificate, api.tls_key)
    return context


async def start_workers(
    settings: Settings, run: Running
) -> list[asyncio.subprocess.Process]:
    """`--workers N`: N-1 more processes answering DNS on the same addresses."""
    listen = ",".join(
        f"[{host}]:{ls.port}" if ":" in host else f"{host}:{ls.port}"
        for ls, (host, _) in zip(
            run.dns, map(split_hostport, settings.dns.listen), strict=True
        )
    )
    # The workers take this process's settings, whatever they came from.
    env = {
        **os.environ,
        "TMDNS_DNS__REUSE_PORT": "true",
        "TMDNS_DNS__WORKERS": "1",
        "TMDNS_DNS__TCP_IDLE_TIMEOUT": str(settings.dns.tcp_idle_timeout),
        "TMDNS_DNS__MAX_TCP_CONNECTIONS": str(settings.dns.max_tcp_connections),
        "TMDNS_DB__URL": settings.db.url,
        "TMDNS_REFRESH_INTERVAL": str(settings.refresh_interval),
        "TMDNS_LOG_LEVEL": settings.log_level,
        "TMDNS_EVENT_LOOP": settings.event_loop.value,
    }
    if settings.geoip.database is not None:
        env["TMDNS_GEOIP__DATABASE"] = str(settings.geoip.database)
    command = [sys.executable, "-m", "app", "serve", "--role", "dns", "--dns", listen]
    workers = [
        await asyncio.create_subprocess_exec(*command, env=env)
        for _ in range(settings.dns.workers - 1)
    ]
    log.info("started %d more DNS worker(s) on %s", len(workers), listen)
    return workers


async def stop_workers(workers: list[asyncio.subprocess.Process]) -> None:
    for worker in workers:
        if worker.returncode is None:
            worker.terminate()
    for worker in workers:
        try:
            await asyncio.wait_for(worker.wait(), 10)
        except TimeoutError:
            worker.kill()
            await worker.wait()


def tokens_from(settings: Settings) -> list[Token]:
    if settings.bootstrap_token is None:
        return []
    secret = settings.bootstrap_token.get_secret_value()
    return [Token("bootstrap", Scope.WRITE, digest_of(secret))]


@contextlib.asynccontextmanager
async def running(
    settings: Settings, *, demo: bool = False, rng: Random | None = None
) -> AsyncIterator[Running]:
    """Start every role the settings ask for; stop them all on exit.

    `rng` seeds weighted choices and probe jitter (tests pass a fixed seed).
    """
    rng = rng or Random()
    roles = (
        {Role.DNS, Role.API, Role.PROBER}
        if settings.role is Role.ALL
        else {settings.role}
    )
    stop = asyncio.Event()
    async with SqlStore.open(settings.db.url) as store:
        api_host, api_port = split_hostport(settings.api.listen)
        if demo:
            await ensure_demo(store, api_port)
        holder = SnapshotHolder(await build_snapshot(store))
        _, holder.prober_seen_at = await store.pulse()
        geo = GeoIp(settings.geoip.database or bundled_database())
        metrics = Metrics()
        run = Running(holder)
        run.tasks.append(
            asyncio.create_task(
                refresh_forever(store, holder, stop, settings.refresh_interval)
            )
        )
        try:
            if Role.DNS in roles:
                handler = make_handler(
                    holder.get, rng, time.time, geo.locate, locate_version=geo.version
                )
                limits = TcpLimits(
                    settings.dns.tcp_idle_timeout, settings.dns.max_tcp_connections
                )
                shared = settings.dns.reuse_port or settings.dns.workers > 1
                for address in settings.dns.listen:
                    host, port = split_hostport(address)
                    run.dns.append(await start_dns(host, port, handler, limits, shared))
                if settings.dns.workers > 1:
                    run.workers = await start_workers(settings, run)
            if Role.API in roles:
                tokens = tokens_from(settings)
                if not tokens:
                    log.warning("no API token configured: every API call will get 401")
                run.api_runner = web.AppRunner(
                    create_app(
                        store,
                        holder.get,
                        tokens,
                        geo.locate,
                        metrics,
                        holder.seen,
                        settings.api.cors_origins,
                    )
                )
                await run.api_runner.setup()
                await web.TCPSite(
                    run.api_runner, api_host, api_port, ssl_context=api_tls(settings)
                ).start()
                log.info("API listening on %s:%d", api_host, run.api_port)
            if Role.PROBER in roles:
                retention = settings.prober.transition_retention_days * 86400
                prober = Prober(
                    store,
                    holder.get,
                    settings.prober.concurrency,
                    rng,
                    metrics,
                    retention,
                )
                _, known = await store.load_all()
                run.tasks.append(asyncio.create_task(prober.run(stop, known)))
            yield run
        finally:
            stop.set()
            await asyncio.gather(*run.tasks, return_exceptions=True)
            if run.api_runner is not None:
                await run.api_runner.cleanup()
            for listeners in run.dns:
                await listeners.close()
            await stop_workers(run.workers)


async def serve(
    settings: Settings,
    *,
    demo: bool = False,
    announce: Callable[[Running], None] | None = None,
) -> None:
    """Run until SIGINT or SIGTERM; `announce` is told once everything listens."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with running(settings, demo=demo) as run:
        if announce is not None:
            announce(run)
        await stop.wait()
    log.info("stopped")


async def explain_from_store(settings: Settings, question: Question) -> dict[str, Any]:
    """`tmdns explain`: the same answer() on a snapshot built from the database."""
    async with SqlStore.open(settings.db.url) as store:
        snapshot = await build_snapshot(store)
        _, prober_seen_at = await store.pulse()
    geo = GeoIp(settings.geoip.database or bundled_database())
    try:
        return explain(
            snapshot, question, time.time(), geo.locate, Random(), prober_seen_at
        )
    finally:
        geo.close()
