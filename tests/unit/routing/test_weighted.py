"""Weighted routing (DESIGN §4): one available endpoint at random, with
probability proportional to its weight. Draws come from a seeded Random."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from random import Random

import pytest

from app.domain.draw import RandomDraw
from app.domain.model import Method, Override, OverrideState
from app.domain.query import QueryContext
from app.domain.routing import weighted
from tests.builders import make_endpoint, make_profile
from tests.unit.routing.support import OFFLINE, candidates

CTX = QueryContext()
N = 20_000
# With n = 20,000 draws a share's standard deviation is at most
# sqrt(0.25 / 20,000) ≈ 0.0035, so abs 0.015 is about 4-5 sigma.
TOLERANCE = 0.015


def weighted_profile(*weights: int, **over):
    endpoints = [
        make_endpoint(f"e{i}", f"192.0.2.{i}", weight=w, priority=i, id=i)
        for i, w in enumerate(weights, start=1)
    ]
    return make_profile("web", Method.WEIGHTED, *endpoints, **over)


def shares(profile, states=None, *, n: int = N, seed: int = 1234) -> dict[str, float]:
    c = candidates(profile, states)
    rng = RandomDraw(Random(seed))
    picks = Counter(weighted.select(c, CTX, rng).endpoints[0].name for _ in range(n))
    return {name: count / n for name, count in picks.items()}


@pytest.mark.parametrize(
    "weights",
    [(1, 1), (3, 1), (50, 30, 20), (1, 2, 3, 4), (1000, 1), (7, 7, 7, 7, 7)],
)
def test_share_of_answers_tracks_weight(weights: tuple[int, ...]) -> None:
    got = shares(weighted_profile(*weights))
    total = sum(weights)
    for i, w in enumerate(weights, start=1):
        assert got.get(f"e{i}", 0.0) == pytest.approx(w / total, abs=TOLERANCE)


def test_a_weight_of_1000_against_1_almost_always_wins() -> None:
    got = shares(weighted_profile(1000, 1))
    # expected share of the light endpoint: 1/1001 ≈ 0.001, i.e. about 20 of 20,000
    assert got["e1"] > 0.995
    assert 0 < got.get("e2", 0.0) < 0.003


@pytest.mark.parametrize(
    ("offline", "weights", "expected"),
    [
        ((1,), (1, 1, 1), {"e2": 0.5, "e3": 0.5}),
        ((2,), (1000, 1000, 1), {"e1": 1000 / 1001, "e3": 1 / 1001}),
        ((1, 2), (5, 5, 1), {"e3": 1.0}),
    ],
)
def test_only_available_endpoints_are_ever_chosen(offline, weights, expected) -> None:
    profile = weighted_profile(*weights)
    got = shares(profile, dict.fromkeys(offline, OFFLINE))
    assert set(got) == set(expected)
    for name, share in expected.items():
        assert got[name] == pytest.approx(share, abs=TOLERANCE)


def test_forced_down_and_draining_endpoints_are_never_chosen() -> None:
    e1, e2, e3 = weighted_profile(1, 1, 1).endpoints
    profile = make_profile(
        "web",
        Method.WEIGHTED,
        replace(e1, override=Override(OverrideState.DRAIN)),
        replace(e2, override=Override(OverrideState.DOWN)),
        e3,
    )
    assert set(shares(profile, n=500)) == {"e3"}


@pytest.mark.parametrize("seed", [1, 2, 1234])
def test_one_endpoint_is_always_chosen(seed: int) -> None:
    profile = weighted_profile(7)
    decision = weighted.select(candidates(profile), CTX, RandomDraw(Random(seed)))
    assert [e.name for e in decision.endpoints] == ["e1"]
    assert decision.scope == 0


def test_the_same_seed_gives_the_same_sequence() -> None:
    c = candidates(weighted_profile(1, 2, 3))
    first, second = RandomDraw(Random(42)), RandomDraw(Random(42))
    a = [weighted.select(c, CTX, first).endpoints[0].id for _ in range(200)]
    b = [weighted.select(c, CTX, second).endpoints[0].id for _ in range(200)]
    assert a == b


def test_nothing_available_is_nodata() -> None:
    c = candidates(weighted_profile(1, 1), {1: OFFLINE, 2: OFFLINE})
    assert weighted.select(c, CTX, RandomDraw(Random(5))).endpoints == ()


# Weight 0 is standby (Route 53): never answered while an endpoint with a
# weight is available, answered equally when none is.


def test_a_standby_endpoint_is_never_answered_while_a_weighted_one_is_up() -> None:
    got = shares(weighted_profile(3, 0, 1, 0))
    assert set(got) == {"e1", "e3"}
    assert got["e1"] == pytest.approx(0.75, abs=TOLERANCE)


def test_standby_endpoints_share_the_answers_once_every_weighted_one_is_down() -> None:
    profile = weighted_profile(3, 0, 1, 0)
    got = shares(profile, {1: OFFLINE, 3: OFFLINE})
    assert set(got) == {"e2", "e4"}
    assert got["e2"] == pytest.approx(0.5, abs=TOLERANCE)
    decision = weighted.select(
        candidates(profile, {1: OFFLINE, 3: OFFLINE}), CTX, RandomDraw(Random(1))
    )
    assert decision.why == (
        "standby draw among 2 (no endpoint with a weight available)"
    )


def test_srv_lists_standby_targets_one_priority_later() -> None:
    """A SIP client walks to the standby targets by itself when the weighted
    ones fail (RFC 3263); with every weighted one down they take its place."""
    profile = weighted_profile(3, 0, 1)
    listed, _ = weighted.srv(candidates(profile), CTX, RandomDraw(Random(1)))
    assert [(c.endpoint.name, c.priority, c.weight) for c in listed] == [
        ("e1", 10, 3),
        ("e3", 10, 1),
        ("e2", 20, 0),
    ]
    down = candidates(profile, {1: OFFLINE, 3: OFFLINE})
    listed, _ = weighted.srv(down, CTX, RandomDraw(Random(1)))
    assert [(c.endpoint.name, c.priority, c.weight) for c in listed] == [("e2", 10, 0)]
