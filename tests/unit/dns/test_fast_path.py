"""The fast path (pre-encoded replies) and the full codec give the same bytes,
for a corpus covering every method, EDNS on and off, ECS, odd letter case,
SRV with additional records, NXDOMAIN, NODATA, REFUSED and truncation."""

import os
from dataclasses import replace
from ipaddress import ip_address
from random import Random

import dns.edns
import dns.flags
import dns.message
import dns.name
import dns.rcode
import pytest

from app.dns import negatives, wirecache
from app.dns.cookies import CookieSecrets
from app.dns.handler import make_handler
from app.dns.wirecache import WireCache
from app.domain.model import (
    Config,
    EndpointKind,
    Health,
    HealthState,
    Location,
    Method,
    Monitor,
    MonitorProtocol,
    SrvService,
)
from app.domain.query import GeoFacts
from app.domain.snapshot import compile_snapshot
from tests.builders import make_endpoint, make_profile, make_zone

SIP = (SrvService("_sip._udp", 5060),)
MULTI = tuple(
    make_endpoint(f"m{i}", f"127.0.2.{i}", priority=i, id=20 + i) for i in range(1, 5)
)
BIG = tuple(
    make_endpoint(
        f"endpoint-with-a-long-name-{i:02}", f"127.0.6.{i}", priority=i + 1, id=100 + i
    )
    for i in range(40)
)
WEIGHTED = tuple(
    make_endpoint(f"w{i}", f"127.0.1.{i}", priority=i, weight=w, id=10 + i)
    for i, w in ((1, 50), (2, 30), (3, 20))
)
ZONE = make_zone(
    make_profile(
        "prio",
        Method.PRIORITY,
        make_endpoint("a", "127.0.0.1", id=1),
        make_endpoint("b", "::1", priority=2, id=2),
        srv=SIP,
    ),
    make_profile("weigh", Method.WEIGHTED, *WEIGHTED, srv=SIP),
    make_profile("multi", Method.MULTIVALUE, *MULTI, max_return=2, srv=SIP),
    make_profile(
        "geo",
        Method.GEOGRAPHIC,
        make_endpoint("eu", "127.0.3.1", geo=("GEO-EU",), id=31),
        make_endpoint("rest", "127.0.3.2", priority=2, geo=("WORLD",), id=32),
    ),
    make_profile(
        "net",
        Method.SUBNET,
        make_endpoint("lan", "127.0.4.1", subnets=("10.0.0.0/8",), id=41),
        make_endpoint("other", "127.0.4.2", priority=2, id=42),
    ),
    make_profile(
        "perf",
        Method.PERFORMANCE,
        make_endpoint("dub", "127.0.5.1", location=Location(53.3, -6.3), id=51),
    ),
    make_profile(
        "cdn",
        Method.PRIORITY,
        make_endpoint(
            "c", None, kind=EndpointKind.HOST, target="edge.cdn.example.", id=61
        ),
    ),
    make_profile("big", Method.WEIGHTED, *BIG, srv=SIP),
    glue=(("ns1.tm.example.", ip_address("127.0.0.53")),),
)
SNAPSHOT = compile_snapshot(Config((ZONE,)), {}, 9, 0.0)
PEER = ("198.51.100.7", 5300)
TCP = Monitor(protocol=MonitorProtocol.TCP, port=9)


def locate(_address: object) -> GeoFacts:
    return GeoFacts("EU", "FR", None, 48.9, 2.3, 16)


def handlers(seed: int):
    fast = make_handler(lambda: SNAPSHOT, Random(seed), lambda: 0.0, locate)
    full = make_handler(lambda: SNAPSHOT, Random(seed), lambda: 0.0, locate, fast=False)
    return fast, full


NAMES = [
    "prio",
    "weigh",
    "multi",
    "geo",
    "net",
    "perf",
    "cdn",
    "big",
    "a.prio",
    "_sip._udp.prio",
    "_sip._udp.weigh",
    "_sip._udp.multi",
    "_sip._udp.big",
    "_udp.prio",
    "",
    "ns1",
    "nothing",
]
TYPES = ["A", "AAAA", "SRV", "SOA", "NS", "ANY", "TXT", "CNAME"]
EDNS = [None, (0, 512), (0, 1232), (0, 4096), ("do", 1232)]


