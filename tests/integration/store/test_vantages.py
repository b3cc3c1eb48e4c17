"""Vantages in the store, on SQLite and PostgreSQL: each prober's views, the
decided state DNS reads, and a quiet vantage that stops voting."""

from __future__ import annotations

import time
from ipaddress import ip_address

import pytest

from app.domain.model import Health, HealthState, Method, Monitor, Quorum
from app.domain.vantages import VANTAGE_STALE_AFTER
from app.store import SqlStore
from app.store import events as events_module
from app.store.base import HealthUpdate
from tests.builders import make_endpoint, make_profile, make_zone

pytestmark = pytest.mark.postgres
ZONE = make_zone(glue=(("ns1.tm.example.", ip_address("127.0.0.53")),))
UP, DOWN = HealthState.ONLINE, HealthState.OFFLINE


def view(state: HealthState, since: float, reason: str) -> Health:
    return Health(state, since, reason, checked_at=since)


async def endpoint_of(store: SqlStore, quorum: Quorum) -> int:
    await store.create_zone(ZONE, actor="test")
    profile = make_profile(
        "app",
        Method.PRIORITY,
        make_endpoint("one", "127.0.0.1"),
        monitor=Monitor(quorum=quorum),
    )
    created = await store.create_profile(ZONE.name, profile, actor="test")
    return created.endpoints[0].id


async def decided(store: SqlStore, endpoint: int) -> Health:
    _, health = await store.load_all()
    return health[endpoint]


async def write(
    store: SqlStore,
    endpoint: int,
    vantage: str,
    state: HealthState,
    at: float,
    quorum: Quorum = Quorum.ANY,
) -> None:
    """One view, with the quorum the prober sends beside it (its monitor's)."""
    reason = "HTTP 200 OK" if state is UP else "HTTP 503"
    update = HealthUpdate(endpoint, view(state, at, reason), None, quorum)
    await store.record_health_batch([update], vantage)


@pytest.mark.parametrize(
    ("quorum", "expected"),
    [(Quorum.ANY, UP), (Quorum.MAJORITY, UP), (Quorum.ALL, DOWN)],
)
async def test_two_vantages_that_disagree_are_decided_by_the_quorum(
    store: SqlStore, quorum: Quorum, expected: HealthState
) -> None:
    endpoint = await endpoint_of(store, quorum)
    now = float(int(time.time()))  # whole seconds: stored to the microsecond
    for name in ("eu", "us"):
        await store.heartbeat(now, name)
    await write(store, endpoint, "eu", UP, now, quorum)
    await write(store, endpoint, "us", DOWN, now, quorum)
    health = await decided(store, endpoint)
    assert health.state is expected
    assert health.reason.startswith(f"1 of 2 vantages up ({quorum.value}): ")
    views = await store.vantage_views([endpoint])
    assert {n: h.state for n, h in views[endpoint].items()} == {"eu": UP, "us": DOWN}


async def test_the_generation_moves_only_when_the_decided_state_does(
    store: SqlStore,
) -> None:
    endpoint = await endpoint_of(store, Quorum.ANY)
    now = float(int(time.time()))  # whole seconds: stored to the microsecond
    await write(store, endpoint, "eu", UP, now)
    start = await store.generation()
    await write(store, endpoint, "us", DOWN, now + 1)  # any: still up
    await write(store, endpoint, "eu", UP, now + 2)
    assert await store.generation() == start
    await write(store, endpoint, "eu", DOWN, now + 3)
    assert await store.generation() == start + 1
    transitions = await store.transitions([endpoint], 10)
    assert [(t.old, t.new) for t in transitions] == [
        (UP, DOWN),
        (HealthState.CHECKING, UP),
    ]


async def test_a_quiet_vantage_stops_voting_and_the_state_is_decided_without_it(
    store: SqlStore,
) -> None:
    endpoint = await endpoint_of(store, Quorum.ANY)
    start = float(int(time.time()))
    await store.heartbeat(start, "eu")
    await store.heartbeat(start, "us")
    await write(store, endpoint, "eu", UP, start)
    await write(store, endpoint, "us", DOWN, start)
    assert (await decided(store, endpoint)).state is UP
    # Only "us" keeps beating; "eu" (the one that saw it up) went quiet.
    changed = []
    for second in range(1, int(VANTAGE_STALE_AFTER) + 2):
        changed += await store.heartbeat(start + second, "us")
    assert [(v.name, v.voting) for v in changed] == [("eu", False)]
    health = await decided(store, endpoint)
    assert health.state is DOWN and health.reason == "HTTP 503"
    vantages = {v.name: v.voting for v in await store.vantages()}
    assert vantages == {"eu": False, "us": True}
    # It reports again: its view counts from its heartbeat on.
    later = start + VANTAGE_STALE_AFTER + 2
    back = await store.heartbeat(later, "eu")
    assert [(v.name, v.voting) for v in back] == [("eu", True)]
    assert (await decided(store, endpoint)).state is UP


async def test_a_prober_continues_from_its_own_views(store: SqlStore) -> None:
    endpoint = await endpoint_of(store, Quorum.MAJORITY)
    now = float(int(time.time()))  # whole seconds: stored to the microsecond
    await write(store, endpoint, "eu", UP, now)
    await write(store, endpoint, "us", DOWN, now)
    assert await store.views_of("us") == {endpoint: view(DOWN, now, "HTTP 503")}
    assert await store.views_of("eu") == {endpoint: view(UP, now, "HTTP 200 OK")}
    assert await store.views_of("nobody") == {}


async def test_each_change_is_an_event_and_the_backlog_is_bounded(
    store: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Events are written with the change: a vantage going quiet is one of its
    own, beside the decided transition it causes; old ones are pruned."""
    endpoint = await endpoint_of(store, Quorum.ANY)
    start = float(int(time.time()))
    for name in ("eu", "us"):
        await store.heartbeat(start, name)
    await write(store, endpoint, "eu", UP, start)
    await write(store, endpoint, "us", DOWN, start)
    for second in range(1, int(VANTAGE_STALE_AFTER) + 2):
        await store.heartbeat(start + second, "us")
    events = await store.events_after(0)
    kinds = [(e.kind, e.subject) for e in events]
    assert kinds[:2] == [("config", "tm.example."), ("config", "tm.example./app")]
    joined, quiet = [e for e in events if e.subject == "vantage/eu"]
    assert (joined.data["voting"], quiet.data["voting"]) == (True, False)
    [down] = [e for e in events if e.kind == "health" and e.data["to"] == "offline"]
    assert down.id > quiet.id and down.subject == "tm.example./app/one"
    oldest, newest = await store.event_bounds()
    assert (oldest, newest) == (events[0].id, events[-1].id)

    monkeypatch.setattr(events_module, "MAX_EVENTS", 2)
    await store.prune_transitions(0.0)
    assert [e.id for e in await store.events_after(0)] == [newest - 1, newest]
