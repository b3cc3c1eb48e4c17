"""A large configuration for the snapshot benchmark: one zone of N profiles × M
endpoints over every routing method, every endpoint with a health row, written
straight into the tables (the API would take minutes to create 100,000 rows and
the point here is reading them back)."""

from __future__ import annotations

import time
from ipaddress import IPv4Address
from typing import Any

from sqlalchemy import Table, insert, select, update

from app.domain.model import (
    Endpoint,
    Health,
    HealthState,
    Location,
    Method,
    Monitor,
    MonitorProtocol,
    Profile,
    SrvService,
    Zone,
)
from app.store.engine import make_engine
from app.store.mapping import (
    fill_endpoint_row,
    fill_profile_row,
    fill_zone_row,
    health_values,
)
from app.store.tables import (
    EndpointHealthRow,
    EndpointRow,
    MetaRow,
    ProfileRow,
    ZoneRow,
)

ZONE = "big.example."
METHODS = (
    Method.PRIORITY,
    Method.WEIGHTED,
    Method.MULTIVALUE,
    Method.GEOGRAPHIC,
    Method.SUBNET,
    Method.PERFORMANCE,
)
# Probed in a real deployment; nothing probes them here, the health rows say online.
MONITOR = Monitor(protocol=MonitorProtocol.TCP, port=5060)
GEO = ("GEO-EU", "GEO-NA", "GEO-AS", "GEO-SA", "GEO-AF", "GEO-OC", "DE", "FR", "US")


def profile_name(index: int) -> str:
    return f"p{index:05d}"


def endpoint(profile: int, index: int, method: Method) -> Endpoint:
    """Loopback addresses only: 127.x.y.z, distinct per endpoint."""
    serial = profile * 16 + index
    address = IPv4Address(0x7F000000 + 1 + serial)
    geo: tuple[str, ...] = ()
    if method is Method.GEOGRAPHIC:
        geo = (GEO[index],) if index < len(GEO) else ("WORLD",)
    subnets: tuple[str, ...] = ()
    if method is Method.SUBNET:
        subnets = (f"10.{index}.0.0/16",)
    location = None
    if method is Method.PERFORMANCE:
        location = Location(-60.0 + index * 12.0, -150.0 + index * 30.0)
    return Endpoint(
        name=f"e{index}",
        address=address,
        priority=index + 1,
        weight=1 + index * 10,
        geo=geo,
        subnets=subnets,
        location=location,
    )


def profile(index: int, endpoints: int) -> Profile:
    method = METHODS[index % len(METHODS)]
    return Profile(
        name=profile_name(index),
        method=method,
        monitor=MONITOR,
        srv=(SrvService("_sip._udp", 5060),),
        max_return=3,
        endpoints=tuple(endpoint(index, i, method) for i in range(endpoints)),
    )


def _columns(table: Table, row: Any) -> dict[str, Any]:
    """The row's values, leaving out the id and whatever the defaults fill."""
    return {
        c.key: getattr(row, c.key)
        for c in table.columns
        if c.key != "id"
        and (getattr(row, c.key) is not None or c.server_default is None)
    }


async def populate(url: str, profiles: int, endpoints: int) -> float:
    """Write the configuration into a migrated, empty database; returns seconds."""
    started = time.perf_counter()
    engine = make_engine(url)
    zone = Zone(name=ZONE, ns=("ns1.example.net.",), soa_email="hostmaster@big.example")
    try:
        async with engine.begin() as conn:
            table = ZoneRow.__table__
            zone_row = _columns(table, fill_zone_row(ZoneRow(), zone))
            result = await conn.execute(insert(table), [zone_row])
            zone_id = result.inserted_primary_key[0]  # type: ignore[index]
            for index in range(profiles):
                await _insert_profile(conn, zone_id, profile(index, endpoints))
            await _insert_health(conn)
            bump = update(MetaRow).values(generation=MetaRow.generation + 1)
            await conn.execute(bump)
    finally:
        await engine.dispose()
    return time.perf_counter() - started


async def _insert_profile(conn: Any, zone_id: int, p: Profile) -> None:
    profile_table, endpoint_table = ProfileRow.__table__, EndpointRow.__table__
    row = _columns(profile_table, fill_profile_row(ProfileRow(), p))
    result = await conn.execute(insert(profile_table), [row | {"zone_id": zone_id}])
    profile_id = result.inserted_primary_key[0]
    rows = [
        _columns(endpoint_table, fill_endpoint_row(EndpointRow(), e, {}))
        | {"profile_id": profile_id}
        for e in p.endpoints
    ]
    await conn.execute(insert(endpoint_table), rows)


async def _insert_health(conn: Any) -> None:
    """Every endpoint online, as a prober would have found them."""
    table = EndpointHealthRow.__table__
    online = Health(HealthState.ONLINE, since=1.0, checked_at=1.0)
    values = health_values(online)
    ids = await conn.execute(select(EndpointRow.__table__.c.id))
    await conn.execute(insert(table), [values | {"endpoint_id": i} for (i,) in ids])
