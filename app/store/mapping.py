"""Row ↔ domain conversion, nothing else."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from ipaddress import ip_address
from typing import Any

from app.domain.model import (
    AllDown,
    Endpoint,
    EndpointKind,
    Failback,
    Health,
    HealthState,
    HttpMethod,
    Location,
    Method,
    Monitor,
    MonitorProtocol,
    Override,
    OverrideState,
    Profile,
    SipSuccess,
    SrvService,
    Zone,
)
from app.domain.plain import plain
from app.store.tables import EndpointHealthRow, EndpointRow, ProfileRow, ZoneRow


def to_epoch(moment: datetime | None) -> float | None:
    if moment is None:
        return None
    if moment.tzinfo is None:  # SQLite drops the zone; we only ever store UTC
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def from_epoch(seconds: float | None) -> datetime | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, UTC)


def monitor_from(doc: dict[str, Any]) -> Monitor:
    fields = dict(doc)
    fields["protocol"] = MonitorProtocol(fields.get("protocol", "tcp"))
    fields["headers"] = tuple((k, v) for k, v in fields.get("headers", []))
    fields["method"] = HttpMethod(fields.get("method", "GET"))
    fields["sip_success"] = SipSuccess(fields.get("sip_success", "codes"))
    return Monitor(**fields)


def zone_from_row(row: ZoneRow, *, with_profiles: bool = True) -> Zone:
    names = profile_names(row) if with_profiles else {}
    return Zone(
        id=row.id,
        name=row.name,
        ns=tuple(row.ns),
        soa_email=row.soa_email,
        negative_ttl=row.negative_ttl,
        glue=tuple((name, ip_address(addr)) for name, addr in row.glue),
        profiles=(
            tuple(profile_from_row(p, names) for p in row.profiles)
            if with_profiles
            else ()
        ),
    )


def profile_names(zone_row: ZoneRow) -> dict[int, str]:
    return {p.id: p.name for p in zone_row.profiles}


def fill_zone_row(row: ZoneRow, zone: Zone) -> ZoneRow:
    row.name = zone.name
    row.ns = list(zone.ns)
    row.soa_email = zone.soa_email
    row.negative_ttl = zone.negative_ttl
    row.glue = [[name, str(addr)] for name, addr in zone.glue]
    return row


def profile_from_row(row: ProfileRow, names_by_id: Mapping[int, str]) -> Profile:
    """`names_by_id`: the zone's profile names, to name nested children."""
    return Profile(
        id=row.id,
        name=row.name,
        method=Method(row.method),
        ttl=row.ttl,
        enabled=row.enabled,
        monitor=monitor_from(row.monitor),
        srv=srv_from(row.srv),
        max_return=row.max_return,
        failback=Failback(row.failback),
        all_down=AllDown(row.all_down),
        fallback=ip_address(row.fallback) if row.fallback else None,
        geo_failover=row.geo_failover,
        endpoints=tuple(endpoint_from_row(e, names_by_id) for e in row.endpoints),
    )


def fill_profile_row(row: ProfileRow, profile: Profile) -> ProfileRow:
    """Copy the profile's own fields (endpoints are reconciled separately)."""
    row.name = profile.name
    row.method = profile.method.value
    row.ttl = profile.ttl
    row.enabled = profile.enabled
    row.monitor = plain(profile.monitor)
    row.srv = plain(profile.srv)
    row.max_return = profile.max_return
    row.failback = profile.failback.value
    row.all_down = profile.all_down.value
    row.fallback = str(profile.fallback) if profile.fallback else None
    row.geo_failover = profile.geo_failover
    return row


def override_from(doc: dict[str, Any] | None) -> Override | None:
    if not doc:
        return None
    return Override(
        OverrideState(doc["state"]), doc.get("reason", ""), doc.get("until")
    )


def srv_from(doc: list[dict[str, Any]] | None) -> tuple[SrvService, ...]:
    return tuple(SrvService(s["service"], s["port"]) for s in doc or ())


def endpoint_from_row(row: EndpointRow, names_by_id: Mapping[int, str]) -> Endpoint:
    return Endpoint(
        id=row.id,
        name=row.name,
        kind=EndpointKind(row.kind),
        address=ip_address(row.address) if row.address else None,
        target=row.target,
        child=names_by_id.get(row.child_id) if row.child_id is not None else None,
        min_child_endpoints=row.min_child_endpoints,
        enabled=row.enabled,
        priority=row.priority,
        weight=row.weight,
        geo=tuple(row.geo),
        subnets=tuple(row.subnets),
        location=location_from(row.location),
        port=row.port,
        always_serve=row.always_serve,
        monitor=monitor_from(row.monitor) if row.monitor else None,
        override=override_from(row.override),
    )


def location_from(doc: dict[str, Any] | None) -> Location | None:
    if not doc:
        return None
    return Location(doc["lat"], doc["lon"], doc.get("region"))


def fill_endpoint_row(
    row: EndpointRow, endpoint: Endpoint, ids_by_name: Mapping[str, int]
) -> EndpointRow:
    """`ids_by_name`: the zone's profile ids, to point at a nested child."""
    row.name = endpoint.name
    row.kind = endpoint.kind.value
    row.address = str(endpoint.address) if endpoint.address else None
    row.target = endpoint.target
    row.min_child_endpoints = endpoint.min_child_endpoints
    row.enabled = endpoint.enabled
    row.priority = endpoint.priority
    row.weight = endpoint.weight
    row.geo = list(endpoint.geo)
    row.subnets = list(endpoint.subnets)
    loc = endpoint.location
    row.location = (
        {"lat": loc.latitude, "lon": loc.longitude, "region": loc.region}
        if loc
        else None
    )
    row.child_id = ids_by_name.get(endpoint.child) if endpoint.child else None
    row.port = endpoint.port
    row.always_serve = endpoint.always_serve
    row.monitor = plain(endpoint.monitor) if endpoint.monitor else None
    row.override = plain(endpoint.override) if endpoint.override else None
    return row


def health_from_row(row: EndpointHealthRow) -> Health:
    return Health(
        state=HealthState(row.state),
        since=to_epoch(row.since) or 0.0,
        reason=row.reason,
        failures=row.failures,
        successes=row.successes,
        latency_ms=row.latency_ms,
        checked_at=to_epoch(row.checked_at),
    )


def fill_health_row(row: EndpointHealthRow, health: Health) -> EndpointHealthRow:
    row.state = health.state.value
    row.since = from_epoch(health.since)  # type: ignore[assignment]
    row.reason = health.reason
    row.failures = health.failures
    row.successes = health.successes
    row.latency_ms = health.latency_ms
    row.checked_at = from_epoch(health.checked_at)
    return row
