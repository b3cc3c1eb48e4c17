"""Replies shared between client blocks of one GeoIP place (app.dns.prefixcache):
a geographic name asked from many networks of one country is decided once, each
network still gets its own ECS scope, exactly as the full path gives it; other
places, address-decided methods and nested profiles keep their own rules."""

from __future__ import annotations

from collections.abc import Iterator
from random import Random

import dns.edns
import dns.message
import pytest

from app.dns.handler import make_handler
from app.dns.wirecache import WireCache
from app.domain.model import Config, EndpointKind, Method, SrvService
from app.domain.snapshot import compile_snapshot
from app.domain.variants import decided_by_place
from app.geoip import GeoIp
from tests.builders import make_endpoint, make_profile, make_zone
from tests.support.mmdb import Place, write_city_db

FRANCE = Place("EU", "FR", None, 48.86, 2.35)
CITY = {
    "198.51.100.0/24": FRANCE,
    "198.51.102.0/23": FRANCE,  # another network, the same place
    "203.0.113.0/25": FRANCE,
    "203.0.113.128/25": Place("NA", "US", "CA", 37.77, -122.42),
    "2001:db8::/32": FRANCE,
}
SIP = (SrvService("_sip._udp", 5060),)
ZONE = make_zone(
    make_profile(
        "geo",
        Method.GEOGRAPHIC,
        make_endpoint("fr", "192.0.2.31", geo=("FR",), id=31),
        make_endpoint("world", "192.0.2.34", geo=("WORLD",), priority=2, id=34),
        srv=SIP,
    ),
    make_profile(
        "perf",
        Method.PERFORMANCE,
        make_endpoint("p1", "192.0.2.61", id=61),
        make_endpoint("p2", "192.0.2.62", priority=2, id=62),
    ),
    make_profile(
        "mix",
        Method.WEIGHTED,
        make_endpoint("to-geo", None, kind=EndpointKind.NESTED, child="geo", id=91),
        make_endpoint("plain", "192.0.2.93", priority=2, id=93),
    ),
    make_profile(
        "mixed-up",
        Method.PRIORITY,
        make_endpoint("to-perf", None, kind=EndpointKind.NESTED, child="perf", id=95),
    ),
)
SNAPSHOT = compile_snapshot(Config((ZONE,)), {}, 3, 0.0)


@pytest.fixture(scope="module")
def geo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GeoIp]:
    path = write_city_db(tmp_path_factory.mktemp("geo") / "city.mmdb", CITY)
    reader = GeoIp(path)
    yield reader
    reader.close()


def query(name: str, ecs: tuple[str, int], rtype: str = "A") -> bytes:
    option = dns.edns.ECSOption(*ecs)
    wire = dns.message.make_query(
        f"{name}.tm.example.", rtype, use_edns=0, options=[option]
    )
    wire.id = 99
    return wire.to_wire()


def scope(reply: bytes | None) -> int:
    assert reply is not None
    return dns.message.from_wire(reply).options[0].scopelen


def test_which_names_are_decided_by_place_alone() -> None:
    assert decided_by_place(SNAPSHOT, "geo.tm.example.")
    assert decided_by_place(SNAPSHOT, "_sip._udp.geo.tm.example.")
    assert decided_by_place(SNAPSHOT, "mix.tm.example.")  # weighted over geo
    assert not decided_by_place(SNAPSHOT, "perf.tm.example.")  # by address
    assert not decided_by_place(SNAPSHOT, "mixed-up.tm.example.")
    assert not decided_by_place(SNAPSHOT, "nothing.tm.example.")


@pytest.mark.parametrize("name", ["geo", "mix"])
@pytest.mark.parametrize("rtype", ["A", "AAAA", "SRV"])
def test_networks_of_one_place_share_a_decision_but_keep_their_scope(
    geo: GeoIp, name: str, rtype: str
) -> None:
    if rtype == "SRV":
        name = f"_sip._udp.{name}"
    cache = WireCache(SNAPSHOT, geo.locate, geo.version)
    full = make_handler(lambda: SNAPSHOT, Random(1), lambda: 0.0, geo.locate, False)
    rng = Random(3)
    clients = [
        ("198.51.100.0", 24),
        ("198.51.102.0", 24),  # inside the /23: scope 23
        ("198.51.103.0", 24),  # the same /23 again: stored, not shared
        ("203.0.113.0", 24),  # a /25 network: decided past what ECS tells
        ("203.0.113.128", 25),  # the United States
        ("198.51.100.0", 16),  # a short prefix: the answer says 16 at most
        ("2001:db8:1::", 48),
    ]
    for _ in range(2):
        for ecs in clients:
            wire = query(name, ecs, rtype)
            if name.endswith("mix"):
                fast_seen = {cache.reply(wire, ("127.0.0.1", 53), True, rng)}
                fast_seen |= {
                    cache.reply(wire, ("127.0.0.1", 53), True, rng) for _ in range(40)
                }
                full_seen = {full(wire, ("127.0.0.1", 53), True) for _ in range(40)}
                assert fast_seen == full_seen, ecs
                continue
            fast = cache.reply(wire, ("127.0.0.1", 53), True, rng)
            assert fast == full(wire, ("127.0.0.1", 53), True), ecs


def test_each_network_gets_its_own_scope_and_each_place_its_own_answer(
    geo: GeoIp,
) -> None:
    cache, rng = WireCache(SNAPSHOT, geo.locate, geo.version), Random(1)
    paris = cache.reply(query("geo", ("198.51.100.0", 24)), ("::1", 53), True, rng)
    other = cache.reply(query("geo", ("198.51.102.0", 24)), ("::1", 53), True, rng)
    usa = cache.reply(query("geo", ("203.0.113.128", 25)), ("::1", 53), True, rng)
    assert (scope(paris), scope(other), scope(usa)) == (24, 23, 25)

    def address(reply: bytes | None) -> str:
        assert reply is not None
        return dns.message.from_wire(reply).answer[0][0].to_text()

    assert address(paris) == address(other) == "192.0.2.31"
    assert address(usa) == "192.0.2.34"
    assert len(cache.by_prefix._placed) == 2  # France and the United States
