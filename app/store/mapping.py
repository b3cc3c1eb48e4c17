"""Rows ↔ domain values, both directions side by side, and nothing else.

There is one mapper for reading: `RowMapper` turns a row into a value by
keyword, with one set of decoders. Bulk reads hand it plain Core rows (JSON
columns as text, each distinct text decoded once); single-row reads and writes
hand it ORM rows flattened by the same column list, so the two can never
disagree about which column is which.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from ipaddress import IPv4Address, IPv6Address, ip_address
from socket import AF_INET, AF_INET6, inet_pton
from typing import Any

from sqlalchemy import ColumnElement, Text, cast, type_coerce

from app.domain.model import (
    AllDown,
    Endpoint,
    EndpointKind,
    Failback,
    Health,
    HealthState,
    HttpMethod,
    IPAddress,
    Location,
    Method,
    MinAvailable,
    Monitor,
    MonitorProtocol,
    OnStale,
    Override,
    OverrideState,
    Profile,
    Quorum,
    SipSuccess,
    SrvService,
    StaticData,
    StaticRRset,
    Zone,
)
from app.domain.plain import plain
from app.domain.query import RType
from app.domain.vantages import Vantage
from app.store.tables import (
    EndpointHealthRow,
    EndpointRow,
    ProfileRow,
    VantageHealthRow,
    VantageRow,
    ZoneRow,
)

METHODS = {m.value: m for m in Method}
KINDS = {k.value: k for k in EndpointKind}
STATES = {s.value: s for s in HealthState}
NAIVE_EPOCH = datetime(1970, 1, 1)


# --- columns: the order every row is read in --------------------------------


def json_text(column: Any) -> ColumnElement[Any]:
    """A JSON column as its text, decoded by the mapper once per distinct value
    rather than per row (asyncpg would decode JSON itself, hence a cast, not a
    coerce)."""
    return cast(column, Text).label(column.key)


def _raw(column: Any) -> ColumnElement[Any]:
    """A timestamp as the driver gives it: SQLite's text, parsed in `to_epoch`
    faster than by the column type; PostgreSQL's datetime."""
    return type_coerce(column, Text).label(column.key)


E = EndpointRow
ENDPOINT_COLUMNS = (
    E.profile_id,
    E.name,
    E.kind,
    E.address,
    E.target,
    E.child_id,
    E.min_child_endpoints,
    E.min_child_endpoints_ipv4,
    E.min_child_endpoints_ipv6,
    E.enabled,
    E.priority,
    E.weight,
    json_text(E.geo),
    json_text(E.subnets),
    json_text(E.location),
    E.port,
    E.always_serve,
    json_text(E.monitor),
    json_text(E.override),
    E.id,
)
P = ProfileRow
PROFILE_COLUMNS = (
    P.zone_id,
    P.name,
    P.method,
    P.ttl,
    P.enabled,
    json_text(P.monitor),
    json_text(P.srv),
    P.max_return,
    P.failback,
    P.all_down,
    P.fallback,
    P.geo_failover,
    P.ttl_degraded,
    P.min_available,
    P.on_stale,
    P.id,
)
H = EndpointHealthRow
HEALTH_COLUMNS = (
    H.endpoint_id,
    H.state,
    _raw(H.since),
    H.reason,
    H.failures,
    H.successes,
    H.latency_ms,
    _raw(H.checked_at),
)
V = VantageHealthRow
VIEW_COLUMNS = (  # HEALTH_COLUMNS' order, then the vantage
    V.endpoint_id,
    V.state,
    _raw(V.since),
    V.reason,
    V.failures,
    V.successes,
    V.latency_ms,
    _raw(V.checked_at),
    V.vantage,
)
ENDPOINT_KEYS = tuple(str(c.key) for c in ENDPOINT_COLUMNS)
PROFILE_KEYS = tuple(str(c.key) for c in PROFILE_COLUMNS)
HEALTH_KEYS = tuple(str(c.key) for c in HEALTH_COLUMNS)


