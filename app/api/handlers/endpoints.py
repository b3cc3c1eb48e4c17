"""/zones/{zone}/profiles/{profile}/endpoints: one endpoint at a time.

Each change is applied to the profile inside one store transaction, so the
profile-wide rules (unique names and priorities) are checked against what is
really there, even with concurrent edits.
"""

from __future__ import annotations

from dataclasses import replace

from aiohttp import web

from app.api.errors import json_object
from app.api.etags import require_match, with_etag
from app.api.handlers.params import endpoint_name, profile_name, zone_name
from app.api.handlers.profiles import states_of
from app.api.keys import ACTOR, STORE
from app.domain import names
from app.domain.model import Endpoint, Profile
from app.domain.validation import Invalid
from app.schemas import (
    EndpointIn,
    EndpointOut,
    EndpointPage,
    endpoint_document,
    from_json,
    merge_patch,
)
from app.store.base import Conflict, NotFound, ProfileChange


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
    state = states_of(request, fqdn).get(endpoint.id)
    out = EndpointOut.from_domain(endpoint, fqdn, state)
    response = web.json_response(out.model_dump(mode="json"), status=status)
    return with_etag(response, endpoint_document(endpoint))


async def _update(
    request: web.Request, change: ProfileChange, action: str, name: str
) -> tuple[str, Profile]:
    """Apply a one-endpoint change; profile-wide problems are reported on the
    endpoint's own fields (`priority`, not `endpoints.2.priority`)."""
    zone = zone_name(request)
    profile = profile_name(request, zone)
    store = request.app[STORE]
    try:
        saved = await store.update_profile(
            zone, profile, change, actor=request[ACTOR], action=action
        )
    except Invalid as exc:
        current = (await store.get_profile(zone, profile)).endpoints
        index = next((i for i, e in enumerate(current) if e.name == name), len(current))
        raise exc.within(f"endpoints.{index}.") from exc
    return zone, saved


async def list_endpoints(request: web.Request) -> web.Response:
    """?state=offline&enabled=true&limit=50&offset=100; the total before paging
    is in X-Total-Count and the next page in a Link header (RFC 8288)."""
    zone = zone_name(request)
    profile = await request.app[STORE].get_profile(zone, profile_name(request, zone))
    fqdn = names.join(profile.name, zone)
    states = states_of(request, fqdn)
    page = EndpointPage.model_validate(dict(request.query))
    chosen = [
        e
        for e in profile.endpoints
        if (page.state is None or states.get(e.id) == page.state.value)
        and (page.enabled is None or e.enabled == page.enabled)
    ]
    window = chosen[page.offset : page.offset + page.limit]
    response = web.json_response(
        [
            EndpointOut.from_domain(e, fqdn, states.get(e.id)).model_dump(mode="json")
            for e in window
        ]
    )
    response.headers["X-Total-Count"] = str(len(chosen))
    if page.offset + page.limit < len(chosen):
        following = request.rel_url.update_query(offset=page.offset + page.limit)
        response.headers["Link"] = f'<{following}>; rel="next"'
    return response


async def get_endpoint(request: web.Request) -> web.Response:
    zone = zone_name(request)
    profile = await request.app[STORE].get_profile(zone, profile_name(request, zone))
    return _response(request, profile, zone, endpoint_name(request))


async def create_endpoint(request: web.Request) -> web.Response:
    body = from_json(EndpointIn, await json_object(request))

    def change(current: Profile) -> Profile:
        if any(e.name == body.name for e in current.endpoints):
            raise Conflict(f"endpoint {body.name!r} already exists in this profile")
        # DESIGN §2: priority defaults by order, i.e. after every existing one.
        after_last = max((e.priority for e in current.endpoints), default=0) + 1
        new = body.to_domain(zone_name(request), after_last, 0, current.monitor)
        return replace(current, endpoints=(*current.endpoints, new))

    zone, saved = await _update(request, change, "endpoint.create", body.name)
    return _response(request, saved, zone, body.name, 201)


async def patch_endpoint(request: web.Request) -> web.Response:
    name, patch = endpoint_name(request), await json_object(request)
    renamed = name

    def change(current: Profile) -> Profile:
        nonlocal renamed
        old = _find(current, name)
        require_match(request, endpoint_document(old))
        edited = from_json(EndpointIn, merge_patch(endpoint_document(old), patch))
        renamed = edited.name
        new = edited.to_domain(
            zone_name(request), old.priority, old.id, current.monitor
        )
        kept = tuple(new if e.id == old.id else e for e in current.endpoints)
        return replace(current, endpoints=kept)

    zone, saved = await _update(request, change, "endpoint.update", name)
    return _response(request, saved, zone, renamed)


async def delete_endpoint(request: web.Request) -> web.Response:
    name = endpoint_name(request)

    def change(current: Profile) -> Profile:
        gone = _find(current, name)
        require_match(request, endpoint_document(gone))
        kept = tuple(e for e in current.endpoints if e is not gone)
        return replace(current, endpoints=kept)

    await _update(request, change, "endpoint.delete", name)
    return web.Response(status=204)
