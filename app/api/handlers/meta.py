"""/healthz and /metrics: is this instance fit to serve, and how is it doing."""

from __future__ import annotations

import time

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from app.api.handlers.health import endpoint_health
from app.api.keys import METRICS, PROBER_SEEN, SNAPSHOT, STORE
from app.domain.health import is_stale
from app.domain.model import Monitor, MonitorProtocol, effective_monitor
from app.store.base import StoreUnavailable


async def healthz(request: web.Request) -> web.Response:
    """200 when the database answers and, if anything is probed, the prober has
    reported within 3 of the shortest probe interval; 503 otherwise."""
    snapshot, now = request.app[SNAPSHOT](), time.time()
    seen = request.app[PROBER_SEEN]()
    intervals = [
        effective_monitor(p, e).interval
        for z in snapshot.config.zones
        for p in z.profiles
        for e in p.endpoints
        if effective_monitor(p, e).protocol is not MonitorProtocol.NONE
    ]
    prober_ok = not intervals or not is_stale(
        seen, Monitor(interval=min(intervals)), now
    )
    body: dict[str, object] = {
        "snapshot_generation": snapshot.generation,
        "snapshot_age_seconds": round(now - snapshot.compiled_at, 3),
        "prober_last_report_seconds": None if seen is None else round(now - seen, 3),
        "prober": "ok" if prober_ok else "stale",
    }
    try:
        await request.app[STORE].ping()
        body["database"] = "ok"
    except StoreUnavailable:
        body["database"] = "unreachable"
    healthy = prober_ok and body["database"] == "ok"
    return web.json_response(body, status=200 if healthy else 503)


async def metrics(request: web.Request) -> web.Response:
    """Prometheus exposition; per-endpoint gauges are read from the live snapshot
    at scrape time, so they always match what DNS answers."""
    m, snapshot, now = request.app[METRICS], request.app[SNAPSHOT](), time.time()
    seen = request.app[PROBER_SEEN]()
    m.snapshot_age.set(now - snapshot.compiled_at)
    m.snapshot_generation.set(snapshot.generation)
    m.endpoint_state.clear()
    m.endpoint_stale.clear()
    for zone in snapshot.config.zones:
        for profile in zone.profiles:
            for e in profile.endpoints:
                facts = endpoint_health(
                    snapshot, profile, zone.name, e, now, seen, None
                )
                if facts["state"] is None:
                    continue
                labels = (zone.name, profile.name, e.name)
                m.endpoint_state.labels(*labels, facts["state"]).set(1)
                m.endpoint_stale.labels(*labels).set(1 if facts["stale"] else 0)
    body = generate_latest(m.registry)
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})
