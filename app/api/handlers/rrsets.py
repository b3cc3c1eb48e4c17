"""/zones/{zone}/rrsets: static records, PowerDNS-style: one rrset per name
and type, replaced whole by PUT and removed by DELETE; live in DNS within
the refresh interval, like every change."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web

from app.api.errors import BadRequest, json_object
from app.api.etags import require_match, with_etag
from app.api.handlers.params import zone_name
from app.api.keys import ACTOR, STORE
from app.domain import names
from app.domain.model import StaticRRset
from app.domain.validation import Invalid
from app.schemas import from_json
from app.schemas.rrsets import RRsetIn, RRsetOut, static_type
from app.store.base import NotFound


def _place(request: web.Request) -> tuple[str, str, int]:
    """(zone, absolute name, type) from the path: `@` is the apex, a name is
    relative to the zone or absolute inside it."""
    zone = zone_name(request)
    raw = request.match_info["name"]
    try:
        name = names.join(names.relative(raw, zone), zone)
    except names.BadName as exc:
        raise Invalid.one("name", str(exc)) from exc
    return zone, name, static_type(request.match_info["type"])


async def list_rrsets(request: web.Request) -> web.Response:
    zone = zone_name(request)
    rrsets = await request.app[STORE].get_rrsets(zone)
    return web.json_response(
        [RRsetOut.from_domain(r, zone).model_dump(mode="json") for r in rrsets]
    )


def _document(rrset: StaticRRset, zone: str) -> dict[str, Any]:
    return RRsetOut.from_domain(rrset, zone).model_dump(mode="json")


def _guard(request: web.Request, zone: str) -> Callable[[StaticRRset | None], None]:
    """If-Match, checked in the write's transaction against the rrset there
    (one that names a version of an rrset that is not there fails too), and
    If-None-Match: * (create only), so two writers that read "none" cannot
    both create it."""

    def guard(current: StaticRRset | None) -> None:
        if current is not None:
            if request.headers.get("If-None-Match", "").strip() == "*":
                raise BadRequest(
                    "the rrset exists (If-None-Match: *)", 412, "precondition_failed"
                )
            require_match(request, _document(current, zone))
        elif request.headers.get("If-Match", "*").strip() != "*":
            require_match(request, {})

    return guard


async def get_rrset(request: web.Request) -> web.Response:
    zone, name, rtype = _place(request)
    for rrset in await request.app[STORE].get_rrsets(zone):
        if (rrset.name, rrset.rtype) == (name, rtype):
            out = _document(rrset, zone)
            return with_etag(web.json_response(out), out)
    raise NotFound(
        f"{zone} has no {request.match_info['type'].upper()} rrset at {name}"
    )


async def put_rrset(request: web.Request) -> web.Response:
    zone, name, rtype = _place(request)
    body = from_json(RRsetIn, await json_object(request))
    rrset = body.to_domain(name, rtype, zone)
    created = await request.app[STORE].put_rrset(
        zone, rrset, actor=request[ACTOR], guard=_guard(request, zone)
    )
    out = _document(rrset, zone)
    return with_etag(web.json_response(out, status=201 if created else 200), out)


async def delete_rrset(request: web.Request) -> web.Response:
    zone, name, rtype = _place(request)
    await request.app[STORE].delete_rrset(
        zone, name, rtype, actor=request[ACTOR], guard=_guard(request, zone)
    )
    return web.Response(status=204)
