"""The handler on raw bytes; replies parsed back with dnspython, a separate codec."""

import logging
from random import Random
from typing import Any

import dns.edns
import dns.flags
import dns.message
import dns.rcode
import dns.rdatatype
import maxminddb
import pytest

from app.dns import handler
from app.dns.cookies import CookieSecrets
from app.dns.handler import make_handler
from app.domain.model import Config, Method
from app.domain.snapshot import compile_snapshot
from tests.builders import make_endpoint, make_profile, make_zone

PEER = ("127.0.0.1", 5300)
ZONE = make_zone(
    make_profile(
        "app",
        Method.PRIORITY,
        make_endpoint("a", "127.0.0.1", id=1),
        make_endpoint("b", "127.0.0.2", priority=2, id=2),
    ),
)
SNAPSHOT = compile_snapshot(Config((ZONE,)), {}, 3, 0.0)
HANDLE = make_handler(lambda: SNAPSHOT, Random(1), lambda: 0.0, lambda _ip: None)


def query(name: str, rtype: str = "A", **kw: Any) -> dns.message.Message:
    wire = dns.message.make_query(name, rtype, **kw).to_wire()
    reply = HANDLE(wire, PEER, True)
    assert reply is not None
    return dns.message.from_wire(reply)


def test_answer_is_authoritative_without_recursion_available() -> None:
    reply = query("app.tm.example.")
    assert reply.flags & dns.flags.AA and not reply.flags & dns.flags.RA
    assert reply.answer[0].to_text() == "app.tm.example. 60 IN A 127.0.0.1"


def test_the_question_comes_back_in_the_case_it_was_asked() -> None:
    reply = query("ApP.Tm.ExAmPlE.")
    assert reply.question[0].name.to_text() == "ApP.Tm.ExAmPlE."
    assert reply.answer[0][0].to_text() == "127.0.0.1"


def test_edns_query_gets_an_opt_back_and_plain_query_none() -> None:
    assert query("app.tm.example.", use_edns=0).edns == 0
    assert query("app.tm.example.").edns == -1


def test_nxdomain_and_nodata_carry_the_soa() -> None:
    nx = query("nothing.tm.example.")
    assert nx.rcode() == dns.rcode.NXDOMAIN
    assert nx.authority[0].rdtype == dns.rdatatype.SOA
    nodata = query("app.tm.example.", "AAAA")
    assert nodata.rcode() == dns.rcode.NOERROR and not nodata.answer
    assert nodata.authority[0].rdtype == dns.rdatatype.SOA


def test_outside_the_zone_is_refused() -> None:
    assert query("www.example.com.").rcode() == dns.rcode.REFUSED


def test_a_response_packet_is_never_answered() -> None:
    wire = bytearray(dns.message.make_query("app.tm.example.", "A").to_wire())
    wire[2] |= 0x80
    assert HANDLE(bytes(wire), PEER, True) is None


@pytest.mark.parametrize(
    "wire",
    [
        b"",
        b"\x00\x01",
        b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00",  # qdcount 1, no question
        b"\x12\x34\x01\x00\x00\x05\x00\x00\x00\x00\x00\x00\x03abc\x00\x00\x01\x00\x01",
        # a compression pointer to itself
        b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\xc0\x0c\x00\x01\x00\x01",
        b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x40"
        + b"a" * 64
        + b"\x00\x00\x01\x00\x01",
        bytes(range(256)),
    ],
)
def test_malformed_packets_get_formerr_or_silence_never_an_exception(
    wire: bytes,
) -> None:
    reply = HANDLE(wire, PEER, True)
    if reply is not None:
        parsed = dns.message.from_wire(reply, question_only=True, ignore_trailing=True)
        assert parsed.rcode() == dns.rcode.FORMERR


def test_random_garbage_never_raises() -> None:
    rng = Random(99)
    for _ in range(2000):
        HANDLE(rng.randbytes(rng.randrange(0, 80)), PEER, True)
    assert query("app.tm.example.").answer  # and the handler still answers


def test_non_query_opcode_is_notimp() -> None:
    message = dns.message.make_query("app.tm.example.", "A")
    message.set_opcode(dns.opcode.NOTIFY)
    wire = HANDLE(message.to_wire(), PEER, True)
    assert wire is not None
    assert dns.message.from_wire(wire).rcode() == dns.rcode.NOTIMP


def _nsid_of(reply: dns.message.Message) -> list[bytes]:
    return [o.nsid for o in reply.options if isinstance(o, dns.edns.NSIDOption)]


