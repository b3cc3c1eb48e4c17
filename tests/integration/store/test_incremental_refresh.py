"""A refresh that reads only what changed gives the very snapshot a full read
gives, after every kind of change, on SQLite and on PostgreSQL; and it keeps
the plans of the profiles nothing touched."""

from __future__ import annotations

from dataclasses import replace
from ipaddress import ip_address
from random import Random

import pytest

from app.domain.answer import answer
from app.domain.changes import fold
from app.domain.draw import RandomDraw
from app.domain.model import (
    ChangeAction,
    ChangeKind,
    EndpointKind,
    Failback,
    Health,
    HealthState,
    Location,
    Method,
    Monitor,
    MonitorProtocol,
    Override,
    OverrideState,
    Profile,
    SrvService,
)
from app.domain.query import QueryContext
from app.domain.records import RType
from app.domain.snapshot import Snapshot
from app.refresh import build_snapshot, next_snapshot
from app.store import Invalid, SqlStore
from app.store.base import HealthUpdate, Step
from tests.builders import make_endpoint, make_profile, make_zone

pytestmark = pytest.mark.postgres
NOW = 1_000_000.0
TCP = Monitor(protocol=MonitorProtocol.TCP, port=5060)
SIP = (SrvService("_sip._udp", 5060),)
ZONE = make_zone(glue=(("ns1.tm.example.", ip_address("127.0.0.53")),))
PROFILES = (
    make_profile(
        "app",
        Method.PRIORITY,
        make_endpoint("primary", "127.0.0.1", priority=1, weight=7, port=5070),
        make_endpoint("secondary", "::1", priority=2, weight=13, always_serve=True),
        make_endpoint("third", "127.0.0.3", priority=3, monitor=TCP),
        monitor=TCP,
        srv=SIP,
        failback=Failback.PARKING,
    ),
    make_profile(
        "weigh",
        Method.WEIGHTED,
        make_endpoint("w1", "127.0.1.1", weight=50),
        make_endpoint(
            "w2",
            "127.0.1.2",
            priority=2,
            weight=30,
            override=Override(OverrideState.DRAIN, "patching", NOW + 3600),
        ),
        srv=SIP,
    ),
    make_profile(
        "geo",
        Method.GEOGRAPHIC,
        make_endpoint("eu", "127.0.2.1", geo=("GEO-EU", "US-CA")),
        make_endpoint("rest", "127.0.2.2", priority=2, geo=("WORLD",)),
    ),
    make_profile(
        "net",
        Method.SUBNET,
        make_endpoint(
            "lan", "127.0.3.1", subnets=("10.0.0.0/8", "192.0.2.1-192.0.2.9")
        ),
        make_endpoint("other", "127.0.3.2", priority=2),
    ),
    make_profile(
        "perf",
        Method.PERFORMANCE,
        make_endpoint("dub", "127.0.4.1", location=Location(53.3, -6.3, "eu-west-1")),
        make_endpoint("iad", "127.0.4.2", priority=2, location=Location(38.9, -77.0)),
    ),
    make_profile(
        "child",
        Method.MULTIVALUE,
        make_endpoint("c1", "127.0.5.1"),
        make_endpoint("c2", "127.0.5.2", priority=2),
        monitor=TCP,
        max_return=3,
    ),
    make_profile(
        "parent",
        Method.PRIORITY,
        make_endpoint(
            "inner",
            None,
            kind=EndpointKind.NESTED,
            child="child",
            min_child_endpoints=2,
        ),
        make_endpoint("backup", "127.0.6.1", priority=2),
    ),
    make_profile(
        "cdn",
        Method.PRIORITY,
        make_endpoint("edge", None, kind=EndpointKind.HOST, target="edge.example."),
    ),
)


async def seeded(store: SqlStore) -> dict[str, Profile]:
    await store.create_zone(ZONE, actor="test")
    saved = {}
    for profile in PROFILES:
        saved[profile.name] = await store.create_profile(
            ZONE.name, profile, actor="test"
        )
    return saved


async def flip(store: SqlStore, endpoint_id: int, state: HealthState) -> None:
    await store.record_health_batch(
        [HealthUpdate(endpoint_id, Health(state, NOW, "probe said so"), None)]
    )


def assert_same(incremental: Snapshot, full: Snapshot) -> None:
    assert incremental.generation == full.generation
    assert incremental.config == full.config
    assert incremental.health == full.health
    assert incremental.zones == full.zones
    assert incremental.soas == full.soas
    assert incremental.nodes == full.nodes
    assert incremental.empty_non_terminals == full.empty_non_terminals
    assert incremental.expires_at == full.expires_at
    ctx = QueryContext(ip_address("10.1.2.3"), 32, NOW)
    for name in full.nodes:
        for rtype in (RType.A, RType.AAAA, RType.SRV):
            draws = RandomDraw(Random(5)), RandomDraw(Random(5))
            assert answer(incremental, name, rtype, ctx, draws[0]) == answer(
                full, name, rtype, ctx, draws[1]
            ), (name, rtype)


