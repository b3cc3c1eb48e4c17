"""Find Traffic Manager profiles in az output or ARM templates; maps no fields."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from app.azure.expressions import Expressions

PROFILE_TYPE = "microsoft.network/trafficmanagerprofiles"
ENDPOINT_TYPES = {
    "externalendpoints": "externalEndpoints",
    "azureendpoints": "azureEndpoints",
    "nestedendpoints": "nestedEndpoints",
}


@dataclass
class Source:
    """One Traffic Manager profile as read: its fields and its endpoints',
    each endpoint flattened (its `properties` merged into it)."""

    name: str
    fields: dict[str, Any]
    endpoints: list[dict[str, Any]] = field(default_factory=list)


def find_sources(data: Any, unmapped: list[str]) -> list[Source]:
    """The profiles in parsed JSON: what `az network traffic-manager profile
    show` (or `... profile list`, or the REST API) prints, or an ARM template
    (`az group export`, or a hand-written one) whose resources include
    Microsoft.Network/trafficManagerProfiles, with endpoints inline or as their
    own .../externalEndpoints, azureEndpoints and nestedEndpoints resources. In
    a template, `[parameters('x')]` (its defaultValue), `[variables('x')]`,
    `concat`, `toLower` and `resourceId` are evaluated; other expressions are
    not. Endpoints whose profile is not in the template go to `unmapped`."""
    if isinstance(data, list):  # `az network traffic-manager profile list`
        return [s for item in data for s in find_sources(item, unmapped)]
    if not isinstance(data, dict):
        return []
    if "resources" in data:
        return _template(Expressions(data).resolve(data), unmapped)
    fields = _flat(data)
    if "trafficRoutingMethod" not in fields:
        return []
    return [Source(str(data.get("name") or ""), fields, _endpoint_list(fields))]


def kind_of(resource_type: Any) -> str:
    """The last segment of a resource type, lowercase: `externalendpoints`."""
    return str(resource_type or "").rsplit("/", 1)[-1].lower()


def _flat(item: dict[str, Any]) -> dict[str, Any]:
    """A resource's fields with its `properties` lifted beside its name and type."""
    properties = item.get("properties")
    if isinstance(properties, dict):
        return {**item, **properties}
    return dict(item)


def _endpoint_list(fields: dict[str, Any]) -> list[dict[str, Any]]:
    endpoints = fields.get("endpoints") or []
    return [_flat(e) for e in endpoints if isinstance(e, dict)]


def _template(template: dict[str, Any], unmapped: list[str]) -> list[Source]:
    """Profiles of an ARM template, with endpoints given as resources of their
    own (`profile/endpoint` at the top, or children of the profile) added."""
    profiles: dict[str, Source] = {}
    loose: list[tuple[str, dict[str, Any]]] = []
    for resource, parent in _resources(template.get("resources"), None):
        kind = str(resource.get("type") or "").lower()
        name = str(resource.get("name") or "")
        if kind == PROFILE_TYPE:
            fields = _flat(resource)
            profiles[name.lower()] = Source(name, fields, _endpoint_list(fields))
        elif kind_of(kind) in ENDPOINT_TYPES and (
            parent is not None or kind.startswith(PROFILE_TYPE + "/")
        ):
            owner, _, endpoint = name.rpartition("/")
            endpoint_fields = _flat(resource) | {"name": endpoint}
            loose.append(((parent or owner).lower(), endpoint_fields))
    for owner, endpoint_fields in loose:
        if owner in profiles:
            profiles[owner].endpoints.append(endpoint_fields)
        else:
            unmapped.append(
                f"endpoint {endpoint_fields['name']!r}: its profile {owner!r} is "
                "not in the template"
            )
    return list(profiles.values())


def _resources(
    resources: Any, parent: str | None
) -> Iterator[tuple[dict[str, Any], str | None]]:
    """Every resource with the name of the profile it is nested in, if any.
    Templates of languageVersion 2.0 give resources as a mapping."""
    items = resources.values() if isinstance(resources, dict) else resources or []
    for resource in items:
        if not isinstance(resource, dict):
            continue
        yield resource, parent
        if str(resource.get("type") or "").lower() == PROFILE_TYPE:
            yield from _resources(resource.get("resources"), str(resource.get("name")))
