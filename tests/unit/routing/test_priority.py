"""Priority routing (DESIGN §4): the lowest priority value among available
endpoints; homing returns to the primary, parking stays on the endpoint in use;
operator overrides and their expiry."""

from __future__ import annotations

from dataclasses import replace
from random import Random

import pytest

from app.domain.answer import answer
from app.domain.draw import RandomDraw
from app.domain.model import (
    Config,
    Failback,
    Health,
    HealthState,
    Method,
    Monitor,
    Override,
    OverrideState,
)
from app.domain.query import QueryContext, RType
from app.domain.routing import priority
from app.domain.snapshot import compile_snapshot
from tests.builders import make_endpoint, make_profile, make_zone
from tests.unit.routing.support import OFFLINE, ONLINE, candidates, names_of

CTX = QueryContext()
A = make_endpoint("a", "192.0.2.1", priority=1, id=1)
B = make_endpoint("b", "192.0.2.2", priority=2, id=2)
C = make_endpoint("c", "192.0.2.3", priority=3, id=3)


def chosen(profile, states=None, *, now=0.0, parked=None) -> list[str]:
    c = candidates(profile, states, now=now, parked=parked)
    return names_of(
        priority.select(c, QueryContext(now=now), RandomDraw(Random(1))).endpoints
    )


@pytest.mark.parametrize(
    ("order", "offline", "expected"),
    [
        ((A, B, C), (), "a"),
        ((C, B, A), (), "a"),  # configuration order does not matter
        ((B, C, A), (), "a"),
        ((A, B, C), (1,), "b"),
        ((C, A, B), (1,), "b"),
        ((A, B, C), (1, 2), "c"),
        ((A, B, C), (2,), "a"),  # a secondary failing changes nothing
        ((A, B, C), (2, 3), "a"),
    ],
)
def test_lowest_priority_available_endpoint_wins(order, offline, expected) -> None:
    profile = make_profile("app", Method.PRIORITY, *order)
    assert chosen(profile, dict.fromkeys(offline, OFFLINE)) == [expected]


@pytest.mark.parametrize(
    "state", [HealthState.ONLINE, HealthState.CHECKING, HealthState.UNMONITORED]
)
def test_online_checking_and_unmonitored_are_available(state) -> None:
    profile = make_profile("app", Method.PRIORITY, A, B)
    assert chosen(profile, {1: state}) == ["a"]


@pytest.mark.parametrize("state", [HealthState.OFFLINE, HealthState.DISABLED])
def test_offline_and_disabled_states_are_not_available(state) -> None:
    profile = make_profile("app", Method.PRIORITY, A, B)
    assert chosen(profile, {1: state}) == ["b"]


def test_always_serve_keeps_an_offline_endpoint_available() -> None:
    profile = make_profile("app", Method.PRIORITY, replace(A, always_serve=True), B)
    assert chosen(profile, {1: OFFLINE}) == ["a"]


@pytest.mark.parametrize(
    ("timeline", "expected"),
    [
        # (offline ids at each step) → the endpoint answered at each step
        (((), (1,), ()), ["a", "b", "a"]),
        (((), (1,), (1, 2), (1,), ()), ["a", "b", "c", "b", "a"]),
    ],
)
def test_homing_returns_to_the_primary_once_it_is_back(timeline, expected) -> None:
    profile = make_profile("app", Method.PRIORITY, A, B, C)
    answers = [
        chosen(profile, dict.fromkeys(down, OFFLINE), parked=2)[0] for down in timeline
    ]
    assert answers == expected  # `parked` is ignored under homing


@pytest.mark.parametrize(
    ("parked", "offline", "expected"),
    [
        (2, (), "b"),  # stays on b although the primary is available
        (3, (), "c"),
        (1, (), "a"),
        (2, (2,), "a"),  # the parked endpoint failed: lowest priority available
        (3, (3, 1), "b"),
        (None, (), "a"),  # nothing parked yet
        (99, (), "a"),  # parked on an endpoint no longer in the profile
    ],
)
def test_parking_stays_on_the_parked_endpoint_while_available(
    parked, offline, expected
) -> None:
    profile = make_profile("app", Method.PRIORITY, A, B, C, failback=Failback.PARKING)
    assert chosen(profile, dict.fromkeys(offline, OFFLINE), parked=parked) == [expected]


