"""/zones: create, list, read, change and delete zones."""

from __future__ import annotations

from aiohttp import web

from app.api.errors import json_object
from app.api.etags import require_match, with_etag
from app.api.handlers.params import zone_name
from app.api.keys import ACTOR, STORE
from app.domain.model import Zone
from app.domain.validation import Invalid
from app.schemas import ZoneIn, ZoneOut, from_json, merge_patch, zone_document


def _out(zone: Zone, status: int = 200) -> web.Response:
    body = ZoneOut.from_domain(zone).model_dump(mode="json")
    return with_etag(web.json_response(body, status=status), zone_document(zone))


async def list_zones(request: web.Request) -> web.Response:
    zones = await request.app[STORE].list_zones()
    return web.json_response(
        [ZoneOut.from_domain(z).model_dump(mode="json") for z in zones]
    )


async def create_zone(request: web.Request) -> web.Response:
    body = from_json(ZoneIn, await json_object(request))
    saved = await request.app[STORE].create_zone(body.to_domain(), actor=request[ACTOR])
    return _out(saved, 201)


async def get_zone(request: web.Request) -> web.Response:
    return _out(await request.app[STORE].get_zone(zone_name(request)))


async def patch_zone(request: web.Request) -> web.Response:
    name, patch = zone_name(request), await json_object(request)

    def change(current: Zone) -> Zone:
        require_match(request, zone_document(current))
        edited = from_json(ZoneIn, merge_patch(zone_document(current), patch))
        if edited.name != current.name:
            raise Invalid.one("name", "a zone cannot be renamed; create a new zone")
        return edited.to_domain()

    return _out(
        await request.app[STORE].update_zone(name, change, actor=request[ACTOR])
    )


async def delete_zone(request: web.Request) -> web.Response:
    await request.app[STORE].delete_zone(
        zone_name(request),
        actor=request[ACTOR],
        guard=lambda current: require_match(request, zone_document(current)),
    )
    return web.Response(status=204)
