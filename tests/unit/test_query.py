"""QueryContext and GeoFacts (app/domain/query.py): what routing knows about
the asker."""

from __future__ import annotations

from ipaddress import ip_address
from random import Random

from app.domain.answer import answer
from app.domain.draw import RandomDraw
from app.domain.model import Config, Method
from app.domain.query import GeoFacts, QueryContext, RType
from app.domain.snapshot import compile_snapshot
from tests.builders import make_endpoint, make_profile, make_zone

CLIENT = ip_address("198.51.100.7")


def test_without_a_geoip_database_a_client_is_nowhere_and_gets_world() -> None:
    """A server started without a GeoIP database knows no client's place, so a
    geographic profile answers everyone from its WORLD endpoint, with an ECS
    scope of 0: the answer holds for every client."""
    ctx = QueryContext(CLIENT, 32)
    assert ctx.geo() is None
    profile = make_profile(
        "geo",
        Method.GEOGRAPHIC,
        make_endpoint("fr", "192.0.2.1", geo=("FR",), id=1),
        make_endpoint("world", "192.0.2.2", geo=("WORLD",), priority=2, id=2),
    )
    snapshot = compile_snapshot(Config((make_zone(profile),)), {}, 1, 0.0)
    result = answer(snapshot, "geo.tm.example.", RType.A, ctx, RandomDraw(Random(1)))
    assert [str(r.rdata) for r in result.answer] == ["192.0.2.2"]
    assert result.scope == 0


def test_a_located_client_has_the_place_a_geographic_answer_depends_on() -> None:
    """Two networks with the same continent, country and subdivision are one
    place, whatever their coordinates or network lengths."""
    paris = GeoFacts("EU", "FR", "FR-IDF", 48.86, 2.35, prefix=22)
    versailles = GeoFacts("EU", "FR", "FR-IDF", 48.80, 2.13, prefix=16)
    assert paris.place == versailles.place == ("EU", "FR", "FR-IDF")
    ctx = QueryContext(CLIENT, 24, locate=lambda client: paris)
    assert ctx.geo() == paris
    assert QueryContext(None, 0, locate=lambda client: paris).geo() is None
