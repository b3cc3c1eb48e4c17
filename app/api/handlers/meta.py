"""/healthz and /metrics: is this instance fit to serve, and how is it doing."""

from __future__ import annotations

import time

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from app.api.handlers.health import endpoint_health
from app.api.keys import METRICS, SNAPSHOT, STORE
from app.store.base import StoreUnavailable


async def healthz(request: web.Request) -> web.Response:
    snapshot = request.app[SNAPSHOT]()
    body: dict[str, object] = {
        "snapshot_generation": snapshot.generation,
        "snapshot_age_seconds": round(time.time() - snapshot.compiled_at, 3),
    }
    try:
        await request.app[STORE].ping()
        body["database"] = "ok"
        status = 200
    except StoreUnavailable:
        body["database"] = "unreachable"
        status = 503
    return web.json_response(body, status=status)


async def metrics(request: web.Request) -> web.Response:
    """Prometheus exposition; per-endpoint gauges are read from the live snapshot
    at scrape time, so they always match what DNS answers."""
    m, snapshot, now = request.app[METRICS], request.app[SNAPSHOT](), time.time()
    m.snapshot_age.set(now - snapshot.compiled_at)
    m.snapshot_generation.set(snapshot.generation)
    m.endpoint_state.clear()
    m.endpoint_stale.clear()
    for zone in snapshot.config.zones:
        for profile in zone.profiles:
            for e in profile.endpoints:
                facts = endpoint_health(snapshot, profile, zone.name, e, now)
                if facts["state"] is None:
                    continue
                labels = (zone.name, profile.name, e.name)
                m.endpoint_state.labels(*labels, facts["state"]).set(1)
                m.endpoint_stale.labels(*labels).set(1 if facts["stale"] else 0)
    body = generate_latest(m.registry)
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})
