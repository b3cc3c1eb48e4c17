"""Subnet routing (DESIGN §4): the endpoint whose ranges hold the client; the
endpoint with no ranges is the fallback; no match and no fallback is NODATA.
The ECS scope is the widest block around the client that gets the same answer."""

from __future__ import annotations

from dataclasses import replace
from ipaddress import ip_network
from random import Random

import pytest

from app.domain.answer import answer
from app.domain.draw import RandomDraw
from app.domain.model import Config, Method, Override, OverrideState
from app.domain.query import RType
from app.domain.ranges import parse_range
from app.domain.routing import subnet
from app.domain.snapshot import compile_snapshot
from tests.builders import make_endpoint, make_profile, make_zone
from tests.unit.routing.support import OFFLINE, candidates, ctx_for

CIDR4 = make_endpoint("cidr4", "192.0.2.1", priority=1, id=1, subnets=("10.1.0.0/16",))
SPAN4 = make_endpoint(
    "span4", "192.0.2.2", priority=2, id=2, subnets=("10.0.0.5-10.0.0.9",)
)
CIDR6 = make_endpoint(
    "cidr6", "192.0.2.3", priority=3, id=3, subnets=("2001:db8:1::/48",)
)
SPAN6 = make_endpoint(
    "span6", "192.0.2.4", priority=4, id=4, subnets=("2001:db8:2::10-2001:db8:2::1f",)
)
MULTI = make_endpoint(
    "multi",
    "192.0.2.5",
    priority=5,
    id=5,
    subnets=("172.16.0.0/12", "203.0.113.64/26"),
)
FALLBACK = make_endpoint("fallback", "192.0.2.99", priority=9, id=9)
RANGED = (CIDR4, SPAN4, CIDR6, SPAN6, MULTI)


def decide(*endpoints, client: str | None, states=None, prefix: int | None = None):
    profile = make_profile("sub", Method.SUBNET, *endpoints)
    return subnet.select(
        candidates(profile, states),
        ctx_for(client, prefix=prefix),
        RandomDraw(Random(1)),
    )


@pytest.mark.parametrize(
    ("client", "expected", "scope"),
    [
        ("10.1.2.3", "cidr4", 16),
        ("10.1.0.0", "cidr4", 16),
        ("10.1.255.255", "cidr4", 16),
        ("10.0.0.8", "span4", 31),  # 10.0.0.8/31 (8-9) lies inside 5-9
        ("10.0.0.9", "span4", 31),
        ("10.0.0.6", "span4", 31),  # 10.0.0.6/31 (6-7)
        ("10.0.0.5", "span4", 32),  # 10.0.0.4/31 would include 10.0.0.4
        ("10.0.0.7", "span4", 31),
        ("172.31.255.1", "multi", 12),
        ("203.0.113.100", "multi", 26),
        ("2001:db8:1::1", "cidr6", 48),
        ("2001:db8:1:ffff:ffff:ffff:ffff:ffff", "cidr6", 48),
        ("2001:db8:2::10", "span6", 124),  # ::10-::1f is exactly a /124
        ("2001:db8:2::1f", "span6", 124),
    ],
)
def test_a_client_inside_a_range_gets_that_endpoint_with_the_range_block_scope(
    client, expected, scope
) -> None:
    decision = decide(*RANGED, FALLBACK, client=client)
    assert [e.name for e in decision.endpoints] == [expected]
    assert decision.scope == scope


@pytest.mark.parametrize(
    ("client", "scope"),
    [
        ("10.2.0.1", 15),  # 10.2.0.0/15 is clear; 10.0.0.0/14 holds 10.1.0.0/16
        ("10.0.0.4", 32),  # 10.0.0.4/31 includes 10.0.0.5
        ("10.0.0.10", 31),  # 10.0.0.10/31 is clear; 10.0.0.8/30 is not
        ("10.0.0.0", 30),  # 10.0.0.0/30 (0-3) is clear; /29 holds 5
        ("198.51.100.1", 5),  # 192.0.0.0/5 clear; 192.0.0.0/4 holds 203.0.113.64
        ("9.255.255.255", 7),  # 8.0.0.0/7 clear; 8.0.0.0/6 holds 10.x
        ("2001:db8:3::1", 48),  # 2001:db8:2::/47 holds the span
        ("2001:db8:2::20", 123),  # ::20/123 clear; ::0/122 holds ::10-::1f
        ("2001:db8:2::f", 124),  # ::0/124 (::0-::f) clear; ::0/123 holds ::10
        ("2001:db9::1", 32),  # 2001:db9::/32 clear; 2001:db8::/31 is not
    ],
)
def test_no_match_goes_to_the_fallback_with_a_scope_clear_of_every_range(
    client, scope
) -> None:
    decision = decide(*RANGED, FALLBACK, client=client)
    assert [e.name for e in decision.endpoints] == ["fallback"]
    assert decision.scope == scope
    block = parse_range(str(ip_network(f"{client}/{scope}", strict=False)))
    wider = parse_range(str(ip_network(f"{client}/{scope - 1}", strict=False)))
    every = [parse_range(text) for e in RANGED for text in e.subnets]
    assert not any(block.overlaps(r) for r in every)
    assert any(wider.overlaps(r) for r in every)  # and it is the widest such block