def queries() -> list[bytes]:
    corpus = []
    for name in NAMES:
        fqdn = f"{name}.tm.example." if name else "tm.example."
        for rtype in TYPES:
            for edns in EDNS:
                for spelled in (fqdn, fqdn.upper(), fqdn.title()):
                    if edns is None:
                        q = dns.message.make_query(spelled, rtype)
                    else:
                        q = dns.message.make_query(
                            spelled,
                            rtype,
                            use_edns=0,
                            payload=edns[1],
                            want_dnssec=edns[0] == "do",
                        )
                    q.id = 4242
                    corpus.append(q.to_wire())
    for extra in ("www.example.com.", "xtm.example."):
        corpus.append(dns.message.make_query(extra, "A").to_wire())
    ecs = dns.message.make_query(
        "net.tm.example.", "A", use_edns=0, options=[dns.edns.ECSOption("10.1.0.0", 16)]
    )
    corpus.append(ecs.to_wire())
    with_rd_cd = dns.message.make_query("prio.tm.example.", "A")
    with_rd_cd.flags |= dns.flags.CD
    corpus.append(with_rd_cd.to_wire())
    return corpus


CORPUS = queries()
# The corpus is about 8,000 (query, transport) cases; every run checks a
# seeded sample of them (all under `make fuzz`, which sets the count to 0).
CORPUS_SAMPLE = int(os.environ.get("TMDNS_CORPUS_SAMPLE", "400"))
CORPUS_SEED = int(os.environ.get("TMDNS_CORPUS_SEED", "20261201"))


def corpus_cases() -> list[tuple[bytes, bool]]:
    cases = [(wire, udp) for wire in CORPUS for udp in (True, False)]
    if 0 < CORPUS_SAMPLE < len(cases):
        cases = Random(CORPUS_SEED).sample(cases, CORPUS_SAMPLE)
    return cases


def test_fast_and_full_paths_give_the_same_bytes() -> None:
    """The fast path answers as the full path does, byte for byte where the
    answer is certain, and with the same set of possible replies where a
    method draws at random: over a seeded sample of the corpus."""
    for wire, udp in corpus_cases():
        fast, full = handlers(7)
        first = full(wire, PEER, udp)
        if first == full(wire, PEER, udp) == full(wire, PEER, udp):
            assert fast(wire, PEER, udp) == first, (wire, udp)  # byte-identical
            continue
        # A random method: the same replies are possible on both paths.
        fast_seen = {fast(wire, PEER, udp) for _ in range(300)}
        full_seen = {full(wire, PEER, udp) for _ in range(300)}
        assert fast_seen == full_seen, (wire, udp)


def test_plain_queries_are_served_by_the_fast_path() -> None:
    cache = WireCache(SNAPSHOT, locate, lambda: 0)
    rng = Random(1)
    for name, rtype in [
        ("prio", "A"),
        ("weigh", "A"),
        ("multi", "A"),
        ("_sip._udp.prio", "SRV"),
        ("tm.example.", "SOA"),
    ]:
        fqdn = name if name.endswith(".") else f"{name}.tm.example."
        wire = dns.message.make_query(fqdn.upper(), rtype, use_edns=0).to_wire()
        reply = cache.reply(wire, PEER, True, rng)
        assert reply is not None, name
        parsed = dns.message.from_wire(reply)
        assert parsed.question[0].name.to_text() == fqdn.upper()
        assert parsed.id == dns.message.from_wire(wire).id


@pytest.mark.parametrize(
    ("name", "rtype", "options", "why"),
    [
        ("prio", "AXFR", None, "zone transfers are REFUSED"),
        ("net", "A", [dns.edns.GenericOption(10, b"12345")], "a 5-octet COOKIE"),
        (
            "net",
            "A",
            [dns.edns.ECSOption("10.1.0.0", 16), dns.edns.ECSOption("10.2.0.0", 16)],
            "two ECS options",
        ),
    ],
)
def test_what_the_fast_path_leaves_to_the_full_path(
    name: str, rtype: str, options: list | None, why: str
) -> None:
    wire = dns.message.make_query(
        f"{name}.tm.example.", rtype, use_edns=0 if options else None, options=options
    ).to_wire()
    cache = WireCache(SNAPSHOT, locate, lambda: 0)
    assert cache.reply(wire, PEER, True, Random(1)) is None, why


