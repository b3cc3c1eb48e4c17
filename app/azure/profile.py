"""One Azure profile → a tmdns profile body, noting the rest; no input parsing."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from app.azure.endpoints import endpoint_body
from app.azure.errors import AzureError
from app.azure.expressions import is_expression
from app.azure.monitor import monitor_of
from app.azure.naming import profile_name
from app.azure.notes import IDENTITY, Notes
from app.azure.sources import Source
from app.domain.routing import METHODS
from app.schemas import ProfileIn, from_json
from app.transfer import profile_entry

# trafficRoutingMethod (any letter case) → our method name, from the method table.
METHOD_BY_AZURE_NAME = {
    spec.azure_name.lower(): spec.method.value for spec in METHODS.values()
}
_PROFILE_FIELDS = IDENTITY | {
    "tags",
    "profileStatus",
    "trafficRoutingMethod",
    "dnsConfig",
    "monitorConfig",
    "endpoints",
    "trafficViewEnrollmentStatus",
    "allowedEndpointRecordTypes",
    "maxReturn",
}


def profile_body(source: Source, notes: Notes) -> dict[str, Any]:
    """The profile as the document writes it, or as mapped (with a note per
    error) when the schemas refuse it. Raises AzureError when it has no usable
    name or routing method."""
    f = source.fields
    name = profile_name(source.name)
    where = f"profile {source.name!r}"
    method = _method_of(source, where)
    body: dict[str, Any] = {"name": name, "method": method}
    if name != source.name:
        notes.note(where, f"named {name!r} in tmdns (a DNS name)")
    _dns(f.get("dnsConfig") or {}, source.name, body, where, notes)
    if str(f.get("profileStatus") or "").lower() == "disabled":
        body["enabled"] = False
    if method == "multivalue" and f.get("maxReturn") is not None:
        body["max_return"] = f["maxReturn"]
    monitor = monitor_of(f.get("monitorConfig") or {}, where, notes)
    if monitor:
        body["monitor"] = monitor
    _profile_leftovers(f, where, notes)
    taken: set[str] = set()
    endpoints = [
        endpoint_body(e, method, monitor, taken, where, notes) for e in source.endpoints
    ]
    body["endpoints"] = [e for e in endpoints if e is not None]
    return _as_entry(body, where, notes)


def _method_of(source: Source, where: str) -> str:
    """The tmdns method; AzureError for an unevaluated name or unknown method."""
    if is_expression(source.name) or not source.name:
        raise AzureError(
            f"a profile's name {source.name!r} cannot be evaluated here: give "
            "its parameters a defaultValue, or convert `az network "
            "traffic-manager profile show` output instead"
        )
    routing = str(source.fields.get("trafficRoutingMethod") or "")
    method = METHOD_BY_AZURE_NAME.get(routing.lower())
    if method is None:
        raise AzureError(
            f"{where}: trafficRoutingMethod {routing!r} is not one of "
            + ", ".join(spec.azure_name for spec in METHODS.values())
        )
    return method


def _as_entry(body: dict[str, Any], where: str, notes: Notes) -> dict[str, Any]:
    """The body in the document's short form, or as it is if it is invalid."""
    try:
        return profile_entry(from_json(ProfileIn, body))
    except ValidationError as exc:
        for error in exc.errors():
            path = ".".join(str(p) for p in error["loc"])
            notes.note(where, f"{path}: {error['msg']} (fix it in the document)")
        return body


def _dns(
    dns: dict[str, Any], azure_name: str, body: dict[str, Any], where: str, notes: Notes
) -> None:
    if dns.get("ttl") is not None:
        body["ttl"] = dns["ttl"]
    relative = dns.get("relativeName")
    if relative and str(relative).lower() != azure_name.lower():
        notes.note(
            where,
            f"dnsConfig.relativeName {relative!r} ({relative}.trafficmanager.net)"
            f" is served as {body['name']}.<zone>: point its CNAMEs there",
        )


def _profile_leftovers(f: dict[str, Any], where: str, notes: Notes) -> None:
    if str(f.get("trafficViewEnrollmentStatus") or "").lower() == "enabled":
        notes.note(where, "trafficViewEnrollmentStatus Enabled: no Traffic View")
    types = f.get("allowedEndpointRecordTypes") or []
    if types and [str(t).lower() for t in types] != ["any"]:
        notes.note(
            where,
            f"allowedEndpointRecordTypes {types}: tmdns answers each query "
            "type from the endpoints of its family",
        )
    if f.get("tags"):
        notes.note(where, f"tags {f['tags']} are not kept")
    notes.unknown(f, _PROFILE_FIELDS, where)
