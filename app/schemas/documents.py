"""Resources as plain JSON documents: the bodies a PATCH is merged into."""

from __future__ import annotations

from typing import Any

from app.domain.model import Endpoint, Profile, Zone
from app.schemas.endpoints import EndpointOut
from app.schemas.profiles import ProfileOut
from app.schemas.zones import ZoneOut


def profile_document(p: Profile, zone: str) -> dict[str, Any]:
    """The profile as a ProfileIn body: what a PATCH is merged into."""
    return ProfileOut.from_domain(p, zone).model_dump(
        mode="json",
        exclude_none=True,
        exclude={"fqdn": True, "endpoints": {"__all__": {"fqdn", "state"}}},
    )


def endpoint_document(e: Endpoint) -> dict[str, Any]:
    """The endpoint as an EndpointIn body: what a PATCH is merged into."""
    return EndpointOut.from_domain(e, ".").model_dump(
        mode="json", exclude_none=True, exclude={"fqdn", "state"}
    )


def zone_document(z: Zone) -> dict[str, Any]:
    return ZoneOut.from_domain(z).model_dump(mode="json", exclude_none=True)
