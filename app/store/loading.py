"""Reading the configuration in bulk for the snapshot: plain SELECTs straight
into domain values, no ORM objects.

At 10,000 profiles × 10 endpoints the ORM's identity map, change tracking and
per-value JSON decoding cost seconds and hundreds of megabytes; here the JSON
columns are read as text and each distinct text is decoded once (most endpoints
share `[]`, `null` or their profile's monitor), so equal values are also one
object in memory.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import datetime
from ipaddress import IPv4Address, IPv6Address
from socket import AF_INET, AF_INET6, inet_pton
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Select,
    Text,
    and_,
    cast,
    or_,
    select,
    type_coerce,
)
from sqlalchemy.ext.asyncio import AsyncSession

from app.domain.changes import ProfileLine
from app.domain.model import (
    AllDown,
    Endpoint,
    EndpointKind,
    Failback,
    Health,
    HealthState,
    IPAddress,
    Method,
    Profile,
)
from app.store.mapping import location_from, monitor_from, override_from, srv_from
from app.store.tables import EndpointHealthRow, EndpointRow, ProfileRow

METHODS = {m.value: m for m in Method}
KINDS = {k.value: k for k in EndpointKind}
NAIVE_EPOCH = datetime(1970, 1, 1)


def _text(column: Any) -> ColumnElement[Any]:
    """A JSON column as its text, decoded here once per distinct value rather
    than per row (asyncpg would decode JSON itself, hence a cast, not a coerce)."""
    return cast(column, Text).label(column.key)


def _raw(column: Any) -> ColumnElement[Any]:
    """A timestamp as the driver gives it: SQLite's text, parsed in `_epoch`
    faster than by the column type; PostgreSQL's datetime."""
    return type_coerce(column, Text).label(column.key)


class _Decoder:
    """Decodes each distinct JSON text once and hands out the same value again."""

    def __init__(self) -> None:
        self._memo: dict[tuple[str, str | None], Any] = {}

    def get(self, kind: str, text: str | None, convert: Callable[[Any], Any]) -> Any:
        key = (kind, text)
        try:
            return self._memo[key]
        except KeyError:
            value = convert(None if text is None else json.loads(text))
            self._memo[key] = value
            return value


def _address(text: str | None) -> IPAddress | None:
    """Stored addresses were validated on the way in; the packed form is the
    fast constructor."""
    if not text:
        return None
    try:
        if ":" in text:
            return IPv6Address(inet_pton(AF_INET6, text))
        return IPv4Address(inet_pton(AF_INET, text))
    except OSError:  # not an I/O error: inet_pton's word for a bad string
        raise ValueError(
            f"address {text!r} is not a plain IPv4 or IPv6 address"
        ) from None


def _strings(doc: list[str] | None) -> tuple[str, ...]:
    return tuple(doc or ())


def _monitor_or_none(doc: dict[str, Any] | None) -> Any:
    return monitor_from(doc) if doc else None


def _monitor(doc: dict[str, Any] | None) -> Any:
    return monitor_from(doc or {})


