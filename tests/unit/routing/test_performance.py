"""Performance routing (DESIGN §4): the available endpoints at the location
closest to the client, by the operator's latency table where it covers the
client, else by great-circle distance from the GeoIP position; spread evenly
and deterministically per client subnet; a location with nothing available
passes its clients on to the next closest."""

from __future__ import annotations

from collections import Counter
from ipaddress import IPv4Address, IPv6Address
from random import Random

import pytest

from app.domain.draw import RandomDraw
from app.domain.latency import LatencyEntry, LatencyTable
from app.domain.model import Location, Method
from app.domain.query import GeoFacts
from app.domain.ranges import parse_range
from app.domain.routing import performance
from tests.builders import make_endpoint, make_profile
from tests.unit.routing.support import (
    DUBLIN,
    OFFLINE,
    PARIS,
    TOKYO,
    VIRGINIA,
    candidates,
    ctx_for,
    locator,
)

AT_DUBLIN = Location(*DUBLIN, region="aws:eu-west-1")
AT_VIRGINIA = Location(*VIRGINIA, region="aws:us-east-1")
AT_TOKYO = Location(*TOKYO, region="aws:ap-northeast-1")

DUB = make_endpoint("dub", "192.0.2.1", priority=1, id=1, location=AT_DUBLIN)
VA = make_endpoint("va", "192.0.2.2", priority=2, id=2, location=AT_VIRGINIA)
TYO = make_endpoint("tyo", "192.0.2.3", priority=3, id=3, location=AT_TOKYO)
NOWHERE = make_endpoint("nowhere", "192.0.2.9", priority=9, id=9)
DUB2 = make_endpoint("dub2", "192.0.2.11", priority=11, id=11, location=AT_DUBLIN)
DUB3 = make_endpoint("dub3", "192.0.2.12", priority=12, id=12, location=AT_DUBLIN)

LOCATE = locator(
    {
        "198.51.100.0/24": GeoFacts("EU", "FR", "FR-IDF", *PARIS, prefix=20),
        "198.18.0.0/24": GeoFacts("EU", "FR", "FR-IDF", *PARIS, prefix=20),
        "203.0.113.0/24": GeoFacts("NA", "US", "US-NY", 40.71, -74.0),  # New York
        "100.64.0.0/10": GeoFacts("AS", "JP", "JP-27", 34.69, 135.50),  # Osaka
        "10.0.0.0/8": GeoFacts("EU", "FR", None, *PARIS),  # many client /24s
        "2001:db8::/32": GeoFacts("EU", "FR", None, *PARIS),
        "172.16.0.0/12": GeoFacts("EU", None, None, None, None),  # no coordinates
    }
)

LATENCY = LatencyTable(
    (
        LatencyEntry(
            parse_range("192.0.2.0/24"),
            {"aws:eu-west-1": 10.0, "aws:us-east-1": 80.0, "aws:ap-northeast-1": 250.0},
        ),
        LatencyEntry(
            parse_range("198.51.0.0/16"),
            {"aws:eu-west-1": 90.0, "aws:us-east-1": 20.0, "aws:ap-northeast-1": 150.0},
        ),
        LatencyEntry(  # nested inside the /16: more specific, so it wins
            parse_range("198.51.100.128/25"),
            {"aws:eu-west-1": 70.0, "aws:us-east-1": 60.0, "aws:ap-northeast-1": 5.0},
        ),
        LatencyEntry(
            parse_range("2001:db8:77::/48"),
            {"aws:us-east-1": 30.0, "aws:eu-west-1": 31.0},
        ),
    )
)


def decide(*endpoints, client, states=None, latency=None, prefix=None):
    profile = make_profile("perf", Method.PERFORMANCE, *endpoints)
    c = candidates(profile, states, latency=latency)
    return performance.select(
        c, ctx_for(client, LOCATE, prefix=prefix), RandomDraw(Random(1))
    )


@pytest.mark.parametrize(
    ("client", "expected", "scope"),
    [
        ("192.0.2.77", "dub", 24),  # the entry's own block
        ("198.51.7.1", "va", 18),  # 198.51.0.0/18 is clear of the nested /25
        ("198.51.200.1", "va", 17),
        ("198.51.100.1", "va", 25),  # in the /16, next to the nested /25
        ("198.51.100.200", "tyo", 25),  # the nested /25 wins over the /16
        ("2001:db8:77::1", "va", 48),
    ],
)
def test_the_latency_table_picks_the_lowest_rtt_location(client, expected, scope):
    decision = decide(DUB, VA, TYO, NOWHERE, client=client, latency=LATENCY)
    assert [e.name for e in decision.endpoints] == [expected]
    assert decision.scope == scope


