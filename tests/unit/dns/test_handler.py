"""The handler on raw bytes; replies parsed back with dnspython, a separate codec."""

from random import Random

import dns.edns
import dns.flags
import dns.message
import dns.rcode
import dns.rdatatype
import pytest

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


def query(name: str, rtype: str = "A", **kw) -> dns.message.Message:
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
    reply = dns.message.from_wire(HANDLE(message.to_wire(), PEER, True))
    assert reply.rcode() == dns.rcode.NOTIMP


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
