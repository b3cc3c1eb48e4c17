"""One Azure endpoint → a tmdns endpoint body, noting the rest; no profile fields."""

from __future__ import annotations

from ipaddress import ip_address
from typing import Any

from app.azure.expressions import is_expression
from app.azure.monitor import add_headers
from app.azure.naming import label, profile_name
from app.azure.notes import IDENTITY, Notes
from app.azure.placement import add_placement
from app.azure.sources import ENDPOINT_TYPES, kind_of
from app.domain import names

_QUIET_MONITOR_STATES = {"online", "checkingendpoint", "disabled"}
_ENDPOINT_FIELDS = IDENTITY | {
    "target",
    "targetResourceId",
    "endpointStatus",
    "endpointMonitorStatus",
    "weight",
    "priority",
    "endpointLocation",
    "geoMapping",
    "subnets",
    "minChildEndpoints",
    "minChildEndpointsIPv4",
    "minChildEndpointsIPv6",
    "customHeaders",
    "alwaysServe",
}


def endpoint_body(
    e: dict[str, Any],
    method: str,
    monitor: dict[str, Any],
    taken: set[str],
    profile_where: str,
    notes: Notes,
) -> dict[str, Any] | None:
    """The endpoint's body, or None (and a note) when it has no usable target.
    `taken` holds the names given so far in the profile, and gains this one."""
    azure_name = str(e.get("name") or "")
    where = f"{profile_where} endpoint {azure_name!r}"
    kind = kind_of(e.get("type")) or "externalendpoints"
    target: dict[str, Any] = {}
    if not _target(e, kind, target, where, notes):
        return None
    name = label(azure_name)
    while name in taken:
        name = label(f"{name[:60]}-{len(taken) + 1}")
    taken.add(name)
    if name != azure_name:
        notes.note(where, f"named {name!r} in tmdns (one DNS label)")
    body: dict[str, Any] = {"name": name, **target}
    if str(e.get("endpointStatus") or "").lower() == "disabled":
        body["enabled"] = False
    if method == "priority" and e.get("priority") is not None:
        body["priority"] = e["priority"]
    if e.get("weight") is not None:
        body["weight"] = e["weight"]
    add_placement(e, method, body, where, notes)
    if str(e.get("alwaysServe") or "").lower() == "enabled":
        body["always_serve"] = True
    if e.get("customHeaders"):
        own = {k: v for k, v in monitor.items() if k != "headers"}
        own["headers"] = dict(monitor.get("headers", {}))
        add_headers(e["customHeaders"], own, where, notes)
        body["monitor"] = {k: v for k, v in own.items() if v != {}}
    _endpoint_leftovers(e, where, notes)
    return body


def _target(
    e: dict[str, Any], kind: str, body: dict[str, Any], where: str, notes: Notes
) -> bool:
    """Fill kind and target; False (and a note) when the endpoint cannot be."""
    if kind == "nestedendpoints":
        return _nested_target(e, body, where, notes)
    if kind not in ENDPOINT_TYPES:
        notes.note(where, f"type {e.get('type')!r} is not an endpoint type")
        return False
    target = e.get("target")
    if is_expression(target):
        notes.note(
            where,
            f"target {target} is an expression that cannot be evaluated here: "
            "add the endpoint with its address or host name",
        )
        return False
    if not target:
        resource = e.get("targetResourceId") or "none"
        notes.note(
            where,
            f"{ENDPOINT_TYPES[kind]} without a target (targetResourceId "
            f"{resource}): add it with its address or host name",
        )
        return False
    return _address_or_host(str(target), body, where, notes)


def _nested_target(
    e: dict[str, Any], body: dict[str, Any], where: str, notes: Notes
) -> bool:
    """A nestedEndpoints' child: the last segment of its targetResourceId."""
    resource = str(e.get("targetResourceId") or "")
    if not resource or is_expression(resource):
        notes.note(where, "nestedEndpoints without a usable targetResourceId")
        return False
    child = profile_name(resource.rstrip("/").rsplit("/", 1)[-1])
    body.update(kind="nested", child=child)
    for azure, ours in (
        ("minChildEndpoints", "min_child_endpoints"),
        ("minChildEndpointsIPv4", "min_child_endpoints_ipv4"),
        ("minChildEndpointsIPv6", "min_child_endpoints_ipv6"),
    ):
        if e.get(azure) is not None:
            body[ours] = e[azure]
    notes.nests(where, child)
    return True


def _address_or_host(
    target: str, body: dict[str, Any], where: str, notes: Notes
) -> bool:
    try:
        body["address"] = str(ip_address(target))
    except ValueError:
        try:
            body.update(kind="host", target=names.absolute(target))
        except names.BadName as exc:
            notes.note(where, f"target: {exc}")
            return False
    return True


def _endpoint_leftovers(e: dict[str, Any], where: str, notes: Notes) -> None:
    status = str(e.get("endpointMonitorStatus") or "")
    if status and status.lower() not in _QUIET_MONITOR_STATES:
        notes.note(
            where,
            f"endpointMonitorStatus {status} is Azure's last verdict; tmdns "
            "probes afresh (the endpoint starts as checking)",
        )
    notes.unknown(e, _ENDPOINT_FIELDS, where)