def test_the_latency_table_overrides_geography() -> None:
    # 198.51.100.0/24 is Paris by GeoIP, but the table says Virginia is faster
    by_distance = decide(DUB, VA, TYO, client="198.51.100.1")
    by_table = decide(DUB, VA, TYO, client="198.51.100.1", latency=LATENCY)
    assert [e.name for e in by_distance.endpoints] == ["dub"]
    assert [e.name for e in by_table.endpoints] == ["va"]


@pytest.mark.parametrize(
    ("client", "offline", "expected"),
    [
        ("192.0.2.77", (1,), "va"),  # next lowest RTT
        ("192.0.2.77", (1, 2), "tyo"),
        ("192.0.2.77", (1, 2, 3), "nowhere"),  # no location: ranks last
        ("198.51.100.200", (3,), "va"),
        ("2001:db8:77::1", (2,), "dub"),
    ],
)
def test_a_location_with_nothing_available_passes_clients_on_by_rtt(
    client, offline, expected
) -> None:
    decision = decide(
        NOWHERE,
        DUB,
        VA,
        TYO,
        client=client,
        latency=LATENCY,
        states=dict.fromkeys(offline, OFFLINE),
    )
    assert [e.name for e in decision.endpoints] == [expected]


@pytest.mark.parametrize(
    "order", [(NOWHERE, TYO), (TYO, NOWHERE)], ids=["unlocated-first", "located-first"]
)
def test_with_the_table_an_endpoint_without_a_location_still_ranks_last(order):
    # 2001:db8:77::/48 lists only Virginia and Dublin, both down: Tokyo has a
    # location (just no measurement) and must come before an unlocated endpoint
    decision = decide(
        *order,
        DUB,
        VA,
        client="2001:db8:77::1",
        latency=LATENCY,
        states={1: OFFLINE, 2: OFFLINE},
    )
    assert [e.name for e in decision.endpoints] == ["tyo"]


@pytest.mark.parametrize(
    ("client", "expected", "scope"),
    [
        ("198.18.0.1", "dub", 20),  # Paris → Dublin, not Virginia
        ("203.0.113.5", "va", 24),  # New York → Virginia
        ("100.64.1.1", "tyo", 10),  # Osaka → Tokyo
        # GeoIP says 2001:db8::/32, but 2001:db8:77::/48 is in the table: the
        # answer holds for the /42 around the client that is clear of it
        ("2001:db8::1", "dub", 42),
    ],
)
def test_without_a_table_entry_the_closest_location_by_distance_wins(
    client, expected, scope
) -> None:
    # the table exists but does not cover these clients
    decision = decide(NOWHERE, VA, TYO, DUB, client=client, latency=LATENCY)
    assert [e.name for e in decision.endpoints] == [expected]
    assert decision.scope == scope


def test_a_tie_in_the_table_is_broken_by_distance_within_the_geoip_network() -> None:
    tied = LatencyTable(
        (
            LatencyEntry(
                parse_range("198.51.0.0/16"),
                {"aws:eu-west-1": 20.0, "aws:us-east-1": 20.0},
            ),
        )
    )
    decision = decide(DUB, VA, client="198.51.100.1", latency=tied)  # Paris
    assert [e.name for e in decision.endpoints] == ["dub"]
    assert decision.scope == 20  # the GeoIP network, not the whole /16


def test_an_unlocated_client_is_scoped_to_its_geoip_network() -> None:
    def unknown(_client: object) -> GeoFacts:
        return GeoFacts(prefix=13)  # the database has no record for this /13

    profile = make_profile("perf", Method.PERFORMANCE, DUB, VA)
    ctx = ctx_for("8.8.8.8", unknown)
    decision = performance.select(candidates(profile), ctx, RandomDraw(Random(1)))
    assert decision.scope == 24  # spread per /24 inside the /13
    srv_like = performance.ranked_locations(candidates(profile), (DUB,), ctx)
    assert srv_like[2] == 13


