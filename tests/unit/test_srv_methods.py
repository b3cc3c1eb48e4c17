"""SRV answers per routing method (DESIGN §3 table), through answer(): which
targets are listed, with which SRV priorities and weights."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from random import Random

import pytest

from app.domain.answer import Answer, answer
from app.domain.draw import RandomDraw
from app.domain.model import (
    Config,
    EndpointKind,
    Health,
    HealthState,
    Location,
    Method,
    Monitor,
    Profile,
    SrvService,
)
from app.domain.query import GeoFacts, QueryContext, Rcode, RType
from app.domain.snapshot import Snapshot, compile_snapshot
from tests.builders import make_endpoint, make_profile, make_zone
from tests.unit.routing.support import DUBLIN, PARIS, TOKYO, VIRGINIA, ctx_for, locator

TCP = Monitor()
SIP = SrvService("_sip._udp", 5060)
OWNER = "_sip._udp.sbc.tm.example."

LOCATE = locator(
    {
        "198.51.100.0/24": GeoFacts("EU", "FR", "FR-IDF", *PARIS, prefix=22),
        "203.0.113.0/24": GeoFacts("NA", "US", "US-CA", 37.77, -122.42, prefix=24),
        "100.64.0.0/10": GeoFacts("AS", "JP", "JP-13", *TOKYO, prefix=10),
        "2001:db8:de::/48": GeoFacts("EU", "DE", "DE-BY", 48.1, 11.6, prefix=48),
    }
)


def ep(name: str, last: int, **over):
    return make_endpoint(name, f"192.0.2.{last}", id=last, priority=last, **over)


def snapshot_of(profile: Profile, offline: Iterable[int] = (), **config) -> Snapshot:
    health = {i: Health(HealthState.OFFLINE, since=0.0) for i in offline}
    return compile_snapshot(Config((make_zone(profile),), **config), health, 1, 0.0)


def ask_srv(
    snapshot: Snapshot, ctx: QueryContext | None = None, seed: int = 1
) -> Answer:
    return answer(
        snapshot, OWNER, RType.SRV, ctx or QueryContext(), RandomDraw(Random(seed))
    )


def srv(result: Answer) -> list[tuple[str, int, int]]:
    """(target's first label, priority, weight), sorted by priority then name."""
    rows = [
        (r.rdata.target.split(".")[0], r.rdata.priority, r.rdata.weight)
        for r in result.answer
    ]
    return sorted(rows, key=lambda row: (row[1], row[0]))


def profile(method: Method, *endpoints, **over) -> Profile:
    return make_profile("sbc", method, *endpoints, srv=(SIP,), monitor=TCP, **over)


# priority: every available endpoint, each with its own priority


@pytest.mark.parametrize(
    ("offline", "expected"),
    [
        ((), [("a", 1, 1), ("b", 5, 1), ("c", 10, 1)]),
        ((1,), [("b", 5, 1), ("c", 10, 1)]),
        ((1, 5), [("c", 10, 1)]),
        ((5,), [("a", 1, 1), ("c", 10, 1)]),
    ],
)
def test_priority_lists_every_available_endpoint_at_its_priority(offline, expected):
    p = profile(Method.PRIORITY, ep("c", 10), ep("a", 1), ep("b", 5))
    assert srv(ask_srv(snapshot_of(p, offline))) == expected


def test_priority_srv_carries_the_endpoint_weight_and_port() -> None:
    p = profile(Method.PRIORITY, ep("a", 1, weight=20, port=5080), ep("b", 2))
    records = sorted(
        (r.rdata for r in ask_srv(snapshot_of(p)).answer), key=lambda s: s.priority
    )
    assert [(s.priority, s.weight, s.port) for s in records] == [
        (1, 20, 5080),
        (2, 1, 5060),
    ]


# weighted: every available endpoint at one priority, SRV weight = weight


@pytest.mark.parametrize(
    ("offline", "expected"),
    [
        ((), [("a", 10, 5), ("b", 10, 3), ("c", 10, 1)]),
        ((2,), [("a", 10, 5), ("c", 10, 1)]),
        ((1, 3), [("b", 10, 3)]),
    ],
)
def test_weighted_shares_one_priority_and_carries_weights(offline, expected):
    p = profile(
        Method.WEIGHTED,
        ep("a", 1, weight=5),
        ep("b", 2, weight=3),
        ep("c", 3, weight=1),
    )
    for seed in (1, 2, 3):  # no randomness: the client draws by weight itself
        assert srv(ask_srv(snapshot_of(p, offline), seed=seed)) == expected


# multivalue: up to max_return available endpoints, equal priority and weight

FIVE = [ep(n, i) for i, n in enumerate("abcde", start=1)]


@pytest.mark.parametrize("max_return", [1, 2, 3, 5, 10])
@pytest.mark.parametrize("offline", [(), (1, 2), (1, 2, 3, 4)])
def test_multivalue_lists_up_to_max_return_equal_targets(max_return, offline):
    p = profile(Method.MULTIVALUE, *FIVE, max_return=max_return)
    snapshot = snapshot_of(p, offline)
    for seed in range(10):
        rows = srv(ask_srv(snapshot, seed=seed))
        assert len(rows) == min(max_return, 5 - len(offline))
        assert len({name for name, _, _ in rows}) == len(rows)
        assert {(prio, weight) for _, prio, weight in rows} == {(10, 1)}
        assert not {name for name, _, _ in rows} & {FIVE[i - 1].name for i in offline}


def test_multivalue_srv_rotates_through_every_endpoint_evenly() -> None:
    snapshot = snapshot_of(profile(Method.MULTIVALUE, *FIVE, max_return=2))
    n = 5000
    seen = Counter(
        name for seed in range(n) for name, _, _ in srv(ask_srv(snapshot, seed=seed))
    )
    # each endpoint is in an answer with chance 2/5; sd at n = 5,000 is 0.007
    for e in FIVE:
        assert seen[e.name] / n == pytest.approx(0.4, abs=0.035)


def test_multivalue_srv_lists_both_families() -> None:
    six = make_endpoint("six", "2001:db8::6", id=6, priority=6)
    p = profile(Method.MULTIVALUE, ep("a", 1), six, max_return=5)
    result = ask_srv(snapshot_of(p))
    assert [n for n, _, _ in srv(result)] == ["a", "six"]
    assert sorted(str(r.rdata) for r in result.additional) == [
        "192.0.2.1",
        "2001:db8::6",
    ]


# performance: every available endpoint, priority by proximity to the client

DUB = ep("dub", 1, location=Location(*DUBLIN, region="aws:eu-west-1"))
DUB2 = ep("dub2", 2, location=Location(*DUBLIN, region="aws:eu-west-1"))
VA = ep("va", 3, location=Location(*VIRGINIA, region="aws:us-east-1"))
TYO = ep("tyo", 4, location=Location(*TOKYO, region="aws:ap-northeast-1"))
NOWHERE = ep("nowhere", 9)
PERF = profile(Method.PERFORMANCE, NOWHERE, TYO, VA, DUB2, DUB)


@pytest.mark.parametrize(
    ("client", "offline", "expected", "scope"),
    [
        (
            "198.51.100.7",  # Paris: Dublin, then Virginia, then Tokyo
            (),
            [
                ("dub", 1, 1),
                ("dub2", 1, 1),
                ("va", 2, 1),
                ("tyo", 3, 1),
                ("nowhere", 4, 1),
            ],
            22,
        ),
        (
            "198.51.100.7",
            (1, 2),
            [("va", 1, 1), ("tyo", 2, 1), ("nowhere", 3, 1)],
            22,
        ),
        (
            "203.0.113.7",  # SF: Virginia 3,877 km, Dublin 8,177, Tokyo 8,272
            (),
            [
                ("va", 1, 1),
                ("dub", 2, 1),
                ("dub2", 2, 1),
                ("tyo", 3, 1),
                ("nowhere", 4, 1),
            ],
            24,
        ),
        (
            "100.64.0.9",  # Tokyo down: Dublin 9,585 km, Virginia 10,876
            (4,),
            [
                ("dub", 1, 1),
                ("dub2", 1, 1),
                ("va", 2, 1),
                ("nowhere", 3, 1),
            ],
            10,
        ),
    ],
)
def test_performance_ranks_locations_by_distance(client, offline, expected, scope):
    result = ask_srv(snapshot_of(PERF, offline), ctx_for(client, LOCATE))
    assert srv(result) == expected
    assert result.scope == scope


def test_performance_srv_follows_the_latency_table_where_it_covers_the_client():
    rows = (
        (
            "198.51.100.0/24",
            {"aws:ap-northeast-1": 5.0, "aws:eu-west-1": 50.0, "aws:us-east-1": 90.0},
        ),
    )
    result = ask_srv(snapshot_of(PERF, latency=rows), ctx_for("198.51.100.7", LOCATE))
    assert srv(result) == [
        ("tyo", 1, 1),
        ("dub", 2, 1),
        ("dub2", 2, 1),
        ("va", 3, 1),
        ("nowhere", 4, 1),
    ]
    assert result.scope == 24


def test_performance_srv_for_an_unlocated_client_lists_everything_equally() -> None:
    result = ask_srv(snapshot_of(PERF), ctx_for("8.8.8.8", LOCATE))
    assert {prio for _, prio, _ in srv(result)} == {1}
    assert len(result.answer) == 5


# geographic and subnet: the matched endpoint only

GEO = profile(
    Method.GEOGRAPHIC,
    ep("world", 1, geo=("WORLD",)),
    ep("europe", 2, geo=("GEO-EU",)),
    ep("bavaria", 3, geo=("DE-BY",)),
    ep("usa", 4, geo=("US",)),
)


@pytest.mark.parametrize(
    ("client", "offline", "failover", "expected", "scope"),
    [
        ("2001:db8:de::1", (), False, [("bavaria", 1, 1)], 48),
        ("198.51.100.7", (), False, [("europe", 1, 1)], 22),
        ("203.0.113.7", (), False, [("usa", 1, 1)], 24),
        ("100.64.0.9", (), False, [("world", 1, 1)], 10),
        ("8.8.8.8", (), False, [("world", 1, 1)], 0),
        ("2001:db8:de::1", (3,), False, [("bavaria", 1, 1)], 48),  # served anyway
        ("2001:db8:de::1", (3,), True, [("europe", 1, 1)], 48),
    ],
)
def test_geographic_srv_lists_the_matched_endpoint_only(
    client, offline, failover, expected, scope
) -> None:
    p = replace(GEO, geo_failover=failover)
    result = ask_srv(snapshot_of(p, offline), ctx_for(client, LOCATE))
    assert srv(result) == expected
    assert result.scope == scope


def test_geographic_srv_without_a_match_is_nodata() -> None:
    p = profile(Method.GEOGRAPHIC, ep("usa", 4, geo=("US",)))
    result = ask_srv(snapshot_of(p), ctx_for("198.51.100.7", LOCATE))
    assert result.rcode is Rcode.NOERROR and result.answer == ()
    assert [r.rtype for r in result.authority] == [RType.SOA]


SUBNET = profile(
    Method.SUBNET,
    ep("lab", 1, subnets=("10.1.0.0/16",)),
    ep("office", 2, subnets=("10.0.0.5-10.0.0.9", "2001:db8:1::/48")),
    ep("rest", 3),
)


@pytest.mark.parametrize(
    ("client", "offline", "expected", "scope"),
    [
        ("10.1.2.3", (), [("lab", 1, 1)], 16),
        ("10.0.0.8", (), [("office", 1, 1)], 31),
        ("2001:db8:1::9", (), [("office", 1, 1)], 48),
        ("192.0.2.200", (), [("rest", 1, 1)], 1),
        ("10.1.2.3", (1,), [("rest", 1, 1)], None),  # unavailable match: fallback
    ],
)
def test_subnet_srv_lists_the_matched_endpoint_only(client, offline, expected, scope):
    result = ask_srv(snapshot_of(SUBNET, offline), ctx_for(client))
    assert srv(result) == expected
    if scope is not None:
        assert result.scope == scope


def test_subnet_srv_without_a_match_or_fallback_is_nodata() -> None:
    p = profile(Method.SUBNET, ep("lab", 1, subnets=("10.1.0.0/16",)))
    result = ask_srv(snapshot_of(p), ctx_for("10.2.0.1"))
    assert result.rcode is Rcode.NOERROR and result.answer == ()


# what every method shares


@pytest.mark.parametrize("method", list(Method))
def test_targets_are_in_zone_names_with_their_addresses_in_additional(method):
    p = profile(
        method,
        ep("a", 1, geo=("WORLD",), location=Location(*DUBLIN)),
        make_endpoint(
            "b",
            "2001:db8::2",
            id=2,
            priority=2,
            geo=("GEO-EU",),
            location=Location(*VIRGINIA),
        ),
        ttl=45,
    )
    result = ask_srv(snapshot_of(p), ctx_for("198.51.100.7", LOCATE))
    assert result.answer, method
    targets = {r.rdata.target for r in result.answer}
    assert targets <= {"a.sbc.tm.example.", "b.sbc.tm.example."}
    assert {r.name for r in result.additional} == targets
    assert {r.ttl for r in result.answer + result.additional} == {45}
    assert {r.name for r in result.answer} == {OWNER}
    assert {r.rdata.port for r in result.answer} == {5060}


@pytest.mark.parametrize(
    "method", [Method.PRIORITY, Method.WEIGHTED, Method.GEOGRAPHIC, Method.SUBNET]
)
def test_a_host_endpoint_is_listed_by_its_own_host_name(method) -> None:
    host = make_endpoint(
        "carrier",
        None,
        kind=EndpointKind.HOST,
        target="sbc.carrier.example.",
        id=7,
        priority=1,
        geo=("WORLD",),
    )
    result = ask_srv(snapshot_of(profile(method, host)), ctx_for("10.0.0.1", LOCATE))
    assert [r.rdata.target for r in result.answer] == ["sbc.carrier.example."]
    assert result.additional == ()
