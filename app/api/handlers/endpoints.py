"""/zones/{zone}/profiles/{profile}/endpoints: one endpoint at a time.

Each change is applied to the profile inside one store transaction, so the
profile-wide rules (unique names and priorities) are checked against what is
really there, even with concurrent edits.
"""

from __future__ import annotations

from dataclasses import replace

from aiohttp import web

from app.api.errors import json_object
from app.api.handlers.params import endpoint_name, profile_name, zone_name
from app.api.handlers.profiles import states_of
from app.api.keys import ACTOR, STORE
from app.domain import names
from app.domain.model import Endpoint, Profile
from app.schemas import EndpointIn, EndpointOut, endpoint_document, merge_patch
from app.store.base import Conflict, NotFound


def _find(profile: Profile, name: str) -> Endpoint:
    for endpoint in profile.endpoints:
        if endpoint.name == name:
            return endpoint
    raise NotFound(f"endpoint {name!r} does not exist in profile {profile.name!r}")


def _response(
    request: web.Request, profile: Profile, zone: str, name: str, status: int = 200
) -> web.Response:
    fqdn = names.join(profile.name, zone)
    endpoint = _find(profile, name)
    out = EndpointOut.from_domain(
        endpoint, fqdn, states_of(request, fqdn).get(endpoint.id)
    )
    return web.json_response(out.model_dump(mode="json"), status=status)


async def list_endpoints(request: web.Request) -> web.Response:
    zone = zone_name(request)
    profile = await request.app[STORE].get_profile(zone, profile_name(request, zone))
    fqdn = names.join(profile.name, zone)
    states = states_of(request, fqdn)
    return web.json_response(
        [
            EndpointOut.from_domain(e, fqdn, states.get(e.id)).model_dump(mode="json")
            for e in profile.endpoints
        ]
    )


async def get_endpoint(request: web.Request) -> web.Response:
    zone = zone_name(request)
    profile = await request.app[STORE].get_profile(zone, profile_name(request, zone))
    return _response(request, profile, zone, endpoint_name(request))


async def create_endpoint(request: web.Request) -> web.Response:
    zone = zone_name(request)
    body = EndpointIn.model_validate(await json_object(request))

    def change(current: Profile) -> Profile:
        if any(e.name == body.name for e in current.endpoints):
            raise Conflict(f"endpoint {body.name!r} already exists in this profile")
        # DESIGN §2: priority defaults by order, i.e. after every existing one.
        after_last = max((e.priority for e in current.endpoints), default=0) + 1
        return replace(
            current, endpoints=(*current.endpoints, body.to_domain(after_last))
        )

    saved = await request.app[STORE].update_profile(
        zone,
        profile_name(request, zone),
        change,
        actor=request[ACTOR],
        action="endpoint.create",
    )
    return _response(request, saved, zone, body.name, 201)


async def patch_endpoint(request: web.Request) -> web.Response:
    zone, name = zone_name(request), endpoint_name(request)
    patch = await json_object(request)
    renamed = name

    def change(current: Profile) -> Profile:
        nonlocal renamed
        old = _find(current, name)
        edited = EndpointIn.model_validate(merge_patch(endpoint_document(old), patch))
        renamed = edited.name
        new = edited.to_domain(priority=old.priority, id=old.id)
        return replace(
            current,
            endpoints=tuple(new if e.id == old.id else e for e in current.endpoints),
        )

    saved = await request.app[STORE].update_profile(
        zone,
        profile_name(request, zone),
        change,
        actor=request[ACTOR],
        action="endpoint.update",
    )
    return _response(request, saved, zone, renamed)


async def delete_endpoint(request: web.Request) -> web.Response:
    zone, name = zone_name(request), endpoint_name(request)

    def change(current: Profile) -> Profile:
        gone = _find(current, name)
        return replace(
            current, endpoints=tuple(e for e in current.endpoints if e is not gone)
        )

    await request.app[STORE].update_profile(
        zone,
        profile_name(request, zone),
        change,
        actor=request[ACTOR],
        action="endpoint.delete",
    )
    return web.Response(status=204)