def test_weighted_fast_answers_follow_the_weights() -> None:
    cache, rng = WireCache(SNAPSHOT, locate, lambda: 0), Random(99)
    wire = dns.message.make_query("weigh.tm.example.", "A").to_wire()
    counts: dict[str, int] = {}
    for _ in range(20_000):
        answer = dns.message.from_wire(cache.reply(wire, PEER, True, rng)).answer[0][0]
        counts[answer.to_text()] = counts.get(answer.to_text(), 0) + 1
    for address, share in (("127.0.1.1", 0.5), ("127.0.1.2", 0.3), ("127.0.1.3", 0.2)):
        assert counts[address] / 20_000 == pytest.approx(share, abs=0.015)


def test_standby_endpoints_are_answered_on_the_fast_path_only_when_needed() -> None:
    """Weight 0 is standby: the pre-encoded replies never hand it out while a
    weighted endpoint is up, and share the answers among the standby ones
    once none is."""
    live = make_endpoint("live", "127.0.7.1", weight=5, id=71, monitor=TCP)
    spares = [
        make_endpoint(
            f"spare{i}", f"127.0.7.{i + 1}", priority=i + 1, weight=0, id=71 + i
        )
        for i in (1, 2)
    ]
    zone = make_zone(make_profile("pool", Method.WEIGHTED, live, *spares, monitor=TCP))
    wire = dns.message.make_query("pool.tm.example.", "A").to_wire()

    def answered(health: dict[int, Health]) -> dict[str, int]:
        cache = WireCache(
            compile_snapshot(Config((zone,)), health, 1, 0.0), locate, lambda: 0
        )
        rng, counts = Random(5), {}
        for _ in range(4000):
            reply = dns.message.from_wire(cache.reply(wire, PEER, True, rng))
            address = reply.answer[0][0].to_text()
            counts[address] = counts.get(address, 0) + 1
        return counts

    up = Health(HealthState.ONLINE, 0.0)
    assert answered({71: up, 72: up, 73: up}) == {"127.0.7.1": 4000}
    down = Health(HealthState.OFFLINE, 0.0)
    standby = answered({71: down, 72: up, 73: up})
    assert set(standby) == {"127.0.7.2", "127.0.7.3"}
    assert standby["127.0.7.2"] / 4000 == pytest.approx(0.5, abs=0.04)


def test_a_new_snapshot_gets_fresh_replies() -> None:
    changed = compile_snapshot(Config((replace(ZONE, negative_ttl=30),)), {}, 10, 0.0)
    current = [SNAPSHOT]
    handle = make_handler(lambda: current[0], Random(1), lambda: 0.0, locate)
    wire = dns.message.make_query("tm.example.", "SOA").to_wire()
    before = dns.message.from_wire(handle(wire, PEER, True)).answer[0][0].serial
    current[0] = changed
    after = dns.message.from_wire(handle(wire, PEER, True)).answer[0][0].serial
    assert (before, after) == (9, 10)


@pytest.mark.parametrize(
    "data",
    [
        b"\x00\x03\x08\x00\x0a",  # unknown family
        b"\x00\x01\x07\x00\x0b",  # a bit set past the /7
        b"\x00\x01\x21\x00" + bytes(5),  # /33
        b"\x00\x01\x08\x00\x0a\x00",  # an address octet too many
        b"\x00\x01\x08",  # shorter than family, prefixes
    ],
)
def test_malformed_client_subnet_is_left_to_the_full_decoder(data: bytes) -> None:
    options = [dns.edns.GenericOption(8, data)]
    wire = dns.message.make_query("net.tm.example.", "A", use_edns=0, options=options)
    packet = wire.to_wire()
    assert (
        WireCache(SNAPSHOT, locate, lambda: 0).reply(packet, PEER, True, Random(1))
        is None
    )
    fast, _ = handlers(1)
    assert dns.message.from_wire(fast(packet, PEER, True)).rcode() == dns.rcode.FORMERR


