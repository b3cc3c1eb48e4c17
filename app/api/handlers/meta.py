"""/healthz: is this instance fit to serve?"""

from __future__ import annotations

import time

from aiohttp import web

from app.api.keys import SNAPSHOT, STORE
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