def _flat(row: object, keys: Sequence[str]) -> tuple[Any, ...]:
    """An ORM row as the tuple a bulk read would give."""
    return tuple(getattr(row, key) for key in keys)


# --- decoders: one per stored shape ------------------------------------------


def to_epoch(moment: datetime | str | None) -> float | None:
    """SQLite hands back text or a datetime without a zone, PostgreSQL an aware
    datetime; the store only ever writes UTC."""
    if moment is None:
        return None
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment)
    if moment.tzinfo is not None:
        return moment.timestamp()
    return (moment - NAIVE_EPOCH).total_seconds()


def from_epoch(seconds: float | None) -> datetime | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, UTC)


def address_from(text: str | None) -> IPAddress | None:
    """Stored addresses were validated on the way in; the packed form is the
    fast constructor."""
    if not text:
        return None
    try:
        if ":" in text:
            return IPv6Address(inet_pton(AF_INET6, text))
        return IPv4Address(inet_pton(AF_INET, text))
    except OSError:  # not an I/O error: inet_pton's word for a bad string
        pass
    # Raised outside the handler: an OSError in its context would read as the
    # database being out of reach.
    raise ValueError(f"address {text!r} is not a plain IPv4 or IPv6 address")


def monitor_from(doc: dict[str, Any] | None) -> Monitor:
    fields = dict(doc or {})
    fields["protocol"] = MonitorProtocol(fields.get("protocol", "tcp"))
    fields["headers"] = tuple((k, v) for k, v in fields.get("headers", []))
    fields["method"] = HttpMethod(fields.get("method", "GET"))
    fields["sip_success"] = SipSuccess(fields.get("sip_success", "codes"))
    fields["checks"] = tuple(monitor_from(c) for c in fields.get("checks", ()))
    fields["quorum"] = Quorum(fields.get("quorum", "majority"))
    return Monitor(**fields)


def own_monitor_from(doc: dict[str, Any] | None) -> Monitor | None:
    """An endpoint's own monitor; none means it follows its profile's."""
    return monitor_from(doc) if doc else None


def srv_from(doc: list[dict[str, Any]] | None) -> tuple[SrvService, ...]:
    return tuple(
        SrvService(
            s["service"],
            s["port"],
            tuple(s.get("endpoints") or ()),
            (int(s["naptr"][0]), int(s["naptr"][1])) if s.get("naptr") else None,
        )
        for s in doc or ()
    )


def strings_from(doc: list[str] | None) -> tuple[str, ...]:
    return tuple(doc or ())


def location_from(doc: dict[str, Any] | None) -> Location | None:
    if not doc:
        return None
    return Location(doc["lat"], doc["lon"], doc.get("region"))


def override_from(doc: dict[str, Any] | None) -> Override | None:
    if not doc:
        return None
    return Override(
        OverrideState(doc["state"]), doc.get("reason", ""), doc.get("until")
    )


# --- reading -----------------------------------------------------------------


