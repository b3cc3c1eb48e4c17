"""Health as operators see it: per-endpoint state, and recent transitions."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from app.api.handlers.params import profile_name, zone_name
from app.api.keys import PROBER_SEEN, SNAPSHOT, STORE
from app.domain import names
from app.domain.health import PROBED_STATES, is_stale
from app.domain.model import Endpoint, Health, Profile, effective_monitor
from app.domain.snapshot import Snapshot

RECENT = 50


def endpoint_health(
    snapshot: Snapshot,
    profile: Profile,
    zone: str,
    e: Endpoint,
    now: float,
    prober_seen_at: float | None,
    health: Health | None,
) -> dict[str, Any]:
    """State as DNS sees it, with the prober's last verdict (`health`, as
    stored: the snapshot only follows state changes) and staleness."""
    node = snapshot.nodes.get(names.join(profile.name, zone))
    state = node.profile.states.get(e.id) if node and node.profile else None
    monitor = effective_monitor(profile, e)
    stale = state in PROBED_STATES and is_stale(prober_seen_at, monitor, now)
    return {
        "state": state.value if state else None,
        "since": _iso(health.since) if health else None,
        "reason": health.reason if health else None,
        "latency_ms": health.latency_ms if health else None,
        "checked_at": _iso(health.checked_at) if health else None,
        "stale": stale,
    }


def _iso(seconds: float | None) -> str | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, UTC).isoformat()


async def profile_health(request: web.Request) -> web.Response:
    zone = zone_name(request)
    profile = await request.app[STORE].get_profile(zone, profile_name(request, zone))
    snapshot, now, seen = (
        request.app[SNAPSHOT](),
        time.time(),
        request.app[PROBER_SEEN](),
    )
    by_id = {e.id: e.name for e in profile.endpoints}
    latest = await request.app[STORE].health_of(list(by_id))
    transitions = await request.app[STORE].transitions(list(by_id), RECENT)
    return web.json_response(
        {
            "profile": names.join(profile.name, zone),
            "endpoints": [
                {
                    "name": e.name,
                    **endpoint_health(
                        snapshot, profile, zone, e, now, seen, latest.get(e.id)
                    ),
                }
                for e in profile.endpoints
            ],
            "transitions": [
                {
                    "endpoint": by_id[t.endpoint_id],
                    "at": _iso(t.at),
                    "from": t.old.value,
                    "to": t.new.value,
                    "reason": t.reason,
                }
                for t in transitions
            ],
        }
    )