def _random_query(rng: Random) -> bytes:
    """A name nobody configured: under the zone, under an existing name, or in
    no zone at all; any case, with or without EDNS, DO or ECS."""
    label = "".join(
        rng.choice("abcdefghijklmnopqrstuvwxyz0123456789-_")
        for _ in range(rng.randint(1, 20))
    )
    label = label.strip("-") or "x"
    under = rng.choice(
        [
            "tm.example.",
            "prio.tm.example.",
            "a.prio.tm.example.",
            "_udp.prio.tm.example.",
            "example.org.",
            ".",
        ]
    )
    name = f"{label}.{under}" if under != "." else f"{label}."
    if rng.random() < 0.3:
        name = f"{label}-{rng.randrange(10**6)}.{name}"
    name = "".join(c.upper() if rng.random() < 0.3 else c for c in name)
    rtype = rng.choice(["A", "AAAA", "SRV", "TXT", "ANY", "SOA"])
    kind = rng.choice(["none", "edns", "do", "ecs"])
    if kind == "none":
        query = dns.message.make_query(name, rtype)
    else:
        options = [dns.edns.ECSOption("198.51.100.0", 24)] if kind == "ecs" else []
        query = dns.message.make_query(
            name, rtype, use_edns=0, want_dnssec=kind == "do", options=options
        )
    query.id = rng.randrange(1 << 16)
    return query.to_wire()


def test_random_names_get_the_full_paths_bytes_and_fill_no_cache() -> None:
    """A random-name flood costs no more than a cached answer: every
    NXDOMAIN and REFUSED comes from one reply per zone, byte for byte what
    the full path sends, and no name is remembered. Seeded, 3,000 names."""
    rng = Random(20261201)
    fast = make_handler(lambda: SNAPSHOT, Random(1), lambda: 0.0, locate)
    full = make_handler(lambda: SNAPSHOT, Random(1), lambda: 0.0, locate, fast=False)
    cache = WireCache(SNAPSHOT, locate, lambda: 0)
    answered = 0
    for _ in range(3000):
        wire = _random_query(rng)
        assert fast(wire, PEER, True) == full(wire, PEER, True), wire
        if cache.reply(wire, PEER, True, Random(1)) is not None:
            answered += 1
    assert answered == 3000  # none left to the full path
    assert cache.remembered == 0
    assert cache.questions_seen == 0


def test_random_names_past_every_bound_still_get_the_full_paths_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What the fast path remembers of a flood (each parent name's zone, each
    way a query ends after its name) is bounded: with tiny bounds, names
    under many parents and queries ending in many ways are still answered
    byte for byte as the full path answers them, and nothing grows past."""
    monkeypatch.setattr(negatives, "MAX_PARENTS", 3)
    monkeypatch.setattr(wirecache, "MAX_ENDINGS", 3)
    for table in wirecache._ENDINGS_BY_ARCOUNT:  # what earlier tests left
        table.clear()
    rng = Random(20261204)
    fast = make_handler(lambda: SNAPSHOT, Random(1), lambda: 0.0, locate)
    full = make_handler(lambda: SNAPSHOT, Random(1), lambda: 0.0, locate, fast=False)
    cache = WireCache(SNAPSHOT, locate, lambda: 0)
    for i in range(600):
        wire = _random_query(rng)
        assert fast(wire, PEER, True) == full(wire, PEER, True), wire
        assert cache.reply(wire, PEER, True, Random(1)) == full(wire, PEER, True)
        assert len(cache.negatives._parents) <= 3, i
        assert all(len(table) <= 3 for table in wirecache._ENDINGS_BY_ARCOUNT)


@pytest.mark.parametrize(
    "labels",
    [
        (b"a.b",),  # a dot in a label: "a\\.b" in text, never the name a.b
        (b"a b",),
        (b"\x07x",),
        (b"x", b"\xff\xfe"),  # the odd octet in the parent's label
        (b"x", b"a.prio"),
    ],
    ids=["dot", "space", "control", "parent high octets", "parent dot"],
)
def test_names_with_octets_the_text_form_escapes_take_the_full_path(
    labels: tuple[bytes, ...],
) -> None:
    """Such a name is left to the full path, which decides how its text form
    matches, and the reply is the full path's either way."""
    name = dns.name.Name((*labels, b"tm", b"example", b""))
    wire = dns.message.make_query(name, "A", use_edns=0).to_wire()
    cache = WireCache(SNAPSHOT, locate, lambda: 0)
    assert cache.reply(wire, PEER, True, Random(1)) is None
    fast, full = handlers(1)
    assert fast(wire, PEER, True) == full(wire, PEER, True)


