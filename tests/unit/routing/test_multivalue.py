"""Multivalue routing (DESIGN §4): up to max_return available address endpoints,
rotating through them when more are available."""

from __future__ import annotations

from collections import Counter
from random import Random

import pytest

from app.domain.answer import answer
from app.domain.draw import RandomDraw
from app.domain.model import Config, EndpointKind, Method
from app.domain.query import QueryContext, RType
from app.domain.routing import multivalue
from app.domain.snapshot import compile_snapshot
from tests.builders import make_endpoint, make_profile, make_zone
from tests.unit.routing.support import OFFLINE, candidates

CTX = QueryContext()


def pool(count: int, start: int = 1):
    return [
        make_endpoint(f"e{i}", f"192.0.2.{i}", priority=i, id=i)
        for i in range(start, start + count)
    ]


@pytest.mark.parametrize("max_return", range(1, 11))
@pytest.mark.parametrize("available", [1, 2, 3, 5, 10, 12])
def test_returns_min_of_max_return_and_available_distinct_endpoints(
    max_return: int, available: int
) -> None:
    profile = make_profile(
        "mv", Method.MULTIVALUE, *pool(available), max_return=max_return
    )
    c = candidates(profile)
    rng = RandomDraw(Random(1234))
    for _ in range(20):
        picked = multivalue.select(c, CTX, rng).endpoints
        assert len(picked) == min(max_return, available)
        assert len({e.id for e in picked}) == len(picked)


@pytest.mark.parametrize(
    ("count", "max_return"), [(3, 1), (5, 2), (4, 3), (10, 4), (7, 6)]
)
def test_with_more_available_than_max_return_each_is_handed_out_equally(
    count: int, max_return: int
) -> None:
    profile = make_profile("mv", Method.MULTIVALUE, *pool(count), max_return=max_return)
    c = candidates(profile)
    rng, n = RandomDraw(Random(1234)), 20_000
    seen = Counter(
        e.name for _ in range(n) for e in multivalue.select(c, CTX, rng).endpoints
    )
    # each endpoint is in an answer with probability max_return / count; at
    # n = 20,000 its standard deviation is at most 0.0036, so abs 0.015 ≈ 4 sigma
    for i in range(1, count + 1):
        assert seen[f"e{i}"] / n == pytest.approx(max_return / count, abs=0.015)


def test_host_endpoints_are_never_returned() -> None:
    hosts = [
        make_endpoint(
            f"h{i}", None, kind=EndpointKind.HOST, target=f"h{i}.example.", id=10 + i
        )
        for i in range(3)
    ]
    profile = make_profile(
        "mv", Method.MULTIVALUE, hosts[0], *pool(2), hosts[1], hosts[2], max_return=10
    )
    c = candidates(profile)
    rng = RandomDraw(Random(7))
    for _ in range(50):
        kinds = {e.kind for e in multivalue.select(c, CTX, rng).endpoints}
        assert kinds == {EndpointKind.ADDRESS}


def test_only_host_endpoints_is_nodata() -> None:
    host = make_endpoint("h", None, kind=EndpointKind.HOST, target="h.example.", id=1)
    c = candidates(make_profile("mv", Method.MULTIVALUE, host))
    assert multivalue.select(c, CTX, RandomDraw(Random(1))).endpoints == ()


@pytest.mark.parametrize(
    ("offline", "expected"),
    [((1, 2), {"e3", "e4"}), ((2, 3, 4), {"e1"}), ((1, 2, 3, 4), set())],
)
def test_only_available_endpoints_are_returned(offline, expected) -> None:
    profile = make_profile("mv", Method.MULTIVALUE, *pool(4), max_return=3)
    c = candidates(profile, dict.fromkeys(offline, OFFLINE))
    rng = RandomDraw(Random(3))
    union: set[str] = set()
    for _ in range(100):
        picked = {e.name for e in multivalue.select(c, CTX, rng).endpoints}
        assert picked == expected  # fewer available than max_return: all of them
        union |= picked
    assert union == expected


@pytest.mark.parametrize(
    ("rtype", "expected"),
    [
        (RType.A, ["192.0.2.1", "192.0.2.2", "192.0.2.3"]),
        (RType.AAAA, ["2001:db8::1", "2001:db8::2"]),
    ],
)
def test_an_answer_holds_only_the_asked_family(rtype, expected) -> None:
    v6 = [
        make_endpoint(f"s{i}", f"2001:db8::{i}", priority=10 + i, id=10 + i)
        for i in (1, 2)
    ]
    profile = make_profile("mv", Method.MULTIVALUE, *pool(3), *v6, max_return=5)
    snapshot = compile_snapshot(Config((make_zone(profile),)), {}, 1, 0.0)
    result = answer(snapshot, "mv.tm.example.", rtype, CTX, RandomDraw(Random(9)))
    assert sorted(str(r.rdata) for r in result.answer) == expected
