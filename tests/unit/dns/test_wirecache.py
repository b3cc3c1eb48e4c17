"""The fast path's own checks (app.dns.wirecache): a packet that is not a plain
query is turned away before any lookup and gets exactly the full path's reply,
FORMERR where the decoder finds it malformed; and the store of pre-encoded
replies stays within its bound while every question is still answered."""

from __future__ import annotations

from random import Random

import dns.edns
import dns.message
import dns.rcode
import pytest

from app.dns import wirecache
from app.dns.handler import make_handler
from app.dns.replies import NO_EDNS
from app.dns.wire import parse_query
from app.dns.wirecache import WireCache, plain_query
from app.domain.query import GeoFacts
from tests.unit.dns.support import ADDRESSES, SNAPSHOT

PEER = ("198.51.100.7", 5300)


def nowhere(_address: object) -> GeoFacts | None:
    return None  # no GeoIP database: no name here routes by place anyway


def query(name: str = "a.tm.example.", edns: bool = False) -> bytes:
    made = dns.message.make_query(name, "A", use_edns=0 if edns else None)
    made.id = 0xBEEF
    return made.to_wire()


def with_opt_rdata(rdata: bytes) -> bytes:
    """A query with EDNS whose OPT record carries `rdata` as given."""
    wire = query(edns=True)  # the OPT comes last, with RDLENGTH 0
    return wire[:-2] + len(rdata).to_bytes(2, "big") + rdata


PACKETS = {
    # A query cut short inside its name, as a broken middlebox might pass it.
    "name cut short": (query()[:20], dns.rcode.FORMERR),
    # An option header of two octets where four are needed.
    "option cut short": (with_opt_rdata(b"\x00\x08"), dns.rcode.FORMERR),
    # Octets after the OPT record: the decoder reads the counted records and
    # answers; the fast path leaves such a packet to it.
    "octets after the opt": (query(edns=True) + b"\x00\x00", dns.rcode.NOERROR),
}


@pytest.mark.parametrize("packet", sorted(PACKETS))
def test_what_is_no_plain_query_gets_the_full_paths_reply(packet: str) -> None:
    """Each is turned away by the fast check (no stored reply is patched for
    it) and the handler sends what the full path sends, with the asker's ID."""
    wire, rcode = PACKETS[packet]
    assert (
        WireCache(SNAPSHOT, nowhere, lambda: 0).reply(wire, PEER, True, Random(1))
        is None
    )
    fast = make_handler(lambda: SNAPSHOT, Random(1), lambda: 0.0, nowhere)
    full = make_handler(lambda: SNAPSHOT, Random(1), lambda: 0.0, nowhere, fast=False)
    reply = fast(wire, PEER, True)
    assert reply is not None and reply == full(wire, PEER, True)
    parsed = dns.message.from_wire(reply)
    assert (parsed.id, parsed.rcode()) == (0xBEEF, rcode)


def test_past_max_entries_questions_are_answered_but_not_stored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The store of per-question replies is bounded: once full, a new
    question is encoded for each query (byte for byte the full path's reply)
    but not kept, and the questions stored before keep their replies."""
    monkeypatch.setattr(wirecache, "MAX_ENTRIES", 2)
    cache = WireCache(SNAPSHOT, nowhere, lambda: 0)
    full = make_handler(lambda: SNAPSHOT, Random(1), lambda: 0.0, nowhere, fast=False)
    for _round in range(2):
        for name, address in ADDRESSES.items():
            wire = query(f"{name}.tm.example.")
            reply = cache.reply(wire, PEER, True, Random(1))
            assert reply is not None and reply == full(wire, PEER, True)
            answer = dns.message.from_wire(reply).answer
            assert [rd.to_text() for rd in answer[0]] == [address]
    assert cache.remembered == 2


def mutated(wire: bytes, rng: Random) -> bytes:
    """`wire` with one to three octets changed, dropped or added."""
    out = bytearray(wire)
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(out) + 1)
        roll = rng.random()
        if roll < 0.6 and at < len(out):
            out[at] = rng.choice((0, 1, 2, 8, 10, 0x29, 0x3F, 0x40, 0xC0, 0xFF))
        elif roll < 0.8 and at < len(out):
            del out[at]
        else:
            out.insert(at, rng.randrange(256))
    return bytes(out)


def test_the_fast_check_accepts_only_what_the_decoder_accepts() -> None:
    """The fast path answers without the decoder, so it must never take a
    packet the decoder calls malformed (that one is owed a FORMERR): over a
    seeded set of mutated queries, every packet plain_query accepts decodes,
    to the same question, EDNS kind, payload size and ECS."""
    options: list[list[dns.edns.Option]] = [
        [dns.edns.ECSOption("10.1.0.0", 16)],
        [dns.edns.CookieOption(b"client01", b"")],
        [
            dns.edns.GenericOption(dns.edns.OptionType.NSID, b""),
            dns.edns.GenericOption(dns.edns.OptionType.KEEPALIVE, b""),
        ],
    ]
    bases = [query(), query(edns=True)] + [
        dns.message.make_query(
            "b.tm.example.", "AAAA", use_edns=0, options=listed
        ).to_wire()
        for listed in options
    ]
    rng, accepted = Random(2026), 0
    for _ in range(50_000):
        wire = mutated(rng.choice(bases), rng)
        parsed = plain_query(wire)
        if parsed is None:
            continue
        accepted += 1
        decoded = parse_query(wire)  # raises Malformed where the two disagree
        (name, qtype, kind), _, payload, ecs, _ = parsed
        labels = b"".join(bytes((len(x),)) + x.lower() for x in decoded.labels)
        assert (name, qtype) == (labels + b"\x00", decoded.qtype)
        assert (kind == NO_EDNS) == (decoded.edns is None)
        if decoded.edns is not None:  # read from the remembered ending alike
            assert payload == decoded.edns.payload
            assert ecs == (decoded.edns.ecs.data if decoded.edns.ecs else None)
    assert accepted > 5_000  # many mutations leave a plain query