@pytest.mark.parametrize(
    ("name", "rtype"),
    [
        ("app.tm.example.", "A"),  # an answer
        ("nothing.tm.example.", "A"),  # NXDOMAIN
        ("example.org.", "A"),  # REFUSED
        ("app.tm.example.", "AXFR"),  # REFUSED on the full path's own branch
    ],
)
def test_nsid_names_the_instance_to_a_client_that_asks(name: str, rtype: str) -> None:
    """RFC 5001: only when asked, only when configured, whatever the rcode."""
    named = make_handler(
        lambda: SNAPSHOT, Random(1), lambda: 0.0, lambda _ip: None, nsid=b"dns-eu-1"
    )
    asking = dns.message.make_query(
        name, rtype, use_edns=0, options=[dns.edns.NSIDOption(b"")]
    ).to_wire()
    silent = dns.message.make_query(name, rtype, use_edns=0).to_wire()
    for handle, wire, expected in [
        (named, asking, [b"dns-eu-1"]),
        (named, silent, []),
        (HANDLE, asking, []),  # no NSID configured
    ]:
        reply = handle(wire, PEER, True)
        assert reply is not None
        assert _nsid_of(dns.message.from_wire(reply)) == expected


def test_a_failing_fast_path_costs_no_answer(caplog: pytest.LogCaptureFixture) -> None:
    """A bug on the fast path is logged and the query answered on the full
    path, which does not share the failing part (here the GeoIP version
    check, which only the fast path's caches make)."""

    def broken_version() -> int:
        raise RuntimeError("version check failed")

    handle = make_handler(
        lambda: SNAPSHOT,
        Random(1),
        lambda: 0.0,
        lambda _ip: None,
        locate_version=broken_version,
    )
    wire = dns.message.make_query("app.tm.example.", "A").to_wire()
    with caplog.at_level(logging.ERROR, logger="app.dns.handler"):
        reply = handle(wire, PEER, True)
    assert reply is not None
    parsed = dns.message.from_wire(reply)
    assert parsed.rcode() == dns.rcode.NOERROR
    assert parsed.answer[0].to_text() == "app.tm.example. 60 IN A 127.0.0.1"
    assert "fast path failed" in caplog.text


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "full"])
def test_a_failing_answer_costs_one_servfail_not_the_server(
    fast: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """A GeoIP database that fails on lookup (a corrupt file) makes the
    geographic answer fail: that query gets SERVFAIL with its question, the
    error is logged, and names that need no location are still answered."""

    def corrupt(_ip: object) -> None:
        raise maxminddb.InvalidDatabaseError("corrupt search tree")

    geo = make_profile(
        "geo", Method.GEOGRAPHIC, make_endpoint("w", "127.0.0.9", id=3, geo=("WORLD",))
    )
    snapshot = compile_snapshot(Config((make_zone(*ZONE.profiles, geo),)), {}, 3, 0.0)
    handle = make_handler(lambda: snapshot, Random(1), lambda: 0.0, corrupt, fast)
    wire = dns.message.make_query("geo.tm.example.", "A").to_wire()
    with caplog.at_level(logging.ERROR, logger="app.dns.handler"):
        reply = handle(wire, PEER, True)
    assert reply is not None
    failed = dns.message.from_wire(reply)
    assert failed.rcode() == dns.rcode.SERVFAIL and not failed.answer
    assert failed.question[0].name.to_text() == "geo.tm.example."
    assert "failed to answer geo.tm.example./1" in caplog.text
    other = handle(dns.message.make_query("app.tm.example.", "A").to_wire(), PEER, True)
    assert other is not None
    assert dns.message.from_wire(other).answer[0][0].to_text() == "127.0.0.1"


def test_cookie_replies_stay_right_once_their_memo_is_full(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The memo of cookie replies (one SipHash spared per repeat within a
    second) is emptied when full, so a flood of new client cookies cannot grow
    memory; every client still gets its own valid server cookie."""
    monkeypatch.setattr(handler, "MAX_COOKIE_REPLIES", 3)
    keys = CookieSecrets(bytes(range(16)))
    handle = handler.DnsHandler(
        lambda: SNAPSHOT, Random(1), lambda: 0.0, lambda _ip: None, cookies=keys
    )
    for i in range(10):
        client = i.to_bytes(8, "big")
        cookie = dns.edns.GenericOption(dns.edns.COOKIE, client)
        wire = dns.message.make_query(
            "app.tm.example.", "A", use_edns=0, options=[cookie]
        ).to_wire()
        reply = handle(wire, PEER, True)
        assert reply is not None
        [option] = [
            o
            for o in dns.message.from_wire(reply).options
            if o.otype == dns.edns.COOKIE
        ]
        data = option.to_wire()
        assert data[:8] == client and keys.valid(client, data[8:], PEER[0], 0.0)
        assert len(handle._cookie_replies) <= 3
