"""Health as operators see it: per-endpoint state with each vantage's view,
recent transitions, and the vantages themselves."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from app.api.handlers.params import profile_name, zone_name
from app.api.keys import PROBER_SEEN, SNAPSHOT, STORE
from app.domain import names
from app.domain.health import PROBED_STATES, is_stale
from app.domain.model import Endpoint, Health, Profile, effective_monitor
from app.domain.snapshot import Snapshot
from app.domain.vantages import Vantage
from app.store.base import AdminStore, StoreUnavailable

RECENT = 50


def endpoint_health(
    snapshot: Snapshot,
    profile: Profile,
    zone: str,
    e: Endpoint,
    now: float,
    prober_seen_at: float | None,
    health: Health | None,
    views: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """State as DNS sees it, with the decided last verdict (`health`, as
    stored: the snapshot only follows state changes), staleness, and each
    vantage's own view (`views`, from vantage_views)."""
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
        "quorum": monitor.quorum.value,
        "vantages": list(views),
    }


def vantage_views(
    views: Mapping[str, Health], vantages: Sequence[Vantage]
) -> list[dict[str, Any]]:
    """Each vantage's view of one endpoint, and whether it counts."""
    voting = {v.name for v in vantages if v.voting}
    return [
        {
            "vantage": name,
            "state": h.state.value,
            "reason": h.reason,
            "latency_ms": h.latency_ms,
            "checked_at": _iso(h.checked_at),
            "voting": name in voting,
        }
        for name, h in sorted(views.items())
    ]


async def views_for(
    store: AdminStore, endpoint_ids: Sequence[int]
) -> dict[int, list[dict[str, Any]]]:
    """Each vantage's view of these endpoints, for explain: none while the
    database is away, as explain still answers from the snapshot then."""
    if not endpoint_ids:
        return {}
    try:
        views = await store.vantage_views(endpoint_ids)
        vantages = await store.vantages()
    except StoreUnavailable:
        return {}
    return {i: vantage_views(seen, vantages) for i, seen in views.items()}


def vantage_facts(v: Vantage, now: float) -> dict[str, Any]:
    return {
        "name": v.name,
        "seen_at": _iso(v.seen_at),
        "stale": not v.fresh(now),
        "voting": v.voting,
        "source": v.source,
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
    store = request.app[STORE]
    by_id = {e.id: e.name for e in profile.endpoints}
    latest = await store.health_of(list(by_id))
    views, vantages = await store.vantage_views(list(by_id)), await store.vantages()
    transitions = await store.transitions(list(by_id), RECENT)
    return web.json_response(
        {
            "profile": names.join(profile.name, zone),
            "endpoints": [
                {
                    "name": e.name,
                    **endpoint_health(
                        snapshot,
                        profile,
                        zone,
                        e,
                        now,
                        seen,
                        latest.get(e.id),
                        vantage_views(views.get(e.id, {}), vantages),
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


async def list_vantages(request: web.Request) -> web.Response:
    vantages = await request.app[STORE].vantages()
    now = time.time()
    return web.json_response([vantage_facts(v, now) for v in vantages])