E = EndpointRow
ENDPOINT_COLUMNS = (
    E.profile_id,
    E.name,
    E.kind,
    E.address,
    E.target,
    E.child_id,
    E.min_child_endpoints,
    E.enabled,
    E.priority,
    E.weight,
    _text(E.geo),
    _text(E.subnets),
    _text(E.location),
    E.port,
    E.always_serve,
    _text(E.monitor),
    _text(E.override),
    E.id,
)
P = ProfileRow
PROFILE_COLUMNS = (
    P.zone_id,
    P.name,
    P.method,
    P.ttl,
    P.enabled,
    _text(P.monitor),
    _text(P.srv),
    P.max_return,
    P.failback,
    P.all_down,
    P.fallback,
    P.geo_failover,
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


class ConfigReader:
    """One bulk read: profiles with their endpoints, and health rows.

    Rows are unpacked by position and domain values built positionally, which
    halves the cost per endpoint; the store contract tests compare this reader
    with the ORM mapping field by field, so a misplaced column cannot pass.
    """

    def __init__(self, session: AsyncSession) -> None:
        self._session = session
        self._decode = _Decoder().get
        # Profiles whose rows could not be read: id → (zone id, name, reason).
        # One bad row leaves its profile out; it never stops the whole read.
        self.broken: dict[int, tuple[int, str, str]] = {}

    async def index(self) -> dict[int, ProfileLine]:
        """Every profile in a line: ids, names and parking, no endpoints."""
        rows = await self._rows(
            select(
                ProfileRow.id,
                ProfileRow.zone_id,
                ProfileRow.name,
                ProfileRow.parked_endpoint_id,
            )
        )
        return {r[0]: ProfileLine(r[1], r[2], r[3]) for r in rows}

    async def profiles(
        self,
        where: ColumnElement[bool] | None,
        names_by_id: Mapping[int, str],
    ) -> dict[int, list[Profile]]:
        """Profiles by zone id, in id order, each with its endpoints in id order;
        `names_by_id` names nested children (they may not be among those read)."""
        query = select(*PROFILE_COLUMNS).order_by(ProfileRow.id)
        endpoints_query = select(*ENDPOINT_COLUMNS).order_by(EndpointRow.id)
        if where is not None:
            query = query.where(where)
            endpoints_query = endpoints_query.where(
                EndpointRow.profile_id.in_(select(ProfileRow.id).where(where))
            )
        endpoints: dict[int, list[Endpoint]] = defaultdict(list)
        unreadable: dict[int, str] = {}
        for row in await self._rows(endpoints_query):
            try:
                endpoints[row[0]].append(self._endpoint(row, names_by_id))
            except Exception as exc:  # a bad row, however it got there
                unreadable.setdefault(row[0], f"endpoints.{row[1]}: {_why(exc)}")
        by_zone: dict[int, list[Profile]] = defaultdict(list)
        for row in await self._rows(query):
            zone_id, name, profile_id = row[0], row[1], row[-1]
            try:
                if profile_id in unreadable:
                    raise _Unreadable(unreadable[profile_id])
                by_zone[zone_id].append(
                    self._profile(row, endpoints.get(profile_id, ()))
                )
            except Exception as exc:
                self.broken[profile_id] = (zone_id, name, _why(exc))
        return by_zone

    async def outline(
        self,
        zone_id: int,
        names_by_id: Mapping[int, str],
        neighbours: Collection[str],
        skip: int | None = None,
    ) -> tuple[Profile, ...]:
        """What a write checks the zone-wide rules against: the profiles named in
        `neighbours` and every profile in the nesting graph (but `skip`), with only
        names, SRV services, endpoint names and kinds, and nested children."""
        nesting = E.child_id.is_not(None)
        chosen = and_(
            P.zone_id == zone_id,
            or_(
                P.name.in_(list(neighbours)),
                P.id.in_(select(E.profile_id).where(nesting)),
                P.id.in_(select(E.child_id).where(nesting)),
            ),
        )
        if skip is not None:
            chosen = and_(chosen, P.id != skip)
        endpoints: dict[int, list[Endpoint]] = defaultdict(list)
        query = (
            select(E.profile_id, E.name, E.kind, E.child_id)
            .where(E.profile_id.in_(select(P.id).where(chosen)))
            .order_by(E.id)
        )
        for profile_id, name, kind, child_id in await self._rows(query):
            child = None if child_id is None else names_by_id.get(child_id)
            endpoints[profile_id].append(Endpoint(name, KINDS[kind], child=child))
        rows = await self._rows(
            select(P.id, P.name, P.method, _text(P.srv)).where(chosen).order_by(P.id)
        )
        return tuple(
            Profile(
                name,
                METHODS[method],
                srv=self._decode("srv", srv, srv_from),
                endpoints=tuple(endpoints.get(profile_id, ())),
                id=profile_id,
            )
            for profile_id, name, method, srv in rows
        )

    async def health(
        self, where: ColumnElement[bool] | None = None
    ) -> dict[int, Health]:
        query = select(*HEALTH_COLUMNS)
        if where is not None:
            query = query.where(where)
        states = {s.value: s for s in HealthState}
        return {
            endpoint_id: Health(
                states[state],
                _epoch(since) or 0.0,
                reason,
                failures,
                successes,
                latency_ms,
                _epoch(checked_at),
            )
            for (
                endpoint_id,
                state,
                since,
                reason,
                failures,
                successes,
                latency_ms,
                checked_at,
            ) in await self._rows(query)
        }

    async def _rows(self, query: Select[*tuple[Any, ...]]) -> Sequence[Any]:
        """Through the session's connection: plain rows, no ORM bookkeeping."""
        connection = await self._session.connection()
        rows: Sequence[Any] = (await connection.execute(query)).all()
        return rows

    def _profile(self, row: Any, endpoints: Iterable[Endpoint]) -> Profile:
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
            profile_id,
        ) = row
        decode = self._decode
        return Profile(
            name=name,
            method=METHODS[method],
            ttl=ttl,
            enabled=enabled,
            monitor=decode("monitor", monitor, _monitor),
            srv=decode("srv", srv, srv_from),
            max_return=max_return,
            failback=Failback(failback),
            all_down=AllDown(all_down),
            fallback=_address(fallback),
            geo_failover=geo_failover,
            endpoints=tuple(endpoints),
            id=profile_id,
        )

    def _endpoint(self, row: Any, names_by_id: Mapping[int, str]) -> Endpoint:
        (
            _profile_id,
            name,
            kind,
            address,
            target,
            child_id,
            min_child_endpoints,
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
            address=_address(address),
            target=target,
            child=None if child_id is None else names_by_id.get(child_id),
            min_child_endpoints=min_child_endpoints,
            enabled=enabled,
            priority=priority,
            weight=weight,
            geo=decode("strings", geo, _strings),
            subnets=decode("strings", subnets, _strings),
            location=decode("location", location, location_from),
            port=port,
            always_serve=always_serve,
            monitor=decode("endpoint monitor", monitor, _monitor_or_none),
            override=decode("override", override, override_from),
            id=endpoint_id,
        )


class _Unreadable(ValueError):
    """A profile with an endpoint row that could not be read."""


def _why(exc: Exception) -> str:
    """The reason in words: the value at fault, not a traceback."""
    if isinstance(exc, _Unreadable):
        return str(exc)
    if isinstance(exc, KeyError):
        return f"unknown value {exc}"
    return str(exc) or type(exc).__name__


def _epoch(moment: datetime | str | None) -> float | None:
    """SQLite hands back text without a zone, PostgreSQL an aware datetime; the
    store only ever writes UTC."""
    if moment is None:
        return None
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment)
    if moment.tzinfo is not None:
        return moment.timestamp()
    return (moment - NAIVE_EPOCH).total_seconds()
