"""/latency: the operator's latency table for performance routing."""

from __future__ import annotations

from aiohttp import web

from app.api.errors import json_object
from app.api.keys import ACTOR, STORE
from app.schemas import LatencyIn, from_json


async def get_latency(request: web.Request) -> web.Response:
    rows = await request.app[STORE].get_latency()
    return web.json_response(LatencyIn.from_domain(rows).model_dump(mode="json"))


async def put_latency(request: web.Request) -> web.Response:
    body = from_json(LatencyIn, await json_object(request))
    rows = await request.app[STORE].replace_latency(
        body.to_domain(), actor=request[ACTOR]
    )
    return web.json_response(LatencyIn.from_domain(rows).model_dump(mode="json"))