def test_a_client_of_the_other_family_than_every_range_needs_no_scope() -> None:
    decision = decide(CIDR4, SPAN4, FALLBACK, client="2001:db8:9::1")
    assert [e.name for e in decision.endpoints] == ["fallback"]
    assert decision.scope == 0


@pytest.mark.parametrize("client", ["10.9.9.9", "2001:db8:ffff::1", "8.8.8.8"])
def test_no_match_and_no_fallback_is_nodata(client) -> None:
    decision = decide(*RANGED, client=client)
    assert decision.endpoints == ()


@pytest.mark.parametrize(
    "matched",
    [
        {"states": {1: OFFLINE}},
        {"endpoint": replace(CIDR4, enabled=False)},
        {"endpoint": replace(CIDR4, override=Override(OverrideState.DOWN, "x"))},
        {"endpoint": replace(CIDR4, override=Override(OverrideState.DRAIN, "x"))},
    ],
    ids=["offline", "disabled", "forced-down", "draining"],
)
def test_an_unavailable_match_sends_the_client_to_the_fallback(matched) -> None:
    first = matched.get("endpoint", CIDR4)
    decision = decide(
        first, SPAN4, FALLBACK, client="10.1.2.3", states=matched.get("states")
    )
    assert [e.name for e in decision.endpoints] == ["fallback"]
    # whatever the scope, every address in the block must get this same answer
    block = ip_network(f"10.1.2.3/{decision.scope}", strict=False)
    assert block.subnet_of(ip_network("10.1.0.0/16"))


def test_an_unavailable_match_without_fallback_is_nodata() -> None:
    decision = decide(CIDR4, SPAN4, client="10.1.2.3", states={1: OFFLINE})
    assert decision.endpoints == ()


def test_the_lowest_priority_fallback_wins() -> None:
    other = make_endpoint("other", "192.0.2.98", priority=3, id=8)
    decision = decide(CIDR4, FALLBACK, other, client="10.200.0.1")
    assert [e.name for e in decision.endpoints] == ["other"]


def test_an_unavailable_fallback_gives_way_to_another() -> None:
    other = make_endpoint("other", "192.0.2.98", priority=10, id=8)
    decision = decide(CIDR4, FALLBACK, other, client="10.200.0.1", states={9: OFFLINE})
    assert [e.name for e in decision.endpoints] == ["other"]


@pytest.mark.parametrize(
    ("endpoints", "expected"),
    [((*RANGED, FALLBACK), ["fallback"]), (RANGED, [])],
)
def test_without_a_client_address_only_the_fallback_answers(
    endpoints, expected
) -> None:
    decision = decide(*endpoints, client=None)
    assert [e.name for e in decision.endpoints] == expected
    assert decision.scope == 0


@pytest.mark.parametrize(
    ("client", "prefix", "expected", "scope"),
    [
        ("10.1.2.0", 24, "192.0.2.1", 16),
        ("10.1.0.0", 16, "192.0.2.1", 16),
        ("10.0.0.8", 32, "192.0.2.2", 31),
        ("10.0.0.0", 24, "192.0.2.99", 24),  # capped at what the client sent
        ("2001:db8:1::", 56, "192.0.2.3", 48),
        ("10.200.0.0", 24, "192.0.2.99", 9),  # 10.128.0.0/9 is clear
    ],
)
def test_through_answer_the_scope_is_capped_by_the_source_prefix(
    client, prefix, expected, scope
) -> None:
    profile = make_profile("sub", Method.SUBNET, *RANGED, FALLBACK)
    snapshot = compile_snapshot(Config((make_zone(profile),)), {}, 1, 0.0)
    result = answer(
        snapshot,
        "sub.tm.example.",
        RType.A,
        ctx_for(client, prefix=prefix),
        RandomDraw(Random(1)),
    )
    assert [str(r.rdata) for r in result.answer] == [expected]
    assert result.scope == scope


def test_a_nodata_that_depends_on_the_client_carries_its_scope() -> None:
    """Without a fallback, a client outside every range gets NODATA; its scope
    keeps resolvers from handing that NODATA to clients inside a range."""
    profile = make_profile("sub", Method.SUBNET, *RANGED)
    snapshot = compile_snapshot(Config((make_zone(profile),)), {}, 1, 0.0)
    result = answer(
        snapshot,
        "sub.tm.example.",
        RType.A,
        ctx_for("10.200.0.0", prefix=24),
        RandomDraw(Random(1)),
    )
    assert result.answer == ()
    assert result.scope == 9  # 10.128.0.0/9 holds no range