@pytest.mark.parametrize(
    ("offline", "expected"),
    [
        ((), "dub"),
        ((1,), "va"),  # Paris: Virginia (≈6,200 km) before Tokyo (≈9,700 km)
        ((1, 2), "tyo"),
        ((1, 2, 3), "nowhere"),  # endpoints without a location rank last
    ],
)
def test_a_location_with_nothing_available_passes_clients_to_the_next_closest(
    offline, expected
) -> None:
    decision = decide(
        NOWHERE,
        TYO,
        VA,
        DUB,
        client="198.51.100.1",
        states=dict.fromkeys(offline, OFFLINE),
    )
    assert [e.name for e in decision.endpoints] == [expected]


def test_several_endpoints_at_one_location_keep_one_per_client_24() -> None:
    group = (DUB, DUB2, DUB3)
    for third in range(0, 256, 7):
        answers = {
            decide(*group, VA, client=f"10.1.{third}.{host}").endpoints[0].name
            for host in (0, 1, 77, 128, 255)
        }
        assert len(answers) == 1, f"10.1.{third}.0/24 got {answers}"
        decision = decide(*group, VA, client=f"10.1.{third}.9")
        assert decision.scope == 24  # the answer depends on the client /24


def test_the_per_subnet_choice_does_not_depend_on_the_random_draw() -> None:
    profile = make_profile("perf", Method.PERFORMANCE, DUB, DUB2, DUB3)
    c = candidates(profile)
    ctx = ctx_for("10.9.8.7", LOCATE)
    picks = {
        performance.select(c, ctx, RandomDraw(Random(seed))).endpoints[0].id
        for seed in range(50)
    }
    assert len(picks) == 1


@pytest.mark.parametrize("size", [2, 3, 4])
def test_across_many_client_24s_the_group_shares_clients_evenly(size: int) -> None:
    group = (
        DUB,
        DUB2,
        DUB3,
        make_endpoint("dub4", "192.0.2.13", id=13, location=AT_DUBLIN),
    )[:size]
    rng = Random(1234)
    n = 3000
    clients = {
        IPv4Address((10 << 24) | (rng.randrange(1 << 16) << 8) | 1) for _ in range(n)
    }
    seen = Counter(
        decide(*group, VA, client=str(client)).endpoints[0].name for client in clients
    )
    assert set(seen) == {e.name for e in group}
    for e in group:
        # about 3,000 distinct /24s: a share's binomial standard deviation is
        # under 0.01, so ±0.05 allows 5 sigma
        assert seen[e.name] / len(clients) == pytest.approx(1 / size, abs=0.05)


def test_ipv6_clients_keep_one_endpoint_per_56() -> None:
    group = (DUB, DUB2, DUB3)
    base = int(IPv6Address("2001:db8:0:100::"))
    for k in range(40):
        net = base + (k << 72)  # step by one /56
        answers = {
            decide(*group, client=str(IPv6Address(net + host))).endpoints[0].name
            for host in (0, 1, 1 << 60, (1 << 72) - 1)
        }
        assert len(answers) == 1
    assert decide(*group, client="2001:db8::5").scope == 56


def test_an_unlocated_client_is_spread_among_every_available_endpoint() -> None:
    # 8.0.0.0/8 is unknown to the GeoIP stand-in and not in the table
    rng = Random(99)
    clients = [f"8.{rng.randrange(256)}.{rng.randrange(256)}.1" for _ in range(600)]
    seen = Counter(
        decide(DUB, VA, TYO, NOWHERE, client=c, states={3: OFFLINE}).endpoints[0].name
        for c in clients
    )
    assert set(seen) == {"dub", "va", "nowhere"}


def test_a_client_located_without_coordinates_is_spread_too() -> None:
    decision = decide(DUB, VA, client="172.16.5.5")
    assert decision.endpoints[0].name in {"dub", "va"}
    assert decision.scope == 24


def test_without_a_client_address_an_available_endpoint_is_still_answered() -> None:
    decision = decide(DUB, VA, client=None, states={1: OFFLINE})
    assert [e.name for e in decision.endpoints] == ["va"]
    assert decision.scope == 0


def test_nothing_available_is_nodata() -> None:
    decision = decide(DUB, VA, client="198.51.100.1", states={1: OFFLINE, 2: OFFLINE})
    assert decision.endpoints == ()
