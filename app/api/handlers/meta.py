"""/healthz and /metrics: is this process fit to serve, and how is it doing.

Served on the API port and on every role's own status listener (`--metrics`),
from the same Vitals, so a load balancer or Prometheus sees one truth.
"""

from __future__ import annotations

import time

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from app.api.handlers.health import endpoint_health
from app.api.keys import METRICS, VITALS
from app.freshness import Source, assess


async def healthz(request: web.Request) -> web.Response:
    """200 while the snapshot is confirmed current within the limit, the
    database reachable within it, no loop keeps failing and (api and all
    roles) the prober reports; 503 with the reasons otherwise."""
    healthy, body = assess(request.app[VITALS], time.time())
    return web.json_response(body, status=200 if healthy else 503)


async def metrics(request: web.Request) -> web.Response:
    """Prometheus exposition; per-endpoint gauges are read from the live snapshot
    at scrape time, so they always match what DNS answers."""
    m, vitals, now = request.app[METRICS], request.app[VITALS], time.time()
    snapshot, fresh = vitals.snapshot(), vitals.freshness
    seen = fresh.prober_seen_at
    m.snapshot_age.set(now - snapshot.compiled_at)
    m.snapshot_generation.set(snapshot.generation)
    m.store_generation.set(
        fresh.store_generation if fresh.store_generation is not None else -1
    )
    m.snapshot_lag.set(fresh.lag_seconds(now))
    m.store_up.set(0 if fresh.unreachable_since is not None else 1)
    m.snapshot_from_file.set(1 if fresh.source is Source.FILE else 0)
    m.quarantined.set(len(snapshot.quarantined))
    m.verdicts_pending.set(vitals.verdicts_pending())
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
