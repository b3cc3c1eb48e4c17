"""The fast path for client-dependent names (app.dns.prefixcache) gives what the
full path gives, for geographic, subnet, performance and nested profiles, with
and without ECS, many client addresses and prefixes, IPv4 and IPv6; a reply
cached for one client block is never served to another; a new GeoIP database
drops the cache. Locations come from a real MaxMind DB file read by GeoIp."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from ipaddress import ip_address
from pathlib import Path
from random import Random

import dns.edns
import dns.message
import pytest

from app.dns.handler import make_handler
from app.dns.prefixcache import PrefixCache
from app.dns.wirecache import WireCache, plain_query
from app.domain.model import (
    AllDown,
    Config,
    EndpointKind,
    Health,
    HealthState,
    Location,
    Method,
    Monitor,
    SrvService,
)
from app.domain.snapshot import compile_snapshot
from app.geoip import GeoIp
from tests.builders import make_endpoint, make_profile, make_zone
from tests.support.mmdb import Place, write_city_db

SIP = (SrvService("_sip._udp", 5060),)
CITY = {
    "198.51.100.0/24": Place("EU", "FR", None, 48.86, 2.35),  # Paris
    "198.51.101.0/25": Place("EU", "DE", "BY", 48.14, 11.58),  # Munich
    "198.51.102.0/24": Place("NA", "US", "NY", 40.71, -74.0),  # New York
    "203.0.113.0/24": Place("NA", "US", "CA", 37.77, -122.42),  # San Francisco
    "100.64.0.0/10": Place("AS", "JP", None, 35.68, 139.69),  # Tokyo
    "10.0.0.0/8": Place("EU", "IE", None, 53.35, -6.26),  # Dublin
    "2001:db8::/32": Place("EU", "FR", None, 48.86, 2.35),
    "2001:db8:77::/48": Place("NA", "US", "NY", 40.71, -74.0),
}
DUBLIN = Location(53.35, -6.26, region="aws:eu-west-1")
VIRGINIA = Location(39.0, -77.5, region="aws:us-east-1")
TOKYO = Location(35.68, 139.69, region="aws:ap-northeast-1")
LATENCY = (
    ("198.51.100.128/25", {"aws:ap-northeast-1": 5.0, "aws:us-east-1": 60.0}),
    # a tie, broken by distance: Paris and New York clients of it differ
    ("198.51.0.0/16", {"aws:us-east-1": 20.0, "aws:eu-west-1": 20.0}),
    ("2001:db8:5::/48", {"aws:ap-northeast-1": 10.0}),  # inside GeoIP's France
)


def nested(name: str, child: str, eid: int, **over: object):
    return make_endpoint(
        name, None, kind=EndpointKind.NESTED, child=child, id=eid, **over
    )


ZONE = make_zone(
    make_profile(
        "geo",
        Method.GEOGRAPHIC,
        make_endpoint("fr", "192.0.2.31", geo=("FR",), priority=1, id=31),
        make_endpoint("by", "192.0.2.32", geo=("DE-BY",), priority=2, id=32),
        make_endpoint("na", "192.0.2.33", geo=("GEO-NA",), priority=3, id=33),
        make_endpoint("world", "192.0.2.34", geo=("WORLD",), priority=4, id=34),
        make_endpoint("asia6", "2001:db8:ff::35", geo=("GEO-AS",), priority=5, id=35),
        srv=SIP,
    ),
    make_profile(
        "net",
        Method.SUBNET,
        make_endpoint("left", "192.0.2.41", subnets=("10.1.2.0/24",), id=41),
        make_endpoint("right", "192.0.2.42", subnets=("10.1.3.0/24",), id=42),
        make_endpoint("span", "192.0.2.43", subnets=("10.9.0.5-10.9.0.99",), id=43),
        make_endpoint("six", "2001:db8:ff::44", subnets=("2001:db8:1::/48",), id=44),
        make_endpoint("other", "192.0.2.49", priority=9, id=49),
        srv=SIP,
    ),
    make_profile(
        "net6",
        Method.SUBNET,
        make_endpoint("v6", "192.0.2.51", subnets=("2001:db8:1::/48",), id=51),
        make_endpoint("rest", "192.0.2.52", priority=2, id=52),
    ),
    make_profile(
        "perf",
        Method.PERFORMANCE,
        make_endpoint("dub", "192.0.2.61", location=DUBLIN, priority=1, id=61),
        make_endpoint("dub2", "192.0.2.62", location=DUBLIN, priority=2, id=62),
        make_endpoint("va", "192.0.2.63", location=VIRGINIA, priority=3, id=63),
        make_endpoint("tyo", "192.0.2.64", location=TOKYO, priority=4, id=64),
        make_endpoint("tyo6", "2001:db8:ff::65", location=TOKYO, priority=5, id=65),
        make_endpoint("nowhere", "192.0.2.69", priority=9, id=69),
        srv=SIP,
    ),
    make_profile(  # everything down, a fixed fallback: the same for every client
        "down",
        Method.SUBNET,
        make_endpoint("d1", "192.0.2.81", subnets=("10.1.2.0/24",), id=81),
        make_endpoint("d2", "192.0.2.82", priority=2, id=82),
        monitor=Monitor(),
        all_down=AllDown.FALLBACK,
        fallback=ip_address("192.0.2.89"),
    ),
    make_profile(  # a random choice among client-dependent children
        "mix",
        Method.WEIGHTED,
        nested("to-net", "net", 91, weight=2, priority=1),
        nested("to-geo", "geo", 92, weight=1, priority=2),
        make_endpoint("plain", "192.0.2.93", weight=1, priority=3, id=93),
        srv=SIP,
    ),
    make_profile(
        "chain",
        Method.PRIORITY,
        nested("to-perf", "perf", 95, priority=1),
        make_endpoint("direct", "192.0.2.96", priority=2, id=96),
    ),
)
OFFLINE = {i: Health(HealthState.OFFLINE, since=0.0) for i in (81, 82)}
SNAPSHOT = compile_snapshot(Config((ZONE,), latency=LATENCY), OFFLINE, 3, 0.0)

QUESTIONS = [
    (name, rtype)
    for name in ("geo", "net", "net6", "perf", "down", "mix", "chain")
    for rtype in ("A", "AAAA", "TXT")
] + [(f"_sip._udp.{name}", "SRV") for name in ("geo", "net", "perf", "mix")]
RANDOM = {"mix"}  # weighted among children: compare the sets of replies
ECS = [
    ("10.1.2.0", 24),
    ("10.1.3.0", 24),
    ("10.1.2.128", 25),
    ("10.1.0.0", 16),
    ("10.0.0.0", 8),
    ("10.9.0.64", 26),
    ("10.9.0.7", 32),
    ("198.51.100.0", 24),
    ("198.51.100.128", 25),
    ("198.51.101.0", 24),
    ("198.51.102.0", 24),
    ("198.51.103.0", 24),
    ("203.0.113.7", 32),
    ("100.64.0.0", 16),
    ("0.0.0.0", 0),
    ("2001:db8:1::", 48),
    ("2001:db8:1:200::", 56),
    ("2001:db8::", 32),
    ("2001:db8:77::5", 128),
    ("2001:db8:2::", 56),
    ("2001:db8:5::", 48),
    ("::", 0),
]
PEERS = [
    "10.1.2.7",
    "10.1.3.200",
    "10.9.0.50",
    "198.51.100.200",
    "203.0.113.9",
    "127.0.0.1",
    "::ffff:10.1.3.9",
    "2001:db8:1::9",
    "2001:db8:77::1",
]


@pytest.fixture(scope="module")
def geo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GeoIp]:
    path = write_city_db(tmp_path_factory.mktemp("geo") / "city.mmdb", CITY)
    reader = GeoIp(path)
    yield reader
    reader.close()


def query(
    name: str, rtype: str, ecs: tuple[str, int] | None, edns: bool = True
) -> bytes:
    options = [dns.edns.ECSOption(*ecs)] if ecs else []
    fqdn = f"{name}.tm.example.".upper()[:3] + f"{name}.tm.example."[3:]
    q = dns.message.make_query(
        fqdn, rtype, use_edns=0 if edns else None, options=options
    )
    q.id = 4321
    return q.to_wire()


def corpus() -> list[tuple[str, bytes, str]]:
    """(question name, query, peer) for every client shape; shuffled so that
    replies stored for one client are looked up by the others."""
    cases = [
        (name, query(name, rtype, ecs, edns), peer)
        for name, rtype in QUESTIONS
        for ecs, edns, peers in [(None, False, PEERS), (None, True, PEERS)]
        + [(e, True, PEERS[:2]) for e in ECS]
        for peer in peers
    ]
    random.Random(5).shuffle(cases)
    return cases


def test_fast_and_full_paths_agree_for_every_client(geo: GeoIp) -> None:
    cache = WireCache(SNAPSHOT, geo.locate, geo.version)
    full = make_handler(lambda: SNAPSHOT, Random(1), lambda: 0.0, geo.locate, False)
    rng = Random(2)
    for _round in range(2):  # the first round fills the cache, the second hits
        for name, wire, peer in corpus():
            address = (peer, 5300)
            if name in RANDOM:
                fast_seen = {cache.reply(wire, address, True, rng) for _ in range(60)}
                full_seen = {full(wire, address, True) for _ in range(60)}
                assert fast_seen == full_seen, (dns.message.from_wire(wire), peer)
                continue
            fast = cache.reply(wire, address, True, rng)
            assert fast is not None, (dns.message.from_wire(wire), peer)
            assert fast == full(wire, address, True), (
                dns.message.from_wire(wire),
                peer,
            )
    assert 0 < cache.by_prefix.size < len(corpus())


def test_through_the_handler_over_udp_and_tcp(geo: GeoIp) -> None:
    fast = make_handler(lambda: SNAPSHOT, Random(1), lambda: 0.0, geo.locate)
    full = make_handler(lambda: SNAPSHOT, Random(1), lambda: 0.0, geo.locate, False)
    for name, wire, peer in corpus()[:400]:
        if name in RANDOM:
            continue
        for udp in (True, False):
            assert fast(wire, (peer, 53), udp) == full(wire, (peer, 53), udp)


def addresses(reply: bytes | None) -> list[str]:
    assert reply is not None
    return [
        rd.to_text() for rrset in dns.message.from_wire(reply).answer for rd in rrset
    ]


def test_neighbouring_blocks_never_share_a_reply(geo: GeoIp) -> None:
    cache, rng = WireCache(SNAPSHOT, geo.locate, geo.version), Random(1)
    wire = query("net", "A", None)
    assert addresses(cache.reply(wire, ("10.1.2.1", 53), True, rng)) == ["192.0.2.41"]
    for host in (0, 1, 128, 255):  # the /24 next door has its own endpoint
        right = cache.reply(wire, (f"10.1.3.{host}", 53), True, rng)
        assert addresses(right) == ["192.0.2.42"]
        left = cache.reply(wire, (f"10.1.2.{host}", 53), True, rng)
        assert addresses(left) == ["192.0.2.41"]
    # between the ranges: the fallback, decided by a block clear of both
    assert addresses(cache.reply(wire, ("10.1.4.1", 53), True, rng)) == ["192.0.2.49"]
    assert addresses(cache.reply(wire, ("10.1.1.1", 53), True, rng)) == ["192.0.2.49"]
    # an ECS /23 spanning both ranges: 10.1.2.0 is decided by its /24, more
    # than the ECS option tells, so the reply is given but not stored
    before = cache.by_prefix.size
    wide = query("net", "A", ("10.1.2.0", 23))
    assert addresses(cache.reply(wide, ("10.1.2.1", 53), True, rng)) == ["192.0.2.41"]
    assert cache.by_prefix.size == before
    ecs = dns.message.from_wire(cache.reply(wide, ("10.1.2.1", 53), True, rng))
    assert (ecs.options[0].srclen, ecs.options[0].scopelen) == (23, 23)


def test_scope_zero_is_stored_once_per_family_and_client_prefix(geo: GeoIp) -> None:
    cache, rng = WireCache(SNAPSHOT, geo.locate, geo.version), Random(1)
    full = make_handler(lambda: SNAPSHOT, Random(1), lambda: 0.0, geo.locate, False)
    for name, expected in (("down", ["192.0.2.89"]), ("net6", ["192.0.2.52"])):
        wire = query(name, "A", ("10.1.2.0", 24))
        for peer in PEERS[:5]:
            reply = cache.reply(wire, (peer, 53), True, rng)
            assert addresses(reply) == expected and reply == full(
                wire, (peer, 53), True
            )
            assert dns.message.from_wire(reply).options[0].scopelen == 0
    assert cache.by_prefix.size == 2  # one /0 entry each
    # net6 decides IPv6 clients by their range: not the IPv4 /0 entry
    six = cache.reply(query("net6", "A", ("2001:db8:1::", 48)), ("::1", 53), True, rng)
    assert addresses(six) == ["192.0.2.51"]


def test_a_new_geoip_database_drops_the_cache(tmp_path: Path) -> None:
    path = write_city_db(
        tmp_path / "city.mmdb", {"198.51.100.0/24": CITY["198.51.100.0/24"]}
    )
    now = [0.0]
    geo = GeoIp(path, clock=lambda: now[0])
    cache, rng = WireCache(SNAPSHOT, geo.locate, geo.version), Random(1)
    wire = query("geo", "A", ("198.51.100.0", 24))
    assert addresses(cache.reply(wire, ("127.0.0.1", 53), True, rng)) == ["192.0.2.31"]
    moved = tmp_path / "new.mmdb"
    write_city_db(moved, {"198.51.100.0/24": CITY["203.0.113.0/24"]})
    os.replace(moved, path)
    os.utime(path, (1_000_000, 1_000_000))
    now[0] = 6.0  # past the file check interval; no locate() call needed
    assert addresses(cache.reply(wire, ("127.0.0.1", 53), True, rng)) == ["192.0.2.33"]
    geo.close()


def test_at_the_cap_the_cache_starts_over(geo: GeoIp) -> None:
    cache = PrefixCache(SNAPSHOT, geo.locate, geo.version, limit=3)
    rng = Random(1)
    for third in (2, 3, 4, 0, 8):  # five blocks, each decided within its /24
        wire = query("net", "A", (f"10.1.{third}.0", 24))
        parsed = plain_query(wire)
        assert parsed is not None
        key, _, _, ecs, _ = parsed
        assert cache.pick(wire, key, ecs, "127.0.0.1", rng) is not None
    assert cache.size == 2  # 3 stored, dropped at the 4th, then 2 again


def test_two_random_draws_are_left_to_the_full_path(geo: GeoIp) -> None:
    inner = make_profile(
        "inner",
        Method.WEIGHTED,
        make_endpoint("i1", "192.0.2.101", id=101),
        make_endpoint("i2", "192.0.2.102", priority=2, id=102),
    )
    outer = make_profile(
        "outer",
        Method.WEIGHTED,
        nested("to-inner", "inner", 103, priority=1),
        make_endpoint("o", "192.0.2.104", priority=2, id=104),
    )
    snapshot = compile_snapshot(Config((make_zone(inner, outer),)), {}, 1, 0.0)
    cache = WireCache(snapshot, geo.locate, geo.version)
    wire = query("outer", "A", ("10.1.2.0", 24))
    for _ in range(3):  # not enumerable: never stored, never guessed
        assert cache.reply(wire, ("127.0.0.1", 53), True, Random(1)) is None
    handle = make_handler(lambda: snapshot, Random(1), lambda: 0.0, geo.locate)
    seen = {tuple(addresses(handle(wire, ("127.0.0.1", 53), True))) for _ in range(80)}
    assert seen == {("192.0.2.101",), ("192.0.2.102",), ("192.0.2.104",)}


def test_a_peer_that_is_no_address_gets_the_full_paths_answer(geo: GeoIp) -> None:
    """The kernel always gives an address, but the handler takes any peer
    string: one that is no address cannot be put in a client block, so the
    fast path keeps nothing for it and the full path answers, as for a
    client it knows nothing about (the WORLD endpoint, here)."""
    cache, rng = WireCache(SNAPSHOT, geo.locate, geo.version), Random(1)
    fast = make_handler(lambda: SNAPSHOT, Random(1), lambda: 0.0, geo.locate)
    full = make_handler(lambda: SNAPSHOT, Random(1), lambda: 0.0, geo.locate, False)
    wire, peer = query("geo", "A", None), ("resolver.example", 53)
    assert cache.reply(wire, peer, True, rng) is None
    assert cache.by_prefix.size == 0
    reply = fast(wire, peer, True)
    assert reply == full(wire, peer, True)
    assert addresses(reply) == ["192.0.2.34"]


def test_one_network_for_all_of_ipv4_holds_for_every_ipv4_client(
    tmp_path: Path,
) -> None:
    """A GeoIP database with one network for all of IPv4 (a country-only
    file, say) places every IPv4 client in a /0: the geographic answer
    holds for all of them, is echoed with ECS scope 0 as the full path
    echoes it, and is stored once for the client prefix."""
    path = write_city_db(tmp_path / "one.mmdb", {"0.0.0.0/0": CITY["198.51.100.0/24"]})
    geo = GeoIp(path)
    cache, rng = WireCache(SNAPSHOT, geo.locate, geo.version), Random(1)
    full = make_handler(lambda: SNAPSHOT, Random(1), lambda: 0.0, geo.locate, False)
    try:
        for ecs in (("198.51.100.0", 24), ("203.0.113.0", 24), ("10.1.2.0", 24)):
            wire = query("geo", "A", ecs)
            reply = cache.reply(wire, ("127.0.0.1", 53), True, rng)
            assert reply is not None and reply == full(wire, ("127.0.0.1", 53), True)
            assert addresses(reply) == ["192.0.2.31"]
            assert dns.message.from_wire(reply).options[0].scopelen == 0
        assert cache.by_prefix.size == 1
    finally:
        geo.close()


def test_at_the_cap_replies_shared_by_place_start_over_too(geo: GeoIp) -> None:
    """The replies kept for every block of one GeoIP place are bounded by
    the same cap: with room for one, clients of Paris, New York, Munich and
    Paris again each get what the full path gives them, scope included."""
    cache, rng = WireCache(SNAPSHOT, geo.locate, geo.version), Random(1)
    cache.by_prefix = PrefixCache(SNAPSHOT, geo.locate, geo.version, limit=1)
    full = make_handler(lambda: SNAPSHOT, Random(1), lambda: 0.0, geo.locate, False)
    expected = {
        "198.51.100.0": ["192.0.2.31"],  # FR
        "198.51.102.0": ["192.0.2.33"],  # GEO-NA
        "198.51.101.0": ["192.0.2.32"],  # DE-BY
    }
    for address in (*expected, "198.51.100.0"):
        wire = query("geo", "A", (address, 24))
        reply = cache.reply(wire, ("127.0.0.1", 53), True, rng)
        assert reply == full(wire, ("127.0.0.1", 53), True), address
        assert addresses(reply) == expected[address]
        assert cache.by_prefix.size <= 1