class RowMapper:
    """Rows in `*_COLUMNS` order → domain values, built by keyword.

    A JSON value arrives as text from a bulk read and is decoded once per
    distinct text (most endpoints share `[]`, `null` or their profile's
    monitor), so equal values are also one object in memory; from an ORM row
    it arrives decoded.
    """

    def __init__(self) -> None:
        self._memo: dict[tuple[str, str], Any] = {}

    def _decode(self, kind: str, value: Any, convert: Callable[[Any], Any]) -> Any:
        if not isinstance(value, str):
            return convert(value)
        key = (kind, value)
        try:
            return self._memo[key]
        except KeyError:
            decoded = self._memo[key] = convert(json.loads(value))
            return decoded

    def profile(self, row: Sequence[Any], endpoints: Iterable[Endpoint]) -> Profile:
        (
            _zone_id,
            name,
            method,
            ttl,
            enabled,
            monitor,
            srv,
            max_return,
            failback,
            all_down,
            fallback,
            geo_failover,
            ttl_degraded,
            min_available,
            on_stale,
            profile_id,
        ) = row
        decode = self._decode
        return Profile(
            name=name,
            method=METHODS[method],
            ttl=ttl,
            enabled=enabled,
            monitor=decode("monitor", monitor, monitor_from),
            srv=decode("srv", srv, srv_from),
            max_return=max_return,
            failback=Failback(failback),
            all_down=AllDown(all_down),
            fallback=address_from(fallback),
            geo_failover=geo_failover,
            ttl_degraded=ttl_degraded,
            min_available=MinAvailable.parse(min_available) if min_available else None,
            on_stale=OnStale(on_stale),
            endpoints=tuple(endpoints),
            id=profile_id,
        )

    def endpoint(self, row: Sequence[Any], names_by_id: Mapping[int, str]) -> Endpoint:
        """`names_by_id`: the zone's profile names, to name a nested child."""
        (
            _profile_id,
            name,
            kind,
            address,
            target,
            child_id,
            min_child_endpoints,
            min_child_endpoints_ipv4,
            min_child_endpoints_ipv6,
            enabled,
            priority,
            weight,
            geo,
            subnets,
            location,
            port,
            always_serve,
            monitor,
            override,
            endpoint_id,
        ) = row
        decode = self._decode
        return Endpoint(
            name=name,
            kind=KINDS[kind],
            address=address_from(address),
            target=target,
            child=None if child_id is None else names_by_id.get(child_id),
            min_child_endpoints=min_child_endpoints,
            min_child_endpoints_ipv4=min_child_endpoints_ipv4,
            min_child_endpoints_ipv6=min_child_endpoints_ipv6,
            enabled=enabled,
            priority=priority,
            weight=weight,
            geo=decode("strings", geo, strings_from),
            subnets=decode("strings", subnets, strings_from),
            location=decode("location", location, location_from),
            port=port,
            always_serve=always_serve,
            monitor=decode("endpoint monitor", monitor, own_monitor_from),
            override=decode("override", override, override_from),
            id=endpoint_id,
        )

    def services(self, value: Any) -> tuple[SrvService, ...]:
        """A profile's SRV services alone, for reads that need no more."""
        return self._decode("srv", value, srv_from)  # type: ignore[no-any-return]

    @staticmethod
    def health(row: Sequence[Any]) -> Health:
        """The verdict of a `HEALTH_COLUMNS` row (its endpoint id is the key)."""
        (
            _endpoint_id,
            state,
            since,
            reason,
            failures,
            successes,
            latency_ms,
            checked_at,
        ) = row
        return Health(
            state=STATES[state],
            since=to_epoch(since) or 0.0,
            reason=reason,
            failures=failures,
            successes=successes,
            latency_ms=latency_ms,
            checked_at=to_epoch(checked_at),
        )


class UnreadableRow(ValueError):
    """A stored value the mapper cannot read (written around the API, or by a
    version with other rules), with where it is: "endpoints.a: …"."""


def why(exc: Exception) -> str:
    """The reason in words: the value at fault, not a traceback."""
    if isinstance(exc, UnreadableRow):
        return str(exc)
    if isinstance(exc, KeyError):
        return f"unknown value {exc}"
    return str(exc) or type(exc).__name__


def profile_from_row(row: ProfileRow, names_by_id: Mapping[int, str]) -> Profile:
    """An ORM profile row with its endpoint rows; `names_by_id`: the zone's
    profile names, to name nested children. Raises UnreadableRow."""
    mapper = RowMapper()
    endpoints = []
    for e in row.endpoints:
        try:
            endpoints.append(mapper.endpoint(_flat(e, ENDPOINT_KEYS), names_by_id))
        except Exception as exc:
            raise UnreadableRow(f"endpoints.{e.name}: {why(exc)}") from None
    try:
        return mapper.profile(_flat(row, PROFILE_KEYS), endpoints)
    except Exception as exc:
        raise UnreadableRow(why(exc)) from None


