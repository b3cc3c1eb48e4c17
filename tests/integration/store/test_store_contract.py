"""The Store contract, on SQLite and on a real PostgreSQL server."""

import asyncio
from dataclasses import replace
from ipaddress import ip_address

import pytest

from app.domain.model import (
    ChangeAction,
    ChangeKind,
    EndpointKind,
    Failback,
    Health,
    HealthState,
    Method,
    Monitor,
)
from app.store import Conflict, Invalid, NotFound, SqlStore
from app.store.base import AuditQuery, Step
from tests.builders import make_endpoint, make_profile, make_zone

pytestmark = pytest.mark.postgres
ZONE = make_zone(glue=(("ns1.tm.example.", ip_address("127.0.0.53")),))
APP = make_profile(
    "app",
    Method.PRIORITY,
    make_endpoint("primary", "127.0.0.1", priority=1),
    make_endpoint("secondary", "::1", priority=2, weight=5),
)


async def seeded(store: SqlStore) -> None:
    await store.create_zone(ZONE, actor="test")
    await store.create_profile(ZONE.name, APP, actor="test")


async def test_a_saved_profile_reads_back_the_same(store: SqlStore) -> None:
    await seeded(store)
    back = await store.get_profile(ZONE.name, "app")
    assert back.id > 0
    assert [replace(e, id=0) for e in back.endpoints] == list(APP.endpoints)
    assert replace(back, id=0, endpoints=APP.endpoints) == APP


async def test_every_change_bumps_the_generation(store: SqlStore) -> None:
    start = await store.generation()
    await seeded(store)
    assert await store.generation() == start + 2
    await store.update_profile(
        ZONE.name,
        "app",
        lambda p: replace(p, ttl=30),
        actor="test",
        action="profile.update",
    )
    assert await store.generation() == start + 3


async def test_load_all_returns_zones_profiles_and_health(store: SqlStore) -> None:
    await seeded(store)
    profile = await store.get_profile(ZONE.name, "app")
    health = Health(HealthState.OFFLINE, since=100.0, reason="connection refused")
    await store.record_health(profile.endpoints[0].id, health, HealthState.ONLINE)
    config, states = await store.load_all()
    assert [z.name for z in config.zones] == ["tm.example."]
    assert config.zones[0].profiles[0].name == "app"
    assert states[profile.endpoints[0].id] == health


async def test_a_health_transition_moves_the_generation_a_repeat_does_not(
    store: SqlStore,
) -> None:
    await seeded(store)
    endpoint_id = (await store.get_profile(ZONE.name, "app")).endpoints[0].id
    before = await store.generation()
    await store.record_health(
        endpoint_id, Health(HealthState.ONLINE, 1.0), HealthState.CHECKING
    )
    await store.record_health(
        endpoint_id, Health(HealthState.ONLINE, 1.0), HealthState.ONLINE
    )
    assert await store.generation() == before + 1


async def test_duplicate_zone_and_profile_are_conflicts(store: SqlStore) -> None:
    await seeded(store)
    with pytest.raises(Conflict):
        await store.create_zone(ZONE, actor="test")
    with pytest.raises(Conflict):
        await store.create_profile(ZONE.name, APP, actor="test")


async def test_a_rejected_change_leaves_the_database_as_it_was(store: SqlStore) -> None:
    await seeded(store)
    before, generation = await store.load_all(), await store.generation()
    clash = make_endpoint("third", "127.0.0.3", priority=1)  # priority 1 is taken
    with pytest.raises(Invalid) as caught:
        await store.update_profile(
            ZONE.name,
            "app",
            lambda p: replace(p, endpoints=(*p.endpoints, clash)),
            actor="test",
            action="endpoint.create",
        )
    assert caught.value.problems[0].field.endswith("priority")
    assert await store.load_all() == before
    assert await store.generation() == generation


async def test_endpoint_ids_survive_an_update_so_health_is_kept(
    store: SqlStore,
) -> None:
    await seeded(store)
    old = await store.get_profile(ZONE.name, "app")
    new = await store.update_profile(
        ZONE.name,
        "app",
        lambda p: replace(
            p, endpoints=tuple(replace(e, weight=9) for e in p.endpoints)
        ),
        actor="test",
        action="profile.update",
    )
    assert [e.id for e in new.endpoints] == [e.id for e in old.endpoints]


async def test_priorities_can_be_swapped_in_one_change(store: SqlStore) -> None:
    await seeded(store)
    swapped = await store.update_profile(
        ZONE.name,
        "app",
        lambda p: replace(
            p, endpoints=tuple(replace(e, priority=3 - e.priority) for e in p.endpoints)
        ),
        actor="test",
        action="profile.update",
    )
    assert [e.priority for e in swapped.endpoints] == [2, 1]


