"""A row the store cannot read (written around the API, or by a version with
other rules) never becomes an internal error: reads and edits of its profile
are refused with the field at fault and the way out, deleting it or its zone
works, and the prober's verdicts keep being stored."""

from __future__ import annotations

from dataclasses import replace
from ipaddress import ip_address

import pytest
from sqlalchemy import update

from app.domain.model import Failback, Health, HealthState, Method
from app.store import Conflict, NotFound, SqlStore
from app.store.base import HealthUpdate
from app.store.tables import EndpointRow
from tests.builders import make_endpoint, make_profile, make_zone

pytestmark = pytest.mark.postgres
ZONE = make_zone(glue=(("ns1.tm.example.", ip_address("127.0.0.53")),))
PARKED = replace(
    make_profile(
        "app",
        Method.PRIORITY,
        make_endpoint("primary", "127.0.0.1", priority=1),
        make_endpoint("secondary", "127.0.0.2", priority=2),
    ),
    failback=Failback.PARKING,
)


async def poisoned(store: SqlStore) -> int:
    """The profile saved, then its primary's kind overwritten with a value no
    version knows; returns the secondary's id."""
    await store.create_zone(ZONE, actor="test")
    saved = await store.create_profile(ZONE.name, PARKED, actor="test")
    async with store.sessions.write() as session:
        await session.execute(
            update(EndpointRow)
            .where(EndpointRow.name == "primary")
            .values(kind="teleport")
        )
    return next(e.id for e in saved.endpoints if e.name == "secondary")


async def test_reads_and_edits_name_the_field_and_the_way_out(
    store: SqlStore,
) -> None:
    await poisoned(store)
    with pytest.raises(Conflict) as read:
        await store.get_profile(ZONE.name, "app")
    with pytest.raises(Conflict) as edit:
        await store.update_profile(
            ZONE.name, "app", lambda p: p, actor="test", action="profile.update"
        )
    for refused in (read.value, edit.value):
        assert "endpoints.primary" in str(refused) and "teleport" in str(refused)
        assert "delete it and create it again" in str(refused)


async def test_the_prober_keeps_writing_beside_an_unreadable_parking_profile(
    store: SqlStore,
) -> None:
    """Reparking reads the profile; one that does not read keeps its parked
    endpoint rather than failing every verdict in the batch."""
    secondary = await poisoned(store)
    before = await store.generation()
    await store.record_health_batch(
        [HealthUpdate(secondary, Health(HealthState.OFFLINE, 5.0, "refused"), None)]
    )
    assert (await store.health_of([secondary]))[secondary].state is HealthState.OFFLINE
    assert await store.generation() == before + 1


async def test_the_profile_and_its_zone_can_be_deleted(store: SqlStore) -> None:
    await poisoned(store)
    await store.delete_profile(ZONE.name, "app", actor="test")
    with pytest.raises(NotFound):
        await store.get_profile(ZONE.name, "app")
    await poisoned_again(store)
    await store.delete_zone(ZONE.name, actor="test")
    assert await store.list_zones() == []


async def poisoned_again(store: SqlStore) -> None:
    await store.create_profile(ZONE.name, PARKED, actor="test")
    async with store.sessions.write() as session:
        await session.execute(update(EndpointRow).values(kind="teleport"))
