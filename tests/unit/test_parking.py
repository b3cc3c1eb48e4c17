"""Parking failback bookkeeping (app/domain/parking.py next_parked): which
endpoint a priority profile stays on from one health change to the next."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.domain.model import Failback, HealthState, Method, Override, OverrideState
from app.domain.parking import next_parked
from tests.builders import make_endpoint, make_profile

ON, OFF = HealthState.ONLINE, HealthState.OFFLINE
A = make_endpoint("a", "192.0.2.1", priority=1, id=1)
B = make_endpoint("b", "192.0.2.2", priority=2, id=2)
C = make_endpoint("c", "192.0.2.3", priority=3, id=3)
PROFILE = make_profile("sbc", Method.PRIORITY, C, A, B, failback=Failback.PARKING)


def states(*offline: int) -> dict[int, HealthState]:
    return {e.id: OFF if e.id in offline else ON for e in PROFILE.endpoints}


@pytest.mark.parametrize(
    ("current", "offline", "expected"),
    [
        (1, (), 1),  # in use and available: stay
        (2, (), 2),  # stays on b although the primary a is available
        (3, (), 3),
        (1, (1,), 2),  # a failed: the lowest priority available
        (1, (1, 2), 3),
        (2, (2,), 1),  # b failed and a is back: move to a
        (3, (3, 1), 2),
        (None, (), 1),  # nothing in use yet: the primary
        (None, (1,), 2),
        (99, (), 1),  # in use but no longer in the profile
        (2, (1, 2, 3), 2),  # nothing available: keep the current one
        (None, (1, 2, 3), None),
    ],
)
def test_next_parked(current, offline, expected) -> None:
    assert next_parked(PROFILE, states(*offline), current, 0.0) == expected


def test_the_primary_recovering_does_not_move_the_parked_endpoint_back() -> None:
    timeline = [(), (1,), (), (), (2,), (1, 2, 3), (2,), (), (1,), ()]
    current: int | None = 1
    seen = []
    for offline in timeline:
        current = next_parked(PROFILE, states(*offline), current, 0.0)
        seen.append(current)
    # a fails → b; a recovers → still b; b fails → a; all fail → keep a;
    # all recover → a; a fails → b; a recovers → still b
    assert seen == [1, 2, 2, 2, 1, 1, 1, 1, 2, 2]


@pytest.mark.parametrize(
    "held",
    [
        replace(B, enabled=False),
        replace(B, override=Override(OverrideState.DOWN, "maintenance")),
        replace(B, override=Override(OverrideState.DRAIN, "upgrade")),
    ],
    ids=["disabled", "forced-down", "draining"],
)
def test_a_disabled_or_held_back_endpoint_in_use_is_left(held) -> None:
    profile = replace(PROFILE, endpoints=(A, held, C))
    assert next_parked(profile, states(), 2, 0.0) == 1


def test_forced_up_keeps_an_offline_endpoint_in_use() -> None:
    profile = replace(
        PROFILE, endpoints=(A, replace(B, override=Override(OverrideState.UP)), C)
    )
    assert next_parked(profile, states(2), 2, 0.0) == 2


@pytest.mark.parametrize(("now", "expected"), [(99.0, 1), (100.0, 2)])
def test_an_override_applies_until_it_expires(now, expected) -> None:
    drain = Override(OverrideState.DRAIN, "window", until=100.0)
    profile = replace(PROFILE, endpoints=(A, replace(B, override=drain), C))
    assert next_parked(profile, states(), 2, now) == expected


def test_unknown_health_counts_as_checking_and_so_available() -> None:
    assert next_parked(PROFILE, {}, 3, 0.0) == 3
    assert next_parked(PROFILE, {}, None, 0.0) == 1
