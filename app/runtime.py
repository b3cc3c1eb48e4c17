"""Role supervisor: opens the store, starts the chosen roles, stops them in order."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import signal
import ssl
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import asdict, dataclass, field
from ipaddress import IPv4Network, IPv6Network, ip_network
from pathlib import Path
from random import Random
from typing import Any

from aiohttp import web

from app import snapshot_file
from app.api.app import create_app
from app.api.handlers.health import views_for
from app.api.listener import EnvelopeRunner, HttpLimits
from app.api.status import create_status_app
from app.demo import ensure_demo
from app.dns.cookies import CookieSecrets
from app.dns.handler import DnsHandler
from app.dns.ratelimit import RateLimiter, RrlPolicy, exempt_networks
from app.dns.server import DnsListeners, start_dns
from app.dns.streams import TcpLimits
from app.domain.explain import Question, explain, explained_endpoints
from app.domain.snapshot import Snapshot, compile_snapshot
from app.domain.tokens import Scope, Token, digest_of
from app.freshness import Freshness, Source, Vitals
from app.geoip import GeoIp, bundled_database
from app.metrics import Metrics
from app.override_expiry import OverrideExpiry
from app.prober.worker import Prober
from app.refresh import SnapshotHolder, build_snapshot, refresh_forever, save_forever
from app.settings import Role, Settings, split_hostport
from app.state_events import StateWatch
from app.store.base import Store, StoreUnavailable
from app.store.engine import sqlite_file
from app.store.sql import SqlStore
from app.supervisor import Supervisor
from app.traffic import TrafficRecorder
from app.webhooks import Deliveries

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Running:
    """What a started tmdns exposes to its caller (tests bind port 0 and read these)."""

    holder: SnapshotHolder
    supervisor: Supervisor
    store: Store
    dns: list[DnsListeners] = field(default_factory=list)
    workers: list[asyncio.subprocess.Process] = field(default_factory=list)
    api_runner: web.AppRunner | None = None
    status_runner: web.AppRunner | None = None

    @property
    def dns_port(self) -> int:
        """The port of the first DNS address (tests bind one address, port 0)."""
        return self.dns[0].port

    @property
    def api_port(self) -> int:
        assert self.api_runner is not None
        return int(self.api_runner.addresses[0][1])

    @property
    def status_port(self) -> int:
        assert self.status_runner is not None
        return int(self.status_runner.addresses[0][1])

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


async def start_worker(settings: Settings, run: Running) -> asyncio.subprocess.Process:
    """One more process answering DNS on the same addresses (`--workers N`)."""
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
        "TMDNS_DNS__MAX_TCP_PER_CLIENT": str(settings.dns.max_tcp_per_client),
        "TMDNS_DNS__TCP_FIRST_MESSAGE_TIMEOUT": str(
            settings.dns.tcp_first_message_timeout
        ),
        "TMDNS_DNS__FAST_PATH": str(settings.dns.fast_path).lower(),
        "TMDNS_DNS__RRL__RATE": str(settings.dns.rrl.rate),
        "TMDNS_DNS__RRL__SLIP": str(settings.dns.rrl.slip),
        "TMDNS_DNS__RRL__EXEMPT": ",".join(settings.dns.rrl.exempt),
        "TMDNS_DNS__SNAPSHOT_FILE": str(snapshot_path(settings) or ""),
        "TMDNS_DB__URL": settings.db.url,
        "TMDNS_REFRESH_INTERVAL": str(settings.refresh_interval),
        "TMDNS_HEALTHZ__MAX_LAG": str(settings.healthz.max_lag),
        "TMDNS_LOG_LEVEL": settings.log_level,
        "TMDNS_EVENT_LOOP": settings.event_loop.value,
    }
    env.pop("TMDNS_METRICS__LISTEN", None)  # one status listener: this process's
    if settings.dns.nsid:
        env["TMDNS_DNS__NSID"] = settings.dns.nsid  # one instance, one name
    for name in ("cookie_secret", "cookie_secret_previous"):
        secret = getattr(settings.dns, name)
        if secret is not None:  # workers make and accept the same cookies
            env[f"TMDNS_DNS__{name.upper()}"] = secret.get_secret_value()
    if settings.geoip.database is not None:
        env["TMDNS_GEOIP__DATABASE"] = str(settings.geoip.database)
    command = [sys.executable, "-m", "app", "serve", "--role", "dns", "--dns", listen]
    worker = await asyncio.create_subprocess_exec(*command, env=env)
    log.info("started DNS worker pid %d on %s", worker.pid, listen)
    return worker


class WorkerExited(RuntimeError):
    """A DNS worker process ended on its own; the supervisor starts another."""


async def keep_workers(settings: Settings, run: Running, stop: asyncio.Event) -> None:
    """Keep N-1 workers running: a worker that dies (kill -9, a crash) is
    reported as a failure of this loop, so it is logged, counted and, after
    the supervisor's backoff, replaced."""
    while len(run.workers) < settings.dns.workers - 1:
        run.workers.append(await start_worker(settings, run))
    for i, worker in enumerate(run.workers):
        if worker.returncode is not None:
            run.workers[i] = await start_worker(settings, run)
    stopping = asyncio.create_task(stop.wait())
    exits = [asyncio.create_task(w.wait()) for w in run.workers]
    try:
        await asyncio.wait([stopping, *exits], return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in [stopping, *exits]:
            task.cancel()
    dead = [w for w in run.workers if w.returncode is not None]
    if dead and not stop.is_set():
        raise WorkerExited(
            ", ".join(f"worker pid {w.pid} exited ({w.returncode})" for w in dead)
        )


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


def snapshot_path(settings: Settings) -> Path | None:
    """The snapshot file: as configured ("" for none), else beside the SQLite
    file, else in var/."""
    chosen = settings.dns.snapshot_file
    if chosen is not None:
        return Path(chosen) if chosen else None
    database = sqlite_file(settings.db.url)
    return (database.parent if database else Path("var")) / "tmdns-snapshot.json"


def cookie_secrets(settings: Settings) -> CookieSecrets:
    """The fleet's cookie secrets, or a random one for this process alone."""
    dns = settings.dns
    if dns.cookie_secret is None:
        return CookieSecrets.random()
    previous = dns.cookie_secret_previous
    return CookieSecrets.from_hex(
        dns.cookie_secret.get_secret_value(),
        [previous.get_secret_value()] if previous is not None else [],
    )


def webhook_networks(settings: Settings) -> list[IPv4Network | IPv6Network]:
    return [ip_network(n, strict=False) for n in settings.api.webhook_networks]


def tokens_from(settings: Settings) -> list[Token]:
    if settings.bootstrap_token is None:
        log.warning("no API token configured: every API call will get 401")
        return []
    secret = settings.bootstrap_token.get_secret_value()
    return [Token("bootstrap", Scope.WRITE, digest_of(secret))]


async def first_snapshot(
    store: Store, holder: SnapshotHolder, saved_at: Path | None
) -> None:
    """From the database; if it is unreachable, from the local file (DNS
    roles); else nothing yet: the refresh loop keeps trying, DNS answers
    REFUSED meanwhile, and /healthz says why."""
    try:
        holder.swap(await build_snapshot(store), Source.DATABASE)
        generation, holder.freshness.prober_seen_at = await store.pulse()
        holder.freshness.reached(generation, holder.current, time.time())
        return
    except StoreUnavailable as exc:
        holder.freshness.lost(time.time())
        log.warning("store unavailable at start (%s)", exc)
    saved = None if saved_at is None else snapshot_file.read(saved_at)
    if saved is None:
        log.warning("nothing to serve until the store is reachable; retrying")
        return
    snapshot = compile_snapshot(
        saved.config, saved.health, saved.generation, time.time()
    )
    holder.swap(snapshot, Source.FILE)
    log.warning(
        "serving generation %d from %s (written %.0f s ago) until the store is back",
        saved.generation,
        saved_at,
        time.time() - saved.written_at,
    )


@contextlib.asynccontextmanager
async def running(
    settings: Settings,
    *,
    demo: bool = False,
    rng: Random | None = None,
    open_store: Callable[[str], AbstractAsyncContextManager[SqlStore]] = SqlStore.open,
) -> AsyncIterator[Running]:
    """Start every role the settings ask for; stop them all on exit.

    `rng` seeds weighted choices and probe jitter (tests pass a fixed seed);
    `open_store` lets the fault tests put a store that fails on demand.
    """
    rng = rng or Random()
    roles = (
        {Role.DNS, Role.API, Role.PROBER}
        if settings.role is Role.ALL
        else {settings.role}
    )
    stop = asyncio.Event()
    supervisor = Supervisor(stop)
    async with open_store(settings.db.url) as store:
        _, api_port = split_hostport(settings.api.listen)
        if demo:
            await ensure_demo(store, api_port)
        holder = SnapshotHolder(
            Snapshot(generation=0, compiled_at=time.time()), Freshness(time.time())
        )
        saved_at = snapshot_path(settings) if Role.DNS in roles else None
        await first_snapshot(store, holder, saved_at)
        geo = GeoIp(settings.geoip.database or bundled_database())
        metrics = Metrics()
        metrics.count_restarts(
            lambda: {name: s.restarts for name, s in supervisor.loops.items()}
        )
        run = Running(holder, supervisor, store)
        supervisor.start(
            "refresh",
            lambda: refresh_forever(store, holder, stop, settings.refresh_interval),
        )
        if saved_at is not None:
            supervisor.start(
                "snapshot-file", lambda: save_forever(holder, saved_at, stop)
            )
        prober: Prober | None = None
        if Role.PROBER in roles:
            retention = settings.prober.transition_retention_days * 86400
            prober = Prober(
                store,
                holder.get,
                settings.prober.concurrency,
                rng,
                metrics,
                retention,
                source=settings.prober.source_address,
                vantage=settings.prober.vantage,
            )
        vitals = Vitals(
            holder.get,
            holder.freshness,
            supervisor,
            settings.healthz.max_lag,
            judge_prober=Role.API in roles,
            verdicts_pending=(lambda: prober.pending) if prober else (lambda: 0),
        )
        try:
            if Role.DNS in roles:
                handler = dns_handler(settings, holder.get, rng, geo, metrics)
                limiter = rate_limiter(settings)
                if limiter is not None:
                    counts = limiter.counts
                    metrics.count_rrl(lambda: asdict(counts))
                await _start_dns(settings, run, handler, stop, limiter)
            if Role.API in roles:
                await _start_api(settings, run, store, (geo, metrics, vitals), stop)
            await _start_status(settings, run, create_status_app(vitals, metrics))
            if prober is not None:
                for name, loop in prober.loops(stop).items():
                    supervisor.start(name, loop)
            yield run
        finally:
            stop.set()
            await supervisor.wait()
            for runner in (run.api_runner, run.status_runner):
                if runner is not None:
                    await runner.cleanup()
            for listeners in run.dns:
                await listeners.close()
            await stop_workers(run.workers)


async def _start_api(
    settings: Settings,
    run: Running,
    store: SqlStore,
    shared: tuple[GeoIp, Metrics, Vitals],
    stop: asyncio.Event,
) -> None:
    """The API listener, and the API role's loops: webhook deliveries, the
    removal of overrides that ran out, and the events of quarantines and
    silent probers."""
    holder, (geo, metrics, vitals) = run.holder, shared
    app = create_app(
        store,
        holder.get,
        tokens_from(settings),
        geo.locate,
        metrics,
        vitals,
        settings.api.cors_origins,
        settings.api.read_timeout,
        [ip_network(n, strict=False) for n in settings.api.webhook_networks],
    )
    deliveries = Deliveries(store)
    run.supervisor.start("webhooks", lambda: deliveries.deliver_forever(stop))
    expiry = OverrideExpiry(store, holder.get)
    run.supervisor.start("override-expiry", lambda: expiry.expire_forever(stop))
    watch = StateWatch(store, holder)
    run.supervisor.start("state-events", lambda: watch.watch_forever(stop))
    run.api_runner = await _listen(
        app, settings.api.listen, api_tls(settings), http_limits(settings)
    )
    host, _ = split_hostport(settings.api.listen)
    log.info("API listening on %s port %d", host, run.api_port)


def dns_handler(
    settings: Settings,
    current: Callable[[], Snapshot],
    rng: Random,
    geo: GeoIp,
    metrics: Metrics,
) -> DnsHandler:
    """The DNS role's handler, its query totals on /metrics."""
    handler = DnsHandler(
        current,
        rng,
        time.time,
        geo.locate,
        fast=settings.dns.fast_path,
        locate_version=geo.version,
        nsid=settings.dns.nsid.encode() if settings.dns.nsid else None,
        cookies=cookie_secrets(settings),
        tcp_idle_timeout=settings.dns.tcp_idle_timeout,
        query_metrics=settings.dns.query_metrics,
    )
    metrics.count_queries(handler.totals)
    return handler


def rate_limiter(settings: Settings) -> RateLimiter | None:
    """Response rate limiting as configured; None when off (the default)."""
    rrl = settings.dns.rrl
    if not rrl.rate:
        return None
    policy = RrlPolicy(rrl.rate, rrl.slip, exempt_networks(rrl.exempt))
    log.info(
        "response rate limiting: %d/s per netblock and class, slip %d, %d exempt",
        rrl.rate,
        rrl.slip,
        len(policy.exempt),
    )
    return RateLimiter(policy, cookie_secrets(settings), time.time)


async def _start_dns(
    settings: Settings,
    run: Running,
    handler: DnsHandler,
    stop: asyncio.Event,
    limiter: RateLimiter | None,
) -> None:
    dns = settings.dns
    limits = TcpLimits(
        dns.tcp_idle_timeout,
        dns.max_tcp_connections,
        dns.max_tcp_per_client,
        dns.tcp_first_message_timeout,
    )
    shared = dns.reuse_port or dns.workers > 1
    for address in dns.listen:
        host, port = split_hostport(address)
        run.dns.append(await start_dns(host, port, handler, limits, shared, limiter))
    if settings.dns.workers > 1:
        run.supervisor.start("workers", lambda: keep_workers(settings, run, stop))
    recorder = TrafficRecorder(run.store, handler.totals)
    run.supervisor.start(
        "traffic", lambda: recorder.record_forever(stop, dns.traffic_interval)
    )


async def _start_status(settings: Settings, run: Running, app: web.Application) -> None:
    """The status listener, for any role (`--metrics`)."""
    if settings.metrics.listen is None:
        if settings.role in (Role.DNS, Role.PROBER):
            log.warning(
                "no status listener: set --metrics HOST:PORT "
                "(TMDNS_METRICS__LISTEN) for /healthz and /metrics"
            )
        return
    run.status_runner = await _listen(
        app, settings.metrics.listen, None, http_limits(settings)
    )
    log.info("/healthz and /metrics on port %d", run.status_port)


def http_limits(settings: Settings) -> HttpLimits:
    api = settings.api
    return HttpLimits(
        api.read_timeout, api.keepalive_timeout, api.max_connections_per_client
    )


async def _listen(
    app: web.Application,
    address: str,
    tls: ssl.SSLContext | None,
    limits: HttpLimits,
) -> web.AppRunner:
    host, port = split_hostport(address)
    runner = EnvelopeRunner(app, limits)
    await runner.setup()
    await web.TCPSite(runner, host, port, ssl_context=tls).start()
    return runner


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
        # What start-up made (modules, the first snapshot) lives as long as
        # the process: out of the collector's generations, a full collection
        # under load walks only what was made since, and stalls replies less.
        gc.freeze()
        if announce is not None:
            announce(run)
        await stop.wait()
    log.info("stopped")


async def explain_from_store(settings: Settings, question: Question) -> dict[str, Any]:
    """`tmdns explain`: the same answer() on a snapshot built from the database."""
    async with SqlStore.open(settings.db.url) as store:
        snapshot = await build_snapshot(store)
        prober_seen_at = snapshot.prober_seen_at
        views = await views_for(store, explained_endpoints(snapshot, question.name))
    geo = GeoIp(settings.geoip.database or bundled_database())
    try:
        return explain(
            snapshot, question, time.time(), geo.locate, Random(), prober_seen_at, views
        )
    finally:
        geo.close()
