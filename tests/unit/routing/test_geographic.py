"""Geographic routing (DESIGN §4): the endpoint owning the client's most specific
geo code (subdivision, country, continent, WORLD). The match is served whatever
its health unless geo_failover; a disabled endpoint is not mapped."""

from __future__ import annotations

from dataclasses import replace
from random import Random

import pytest

from app.domain.answer import answer
from app.domain.draw import RandomDraw
from app.domain.model import (
    Config,
    Health,
    HealthState,
    Method,
    Monitor,
    Override,
    OverrideState,
)
from app.domain.query import GeoFacts, RType
from app.domain.routing import geographic
from app.domain.snapshot import compile_snapshot
from tests.builders import make_endpoint, make_profile, make_zone
from tests.unit.routing.support import OFFLINE, candidates, ctx_for, locator

WORLD = make_endpoint("world", "192.0.2.1", priority=1, id=1, geo=("WORLD",))
EUROPE = make_endpoint("europe", "192.0.2.2", priority=2, id=2, geo=("GEO-EU",))
GERMANY = make_endpoint("germany", "192.0.2.3", priority=3, id=3, geo=("DE", "AT"))
BAVARIA = make_endpoint("bavaria", "192.0.2.4", priority=4, id=4, geo=("DE-BY",))
USA = make_endpoint("usa", "192.0.2.5", priority=5, id=5, geo=("US",))
CALIFORNIA = make_endpoint("california", "192.0.2.6", priority=6, id=6, geo=("US-CA",))
AMERICA = make_endpoint("america", "192.0.2.7", priority=7, id=7, geo=("GEO-NA",))
SAMOA = make_endpoint("samoa", "192.0.2.8", priority=8, id=8, geo=("AS",))
ALL = (WORLD, EUROPE, GERMANY, BAVARIA, USA, CALIFORNIA, AMERICA, SAMOA)

LOCATE = locator(
    {
        "198.51.100.0/24": GeoFacts("EU", "DE", "DE-BY", 48.14, 11.58),  # Munich
        "198.51.101.0/24": GeoFacts("EU", "DE", "DE-BE", 52.52, 13.40),  # Berlin
        "198.51.102.0/23": GeoFacts("EU", "FR", "FR-IDF", 48.86, 2.35),  # Paris
        "203.0.113.0/25": GeoFacts("NA", "US", "US-CA", 37.77, -122.42),  # SF
        "203.0.113.128/25": GeoFacts("NA", "US", "US-NY", 40.71, -74.0),  # NYC
        "192.0.2.0/24": GeoFacts("NA", "CA", "CA-ON", 43.65, -79.38),  # Toronto
        "100.64.0.0/10": GeoFacts("AS", "JP", "JP-13", 35.68, 139.69),  # Tokyo
        "2001:db8:de::/48": GeoFacts("EU", "DE", None, 51.0, 10.0, prefix=48),
        "2001:db8:a5::/48": GeoFacts("OC", "AS", None, -14.3, -170.7),  # Samoa
        "10.20.0.0/16": GeoFacts("EU", "AT", "AT-9", 48.2, 16.37),  # Vienna
        "10.30.0.0/16": GeoFacts(None, None, None, None, None),  # known nothing
    }
)


def decide(*endpoints, client, states=None, **profile_over):
    profile = make_profile("geo", Method.GEOGRAPHIC, *endpoints, **profile_over)
    return geographic.select(
        candidates(profile, states), ctx_for(client, LOCATE), RandomDraw(Random(1))
    )


@pytest.mark.parametrize(
    ("client", "expected", "scope"),
    [
        ("198.51.100.7", "bavaria", 24),  # subdivision
        ("198.51.101.7", "germany", 24),  # country (DE-BE has no endpoint)
        ("10.20.3.4", "germany", 16),  # second code of the same endpoint
        ("198.51.103.1", "europe", 23),  # continent
        ("203.0.113.9", "california", 25),
        ("203.0.113.200", "usa", 25),
        ("192.0.2.77", "america", 24),  # Canada: continent NA
        ("100.100.0.1", "world", 10),  # Asia: only WORLD
        ("2001:db8:de::5", "germany", 48),
        ("2001:db8:a5::1", "samoa", 48),  # the country AS, American Samoa
        ("10.30.0.1", "world", 16),  # located, but no codes known
        ("8.8.8.8", "world", 0),  # location unknown: only WORLD matches
        ("2001:db8:ffff::1", "world", 0),
    ],
)
def test_the_most_specific_code_wins(client, expected, scope) -> None:
    decision = decide(*ALL, client=client)
    assert [e.name for e in decision.endpoints] == [expected]
    assert decision.scope == scope