async def test_concurrent_endpoint_additions_are_all_kept(store: SqlStore) -> None:
    await seeded(store)

    async def add(i: int) -> None:
        def change(p):
            return replace(
                p,
                endpoints=(
                    *p.endpoints,
                    make_endpoint(f"n{i}", f"127.0.1.{i}", priority=10 + i),
                ),
            )

        await store.update_profile(ZONE.name, "app", change, actor="t", action="x")

    await asyncio.gather(*(add(i) for i in range(8)))
    names = {e.name for e in (await store.get_profile(ZONE.name, "app")).endpoints}
    assert {f"n{i}" for i in range(8)} <= names


async def test_missing_things_are_not_found(store: SqlStore) -> None:
    with pytest.raises(NotFound):
        await store.get_zone("nope.example.")
    await seeded(store)
    with pytest.raises(NotFound):
        await store.get_profile(ZONE.name, "nope")


async def test_deleting_a_zone_removes_its_profiles(store: SqlStore) -> None:
    await seeded(store)
    await store.delete_zone(ZONE.name, actor="test")
    config, health = await store.load_all()
    assert config.zones == () and health == {}


async def test_parking_moves_only_when_the_endpoint_in_use_fails(
    store: SqlStore,
) -> None:
    parking = replace(APP, name="park", failback=Failback.PARKING, monitor=Monitor())
    await store.create_zone(ZONE, actor="test")
    await store.create_profile(ZONE.name, parking, actor="test")
    primary, secondary = (await store.get_profile(ZONE.name, "park")).endpoints

    async def parked() -> int | None:
        config, _ = await store.load_all()
        profile_id = (await store.get_profile(ZONE.name, "park")).id
        return config.parked.get(profile_id)

    assert await parked() == primary.id
    await store.record_health(
        primary.id, Health(HealthState.OFFLINE, 1.0), HealthState.ONLINE
    )
    assert await parked() == secondary.id
    await store.record_health(
        primary.id, Health(HealthState.ONLINE, 2.0), HealthState.OFFLINE
    )
    assert await parked() == secondary.id  # parking: no return to the primary


async def test_the_latency_table_is_replaced_whole(store: SqlStore) -> None:
    first = (("10.0.0.0/8", {"aws:eu-west-1": 12.0}),)
    second = (("192.0.2.0/24", {"aws:us-east-1": 30.0}), ("10.0.0.0/8", {"x": 1.0}))
    await store.replace_latency(first, actor="test")
    await store.replace_latency(second, actor="test")
    assert await store.get_latency() == second
    assert (await store.load_all())[0].latency == second


async def test_a_nested_child_cannot_be_deleted_while_in_use(store: SqlStore) -> None:
    await seeded(store)
    parent = make_profile(
        "top",
        Method.PRIORITY,
        make_endpoint("inner", None, kind=EndpointKind.NESTED, child="app"),
    )
    await store.create_profile(ZONE.name, parent, actor="test")
    saved = await store.get_profile(ZONE.name, "top")
    assert saved.endpoints[0].child == "app"
    with pytest.raises(Conflict, match="nested in 'top'"):
        await store.delete_profile(ZONE.name, "app", actor="test")


async def test_an_import_applies_whole_or_not_at_all(store: SqlStore) -> None:
    await seeded(store)
    before, generation = await store.load_all(), await store.generation()
    fine = make_profile("extra", Method.WEIGHTED, make_endpoint("x", "127.0.0.9"))
    clash = make_profile(
        "bad",
        Method.PRIORITY,
        make_endpoint("a", "127.0.0.1", priority=1),
        make_endpoint("b", "::1", priority=1),
    )
    steps = [
        Step(ChangeAction.CREATE, ChangeKind.PROFILE, ZONE.name, "extra", fine),
        Step(ChangeAction.CREATE, ChangeKind.PROFILE, ZONE.name, "bad", clash),
    ]
    with pytest.raises(Invalid, match="priority 1"):
        await store.apply_steps(steps, actor="import")
    assert await store.load_all() == before and await store.generation() == generation
    await store.apply_steps(steps[:1], actor="import")
    assert await store.generation() == generation + 1
    assert (await store.get_profile(ZONE.name, "extra")).endpoints[0].name == "x"


async def test_an_import_audits_what_each_step_replaced(store: SqlStore) -> None:
    await seeded(store)
    old = await store.get_profile(ZONE.name, "app")
    changed = replace(old, ttl=30)
    await store.apply_steps(
        [
            Step(ChangeAction.UPDATE, ChangeKind.PROFILE, ZONE.name, "app", changed),
            Step(ChangeAction.DELETE, ChangeKind.ZONE, ZONE.name, None, None),
        ],
        actor="import",
    )
    entries = await store.audit_log(AuditQuery(actor="import"))
    by_action = {e.action: e for e in entries}
    update = by_action["import.profile.update"]
    assert update.before["ttl"] == old.ttl and update.after["ttl"] == 30
    pruned = by_action["import.zone.delete"]
    assert pruned.before["name"] == ZONE.name and pruned.after is None
