"""/traffic of a profile: its queries and how often each endpoint was handed
out, per minute, summed over every DNS process (app.traffic), for charts.

Every minute of the window is listed, zeros included, so a chart needs no
gaps filled; the current minute is still being counted.
"""

from __future__ import annotations

import time

from aiohttp import web
from pydantic import Field

from app.api.handlers.params import profile_name, zone_name
from app.api.keys import STORE
from app.domain import names
from app.schemas.common import Strict
from app.store.traffic import minute_of

MAX_MINUTES = 1440  # the store keeps a day


class TrafficQuery(Strict):
    """?minutes=60"""

    minutes: int = Field(default=60, ge=1, le=MAX_MINUTES)


async def profile_traffic(request: web.Request) -> web.Response:
    query = TrafficQuery.model_validate(dict(request.query))
    zone = zone_name(request)
    store = request.app[STORE]
    profile = await store.get_profile(zone, profile_name(request, zone))
    last = minute_of(time.time())
    first = last - (query.minutes - 1) * 60
    found = await store.traffic_series(zone, profile.name, first)
    endpoints = [e.name for e in profile.endpoints]
    minutes = []
    for at in range(first, last + 1, 60):
        counts = found.get(at, {})
        minutes.append(
            {
                "at": at,
                "queries": counts.get("", 0),
                "answers": {e: counts.get(e, 0) for e in endpoints},
            }
        )
    return web.json_response(
        {"profile": names.join(profile.name, zone), "minutes": minutes}
    )
