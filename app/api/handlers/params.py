"""URL path parameters in canonical form (names accepted in any case, dot or not)."""

from __future__ import annotations

from aiohttp import web

from app.domain import names
from app.store.base import NotFound


def zone_name(request: web.Request) -> str:
    raw = request.match_info["zone"]
    try:
        return names.absolute(raw)
    except names.BadName as exc:
        raise NotFound(f"zone {raw!r} does not exist") from exc


def profile_name(request: web.Request, zone: str) -> str:
    raw = request.match_info["profile"]
    try:
        return names.relative(raw, zone)
    except names.BadName as exc:
        raise NotFound(f"profile {raw!r} does not exist in zone {zone}") from exc


def endpoint_name(request: web.Request) -> str:
    return request.match_info["endpoint"].lower()