def health_from_row(row: EndpointHealthRow | VantageHealthRow) -> Health:
    return RowMapper.health(_flat(row, HEALTH_KEYS))


def vantage_from_row(row: VantageRow) -> Vantage:
    return Vantage(
        row.name,
        to_epoch(row.seen_at) or 0.0,
        to_epoch(row.resumed_at) or 0.0,
        row.voting,
        row.source,
    )


def fill_vantage_row(row: VantageRow, vantage: Vantage) -> VantageRow:
    row.seen_at = from_epoch(vantage.seen_at)  # type: ignore[assignment]
    row.resumed_at = from_epoch(vantage.resumed_at)  # type: ignore[assignment]
    row.voting = vantage.voting
    row.source = vantage.source
    return row


def zone_from_row(row: ZoneRow) -> Zone:
    """A zone's own fields; its profiles are read by whoever needs them (a
    bulk read, or one by one where one may not read)."""
    return Zone(
        id=row.id,
        name=row.name,
        ns=tuple(row.ns),
        soa_email=row.soa_email,
        negative_ttl=row.negative_ttl,
        glue=tuple((name, ip_address(addr)) for name, addr in row.glue),
        rrsets=tuple(rrset_from_doc(doc) for doc in row.rrsets or ()),
    )


def rrset_from_doc(doc: dict[str, Any]) -> StaticRRset:
    return StaticRRset(
        name=doc["name"],
        rtype=int(RType[doc["type"]]),
        ttl=int(doc["ttl"]),
        records=tuple(
            StaticData(r["text"], base64.b64decode(r["wire"], validate=True))
            for r in doc["records"]
        ),
    )


def rrset_doc(rrset: StaticRRset) -> dict[str, Any]:
    return {
        "name": rrset.name,
        "type": RType(rrset.rtype).name,
        "ttl": rrset.ttl,
        "records": [
            {"text": r.text, "wire": base64.b64encode(r.wire).decode()}
            for r in rrset.records
        ],
    }


# --- writing -----------------------------------------------------------------


def fill_zone_row(row: ZoneRow, zone: Zone) -> ZoneRow:
    row.name = zone.name
    row.ns = list(zone.ns)
    row.soa_email = zone.soa_email
    row.negative_ttl = zone.negative_ttl
    row.glue = [[name, str(addr)] for name, addr in zone.glue]
    row.rrsets = [rrset_doc(r) for r in zone.rrsets]
    return row


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
    row.ttl_degraded = profile.ttl_degraded
    row.min_available = str(profile.min_available) if profile.min_available else None
    row.on_stale = profile.on_stale.value
    return row


def fill_endpoint_row(
    row: EndpointRow, endpoint: Endpoint, ids_by_name: Mapping[str, int]
) -> EndpointRow:
    """`ids_by_name`: the zone's profile ids, to point at a nested child."""
    row.name = endpoint.name
    row.kind = endpoint.kind.value
    row.address = str(endpoint.address) if endpoint.address else None
    row.target = endpoint.target
    row.min_child_endpoints = endpoint.min_child_endpoints
    row.min_child_endpoints_ipv4 = endpoint.min_child_endpoints_ipv4
    row.min_child_endpoints_ipv6 = endpoint.min_child_endpoints_ipv6
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


def health_values(health: Health) -> dict[str, Any]:
    """A verdict as column values, for bulk writes."""
    return {
        "state": health.state.value,
        "since": from_epoch(health.since),
        "reason": health.reason,
        "failures": health.failures,
        "successes": health.successes,
        "latency_ms": health.latency_ms,
        "checked_at": from_epoch(health.checked_at),
    }