def test_the_memo_of_repeated_queries_stays_bounded_and_exact(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Resolvers randomise letter case (0x20), so one name arrives as many
    different queries: each is answered as the full path answers it, and the
    memo that lets repeats skip parsing never holds more than its bound."""
    monkeypatch.setattr(wirecache, "MAX_QUESTIONS", 50)
    rng = Random(7)
    fast = make_handler(lambda: SNAPSHOT, Random(1), lambda: 0.0, locate)
    full = make_handler(lambda: SNAPSHOT, Random(1), lambda: 0.0, locate, fast=False)
    cache = WireCache(SNAPSHOT, locate, lambda: 0)
    for _ in range(400):
        name = "".join(
            c.upper() if rng.random() < 0.5 else c for c in "prio.tm.example."
        )
        query = dns.message.make_query(name, "A", use_edns=0)
        query.id = rng.randrange(1 << 16)
        wire = query.to_wire()
        assert fast(wire, PEER, True) == full(wire, PEER, True)
        assert cache.reply(wire, PEER, True, Random(1)) == full(wire, PEER, True)
        assert cache.questions_seen <= 50
    assert cache.remembered == 1


ASKING = {
    "nsid": [dns.edns.GenericOption(3, b"")],
    "cookie": [dns.edns.CookieOption(b"client01", b"")],
    "stale cookie": [dns.edns.CookieOption(b"client01", bytes(16))],
    "keepalive": [dns.edns.GenericOption(11, b"")],
    "keepalive with a value": [dns.edns.GenericOption(11, b"\x00\x64")],
    "unknown option": [dns.edns.GenericOption(65001, b"xyz")],
    "ECS, NSID and cookie": [
        dns.edns.ECSOption("10.1.0.0", 16),
        dns.edns.GenericOption(3, b""),
        dns.edns.CookieOption(b"client02", b""),
    ],
}


@pytest.mark.parametrize("asks", sorted(ASKING))
@pytest.mark.parametrize("udp", [True, False], ids=["udp", "tcp"])
def test_nsid_cookies_and_keepalive_get_the_full_paths_bytes_fast(
    asks: str, udp: bool
) -> None:
    """Resolvers such as BIND send a COOKIE with every query: those queries,
    and NSID and keepalive ones, are answered from stored replies with our
    options added, byte for byte as the full path answers them."""
    options = {"nsid": b"dns-eu-1", "cookies": CookieSecrets(bytes(range(16)))}
    clock = lambda: 1_800_000_000.5  # noqa: E731
    fast = make_handler(lambda: SNAPSHOT, Random(1), clock, locate, **options)
    full = make_handler(
        lambda: SNAPSHOT, Random(1), clock, locate, fast=False, **options
    )
    cache = WireCache(SNAPSHOT, locate, lambda: 0)
    for name in ("prio", "net", "nothing-here", "_sip._udp.prio"):
        rtype = "SRV" if name.startswith("_") else "A"
        query = dns.message.make_query(
            f"{name}.tm.example.", rtype, use_edns=0, options=ASKING[asks]
        )
        wire = query.to_wire()
        assert fast(wire, PEER, udp) == full(wire, PEER, udp), name
        extras = fast._extras  # type: ignore[attr-defined]
        served = cache.reply(wire, PEER, udp, Random(1), extras)
        assert (served is None) == (asks == "keepalive with a value" and not udp)