async def test_every_kind_of_change_refreshes_to_what_a_full_read_gives(
    store: SqlStore,
) -> None:
    saved = await seeded(store)
    current = await build_snapshot(store, lambda: NOW)
    app_ids = [e.id for e in saved["app"].endpoints]
    child_ids = [e.id for e in saved["child"].endpoints]

    def moved(p: Profile) -> Profile:
        first = replace(p.endpoints[0], address=ip_address("127.0.0.9"))
        return replace(p, endpoints=(first, *p.endpoints[1:]))

    async def edit(name: str, change: object) -> None:
        await store.update_profile(
            ZONE.name,
            name,
            change,
            actor="test",
            action="profile.update",  # type: ignore[arg-type]
        )

    changes = [
        lambda: edit("app", moved),
        lambda: flip(store, app_ids[0], HealthState.ONLINE),
        lambda: flip(store, app_ids[1], HealthState.ONLINE),
        lambda: flip(store, app_ids[0], HealthState.OFFLINE),  # parking moves
        lambda: flip(store, child_ids[0], HealthState.OFFLINE),  # parent's nest
        lambda: store.create_profile(
            ZONE.name,
            make_profile("fresh", Method.WEIGHTED, make_endpoint()),
            actor="test",
        ),
        lambda: store.delete_profile(ZONE.name, "fresh", actor="test"),
        lambda: edit("weigh", lambda p: replace(p, enabled=False)),
        lambda: edit("weigh", lambda p: replace(p, enabled=True)),
        lambda: edit("net", lambda p: replace(p, endpoints=p.endpoints[:1])),
        lambda: edit("geo", lambda p: replace(p, name="geo2")),  # renamed
        lambda: store.update_zone(
            ZONE.name, lambda z: replace(z, negative_ttl=30), actor="test"
        ),
        lambda: store.replace_latency(
            (("10.0.0.0/8", {"eu-west-1": 12.5}),), actor="test"
        ),
    ]
    for change in changes:
        await change()
        refreshed = await next_snapshot(store, current, lambda: NOW)
        assert_same(refreshed, await build_snapshot(store, lambda: NOW))
        current = refreshed


async def test_an_edit_rebuilds_one_plan_and_keeps_the_others(store: SqlStore) -> None:
    saved = await seeded(store)
    before = await build_snapshot(store, lambda: NOW)
    await store.update_profile(
        ZONE.name,
        "weigh",
        lambda p: replace(p, ttl=30),
        actor="test",
        action="profile.update",
    )
    changes = await store.load_changes(before.generation)
    folded = fold(before.config, before.health, changes)
    assert folded is not None
    assert folded.dirty == {saved["weigh"].id}
    after = await next_snapshot(store, before, lambda: NOW)
    assert after.plans[saved["weigh"].id] is not before.plans[saved["weigh"].id]
    assert after.plans[saved["weigh"].id].profile.ttl == 30
    for name in ("app", "geo", "net", "perf", "child", "parent", "cdn"):
        assert after.plans[saved[name].id] is before.plans[saved[name].id], name


async def test_a_child_going_down_rebuilds_its_nesting_parent(store: SqlStore) -> None:
    saved = await seeded(store)
    for endpoint in saved["child"].endpoints:
        await flip(store, endpoint.id, HealthState.ONLINE)
    before = await build_snapshot(store, lambda: NOW)
    parent = saved["parent"].id
    assert before.plans[parent].available[0].name == "inner"
    await flip(store, saved["child"].endpoints[1].id, HealthState.OFFLINE)
    after = await next_snapshot(store, before, lambda: NOW)
    assert after.plans[parent] is not before.plans[parent]
    assert [e.name for e in after.plans[parent].available] == ["backup"]
    assert after.plans[saved["app"].id] is before.plans[saved["app"].id]


async def test_a_verdict_that_keeps_the_state_moves_no_generation(
    store: SqlStore,
) -> None:
    saved = await seeded(store)
    endpoint = saved["app"].endpoints[0].id
    await flip(store, endpoint, HealthState.ONLINE)
    generation = await store.generation()
    later = Health(HealthState.ONLINE, NOW, "200 OK", latency_ms=3.5, checked_at=NOW)
    await store.record_health_batch([HealthUpdate(endpoint, later, None)])
    assert await store.generation() == generation
    assert (await store.health_of([endpoint]))[endpoint] == later