def test_parking_does_not_stay_on_a_disabled_or_forced_down_endpoint() -> None:
    for held in (
        replace(B, enabled=False),
        replace(B, override=Override(OverrideState.DOWN, "maintenance")),
        replace(B, override=Override(OverrideState.DRAIN, "upgrade")),
    ):
        profile = make_profile(
            "app", Method.PRIORITY, A, held, C, failback=Failback.PARKING
        )
        assert chosen(profile, parked=2) == ["a"]


@pytest.mark.parametrize(
    ("a_override", "a_state", "now", "expected"),
    [
        (Override(OverrideState.DOWN, "maintenance"), ONLINE, 0.0, "b"),
        (Override(OverrideState.DRAIN, "upgrade"), ONLINE, 0.0, "b"),
        (Override(OverrideState.UP, "probe is wrong"), OFFLINE, 0.0, "a"),
        # an override with an expiry applies until then, and no longer after
        (Override(OverrideState.DOWN, "window", until=100.0), ONLINE, 99.9, "b"),
        (Override(OverrideState.DOWN, "window", until=100.0), ONLINE, 100.0, "a"),
        (Override(OverrideState.DOWN, "window", until=100.0), ONLINE, 500.0, "a"),
        (Override(OverrideState.DRAIN, "window", until=10.0), ONLINE, 10.0, "a"),
        (Override(OverrideState.UP, "window", until=50.0), OFFLINE, 49.0, "a"),
        (Override(OverrideState.UP, "window", until=50.0), OFFLINE, 50.0, "b"),
    ],
)
def test_operator_overrides_and_their_expiry(a_override, a_state, now, expected):
    profile = make_profile("app", Method.PRIORITY, replace(A, override=a_override), B)
    assert chosen(profile, {1: a_state}, now=now) == [expected]


def test_forced_up_does_not_revive_a_disabled_endpoint() -> None:
    disabled = replace(A, enabled=False, override=Override(OverrideState.UP))
    profile = make_profile("app", Method.PRIORITY, disabled, B)
    assert chosen(profile) == ["b"]


def test_nothing_available_is_nodata() -> None:
    profile = make_profile("app", Method.PRIORITY, A, B)
    c = candidates(profile, {1: OFFLINE, 2: OFFLINE})
    decision = priority.select(c, CTX, RandomDraw(Random(1)))
    assert decision.endpoints == ()


def test_the_answer_does_not_depend_on_the_client() -> None:
    profile = make_profile("app", Method.PRIORITY, A, B)
    decision = priority.select(candidates(profile), CTX, RandomDraw(Random(1)))
    assert decision.scope == 0
    assert "1" in decision.why


# Through the snapshot: the compile time decides which overrides are in force,
# and the store's parked endpoint reaches the router.

TCP = Monitor()


@pytest.mark.parametrize(
    ("compiled_at", "expected"), [(0.0, "192.0.2.2"), (100.0, "192.0.2.1")]
)
def test_an_expired_override_no_longer_applies_after_recompiling(
    compiled_at, expected
) -> None:
    forced = replace(A, override=Override(OverrideState.DOWN, "window", until=100.0))
    profile = make_profile("app", Method.PRIORITY, forced, B)
    snapshot = compile_snapshot(Config((make_zone(profile),)), {}, 1, compiled_at)
    result = answer(
        snapshot,
        "app.tm.example.",
        RType.A,
        QueryContext(now=compiled_at),
        RandomDraw(Random(1)),
    )
    assert [str(r.rdata) for r in result.answer] == [expected]
    assert snapshot.expires_at == (100.0 if compiled_at < 100.0 else None)


@pytest.mark.parametrize(
    ("parked", "offline", "expected"),
    [(2, (), "192.0.2.2"), (2, (2,), "192.0.2.1"), (None, (), "192.0.2.1")],
)
def test_parking_through_the_snapshot_uses_the_stored_endpoint(
    parked, offline, expected
) -> None:
    profile = make_profile(
        "app", Method.PRIORITY, A, B, monitor=TCP, failback=Failback.PARKING, id=5
    )
    config = Config(
        (make_zone(profile),), parked={5: parked} if parked is not None else {}
    )
    health = {i: Health(HealthState.OFFLINE, since=0.0) for i in offline}
    snapshot = compile_snapshot(config, health, 1, 0.0)
    result = answer(snapshot, "app.tm.example.", RType.A, CTX, RandomDraw(Random(1)))
    assert [str(r.rdata) for r in result.answer] == [expected]
