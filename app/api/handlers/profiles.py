"""/zones/{zone}/profiles: profiles with their endpoints."""

from __future__ import annotations

from aiohttp import web

from app.api.errors import json_object
from app.api.etags import require_match, with_etag
from app.api.handlers.params import profile_name, zone_name
from app.api.keys import ACTOR, SNAPSHOT, STORE
from app.domain import names
from app.domain.model import Profile
from app.schemas import (
    ProfileIn,
    ProfileOut,
    from_json,
    merge_patch,
    profile_document,
)


def states_of(request: web.Request, fqdn: str) -> dict[int, str]:
    """Endpoint states as DNS currently sees them (from the live snapshot)."""
    node = request.app[SNAPSHOT]().nodes.get(fqdn)
    if node is None or node.profile is None:
        return {}
    return {eid: state.value for eid, state in node.profile.states.items()}


def profile_response(
    request: web.Request, profile: Profile, zone: str, status: int = 200
) -> web.Response:
    states = states_of(request, names.join(profile.name, zone))
    quarantine = request.app[SNAPSHOT]().quarantined.get(profile.id)
    out = ProfileOut.from_domain(profile, zone, states, quarantine)
    response = web.json_response(out.model_dump(mode="json"), status=status)
    return with_etag(response, profile_document(profile, zone))


async def list_profiles(request: web.Request) -> web.Response:
    zone = await request.app[STORE].get_zone(zone_name(request))
    quarantined = request.app[SNAPSHOT]().quarantined
    return web.json_response(
        [
            ProfileOut.from_domain(
                p,
                zone.name,
                states_of(request, names.join(p.name, zone.name)),
                quarantined.get(p.id),
            ).model_dump(mode="json")
            for p in zone.profiles
        ]
    )


async def create_profile(request: web.Request) -> web.Response:
    zone = zone_name(request)
    body = from_json(ProfileIn, await json_object(request))
    saved = await request.app[STORE].create_profile(
        zone, body.to_domain(zone), actor=request[ACTOR]
    )
    return profile_response(request, saved, zone, 201)


async def get_profile(request: web.Request) -> web.Response:
    zone = zone_name(request)
    profile = await request.app[STORE].get_profile(zone, profile_name(request, zone))
    return profile_response(request, profile, zone)


async def patch_profile(request: web.Request) -> web.Response:
    zone = zone_name(request)
    name, patch = profile_name(request, zone), await json_object(request)

    def change(current: Profile) -> Profile:
        require_match(request, profile_document(current, zone))
        edited = from_json(
            ProfileIn, merge_patch(profile_document(current, zone), patch)
        )
        ids = {e.name: e.id for e in current.endpoints}
        return edited.to_domain(zone, ids)

    saved = await request.app[STORE].update_profile(
        zone, name, change, actor=request[ACTOR], action="profile.update"
    )
    return profile_response(request, saved, zone)


async def delete_profile(request: web.Request) -> web.Response:
    zone = zone_name(request)
    await request.app[STORE].delete_profile(
        zone,
        profile_name(request, zone),
        actor=request[ACTOR],
        guard=lambda current: require_match(request, profile_document(current, zone)),
    )
    return web.Response(status=204)