async def test_the_bulk_reader_agrees_with_the_row_mapping(store: SqlStore) -> None:
    """load_all builds values by column position; get_profile goes through the
    ORM mapping. Every field differs between endpoints, so a misplaced column
    cannot pass."""
    saved = await seeded(store)
    config, _ = await store.load_all()
    loaded = {p.name: p for p in config.zones[0].profiles}
    assert loaded.keys() == saved.keys()
    for name in saved:
        assert loaded[name] == await store.get_profile(ZONE.name, name), name


@pytest.mark.parametrize(
    "newcomer",
    [
        make_profile("primary.app", Method.PRIORITY, make_endpoint()),
        make_profile("_sip._udp.app", Method.PRIORITY, make_endpoint()),
        make_profile("ns1", Method.PRIORITY, make_endpoint()),
    ],
    ids=["endpoint name", "SRV name", "glue"],
)
async def test_a_write_still_sees_every_name_it_could_collide_with(
    store: SqlStore, newcomer: Profile
) -> None:
    """Writes check the zone-wide rules against the profiles that could own
    the same names, not the whole zone; each of these collides with one."""
    await seeded(store)
    with pytest.raises(Invalid, match="already owned"):
        await store.create_profile(ZONE.name, newcomer, actor="test")


async def test_a_write_sees_a_profile_whose_endpoint_it_would_shadow(
    store: SqlStore,
) -> None:
    await seeded(store)
    await store.create_profile(
        ZONE.name, make_profile("x.y", Method.PRIORITY, make_endpoint()), actor="test"
    )
    shadow = make_profile("y", Method.PRIORITY, make_endpoint("x", "127.0.0.8"))
    with pytest.raises(Invalid, match="already owned"):
        await store.create_profile(ZONE.name, shadow, actor="test")


async def test_new_glue_cannot_take_a_name_a_profile_owns(store: SqlStore) -> None:
    await seeded(store)
    taken = (("primary.app.tm.example.", ip_address("127.0.0.7")),)
    before = await store.generation()
    with pytest.raises(Invalid, match="already owned"):
        await store.update_zone(
            ZONE.name,
            lambda z: replace(
                z, ns=(*z.ns, "primary.app.tm.example."), glue=z.glue + taken
            ),
            actor="test",
        )
    assert await store.generation() == before
    assert (await store.get_zone(ZONE.name)).glue == ZONE.glue


async def test_a_zone_reads_back_with_every_profile(store: SqlStore) -> None:
    saved = await seeded(store)
    zone = await store.get_zone(ZONE.name)
    assert [p.name for p in zone.profiles] == list(saved)
    assert zone.profiles == tuple(saved.values())


async def test_one_import_creates_edits_deletes_and_drops_a_zone(
    store: SqlStore,
) -> None:
    """Each zone is read once per import; the steps must still see each
    other: a profile created, then nested, then renamed, then a zone with
    profiles dropped whole."""
    saved = await seeded(store)
    other = make_zone(name="other.example.", ns=("ns1.example.net.",))
    await store.create_zone(other, actor="test")
    await store.create_profile(other.name, make_profile("gone"), actor="test")
    nesting = replace(
        saved["cdn"],
        endpoints=(
            *saved["cdn"].endpoints,
            make_endpoint(
                "via", None, kind=EndpointKind.NESTED, child="fresh", priority=2
            ),
        ),
    )
    steps = [
        Step(
            ChangeAction.CREATE,
            ChangeKind.PROFILE,
            ZONE.name,
            "fresh",
            make_profile("fresh"),
        ),
        Step(ChangeAction.UPDATE, ChangeKind.PROFILE, ZONE.name, "cdn", nesting),
        Step(
            ChangeAction.UPDATE,
            ChangeKind.PROFILE,
            ZONE.name,
            "weigh",
            replace(saved["weigh"], name="w"),
        ),
        Step(ChangeAction.DELETE, ChangeKind.PROFILE, ZONE.name, "net", None),
        Step(ChangeAction.DELETE, ChangeKind.ZONE, other.name, None, None),
    ]
    before = await build_snapshot(store, lambda: NOW)
    await store.apply_steps(steps, actor="import")
    refreshed = await next_snapshot(store, before, lambda: NOW)
    assert_same(refreshed, await build_snapshot(store, lambda: NOW))
    config, _ = await store.load_all()
    assert [z.name for z in config.zones] == [ZONE.name]
    names = [p.name for p in config.zones[0].profiles]
    assert "fresh" in names and "w" in names
    assert "net" not in names and "weigh" not in names
    cdn = await store.get_profile(ZONE.name, "cdn")
    assert cdn.endpoints[-1].child == "fresh"