@pytest.mark.parametrize("order", [ALL, tuple(reversed(ALL))])
def test_specificity_not_configuration_order_decides(order) -> None:
    assert [e.name for e in decide(*order, client="198.51.100.1").endpoints] == [
        "bavaria"
    ]


def test_a_continent_is_not_confused_with_a_country_of_the_same_letters() -> None:
    # "AS" is American Samoa; Asia is "GEO-AS"
    decision = decide(WORLD, SAMOA, client="100.100.0.1")
    assert [e.name for e in decision.endpoints] == ["world"]
    asia = make_endpoint("asia", "192.0.2.9", priority=9, id=9, geo=("GEO-AS",))
    decision = decide(WORLD, SAMOA, asia, client="100.100.0.1")
    assert [e.name for e in decision.endpoints] == ["asia"]


@pytest.mark.parametrize(
    "client", ["100.100.0.1", "8.8.8.8", "198.51.103.1", "2001:db8:ffff::1"]
)
def test_no_match_is_nodata(client) -> None:
    decision = decide(GERMANY, BAVARIA, USA, client=client)
    assert decision.endpoints == ()


def test_without_a_client_address_only_world_matches() -> None:
    profile = make_profile("geo", Method.GEOGRAPHIC, *ALL)
    decision = geographic.select(
        candidates(profile), ctx_for(None, LOCATE), RandomDraw(Random(1))
    )
    assert [e.name for e in decision.endpoints] == ["world"]
    assert decision.scope == 0


@pytest.mark.parametrize(
    ("offline", "expected"),
    [
        ((4,), "bavaria"),
        ((4, 3), "bavaria"),
        ((4, 3, 2, 1), "bavaria"),
        ((3,), "bavaria"),
    ],
)
def test_the_match_is_served_whatever_its_health_by_default(offline, expected):
    decision = decide(
        *ALL, client="198.51.100.1", states=dict.fromkeys(offline, OFFLINE)
    )
    assert [e.name for e in decision.endpoints] == [expected]


@pytest.mark.parametrize(
    ("offline", "expected"),
    [
        ((), ["bavaria"]),
        ((4,), ["germany"]),
        ((4, 3), ["europe"]),
        ((4, 3, 2), ["world"]),
        ((3,), ["bavaria"]),
        ((4, 3, 2, 1), []),  # nothing available up the hierarchy: NODATA
    ],
)
def test_geo_failover_walks_up_past_unavailable_matches(offline, expected) -> None:
    decision = decide(
        *ALL,
        client="198.51.100.1",
        states=dict.fromkeys(offline, OFFLINE),
        geo_failover=True,
    )
    assert [e.name for e in decision.endpoints] == expected


@pytest.mark.parametrize("failover", [False, True])
@pytest.mark.parametrize(
    "held",
    [
        replace(BAVARIA, enabled=False),
        replace(BAVARIA, override=Override(OverrideState.DOWN, "maintenance")),
        replace(BAVARIA, override=Override(OverrideState.DRAIN, "upgrade")),
    ],
    ids=["disabled", "forced-down", "draining"],
)
def test_a_disabled_or_held_back_endpoint_is_not_mapped(held, failover) -> None:
    decision = decide(
        WORLD, EUROPE, GERMANY, held, client="198.51.100.1", geo_failover=failover
    )
    assert [e.name for e in decision.endpoints] == ["germany"]


def test_a_disabled_endpoint_leaves_its_clients_unmatched_without_a_parent() -> None:
    decision = decide(replace(BAVARIA, enabled=False), USA, client="198.51.100.1")
    assert decision.endpoints == ()


# Through answer(): health comes from the snapshot, the scope is capped by ECS.

TCP = Monitor()


@pytest.mark.parametrize(
    ("geo_failover", "offline", "expected"),
    [
        (False, (), ["192.0.2.4"]),
        (False, (4,), ["192.0.2.4"]),  # Azure: served although offline
        (True, (4,), ["192.0.2.3"]),
        (True, (4, 3, 2), ["192.0.2.1"]),
    ],
)
def test_through_answer(geo_failover, offline, expected) -> None:
    profile = make_profile(
        "geo",
        Method.GEOGRAPHIC,
        *ALL,
        monitor=TCP,
        geo_failover=geo_failover,
    )
    health = {i: Health(HealthState.OFFLINE, since=0.0) for i in offline}
    snapshot = compile_snapshot(Config((make_zone(profile),)), health, 1, 0.0)
    result = answer(
        snapshot,
        "geo.tm.example.",
        RType.A,
        ctx_for("198.51.100.0", LOCATE, prefix=24),
        RandomDraw(Random(1)),
    )
    assert [str(r.rdata) for r in result.answer] == expected
    assert result.scope == 24
