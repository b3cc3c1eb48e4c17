"""Response rate limiting: what one network gets when it asks too often, by
response class, with slips, exemptions and cookies, on a fake clock."""

from __future__ import annotations

import struct
from ipaddress import ip_network
from random import Random

import dns.edns
import dns.flags
import dns.message
import dns.name
import dns.rcode
import dns.rdata
import dns.rrset
import pytest

from app.dns import ratelimit
from app.dns.codec import header_only
from app.dns.cookies import CookieSecrets
from app.dns.handler import make_handler
from app.dns.ratelimit import (
    RateLimiter,
    RrlPolicy,
    exempt_networks,
    response_class,
    truncated,
)
from app.domain.model import Config, Method
from app.domain.query import Rcode
from app.domain.snapshot import compile_snapshot
from tests.builders import make_endpoint, make_profile, make_zone

SECRETS = CookieSecrets(bytes(range(16)))
NOW = 1_800_000_000.0


def reply_to(
    name: str,
    rcode: dns.rcode.Rcode = dns.rcode.NOERROR,
    soa_zone: str | None = None,
) -> tuple[bytes, bytes]:
    """(query, reply) wire forms as tmdns would send them."""
    query = dns.message.make_query(name, "A")
    reply = dns.message.make_response(query)
    reply.set_rcode(rcode)
    if rcode == dns.rcode.NOERROR:
        reply.answer.append(dns.rrset.from_text(name, 60, "IN", "A", "127.0.0.1"))
    if soa_zone is not None:
        reply.authority.append(
            dns.rrset.from_text(
                soa_zone, 60, "IN", "SOA", f"ns1.{soa_zone} h.{soa_zone} 1 2 3 4 5"
            )
        )
    return query.to_wire(), reply.to_wire()


def limiter(rate: int = 5, slip: int = 2, exempt: tuple[str, ...] = ()) -> RateLimiter:
    policy = RrlPolicy(rate, slip, exempt_networks(exempt))
    return RateLimiter(policy, SECRETS, lambda: NOW)


def outcomes(
    rrl: RateLimiter, query: bytes, reply: bytes, host: str, count: int, now: float
) -> tuple[int, int, int]:
    """(sent as is, slipped, dropped) for `count` identical replies at `now`."""
    sent = slipped = dropped = 0
    for _ in range(count):
        out = rrl.admit(query, reply, host, now)
        if out is None:
            dropped += 1
        elif out == reply:
            sent += 1
        else:
            slipped += 1
    return sent, slipped, dropped


def test_one_network_gets_the_burst_then_the_rate() -> None:
    query, reply = reply_to("www.tm.example.")
    rrl = limiter(rate=5, slip=2)
    assert outcomes(rrl, query, reply, "198.51.100.7", 25, 0.0) == (5, 10, 10)
    # Half a second later, half a second's worth of tokens is back.
    assert outcomes(rrl, query, reply, "198.51.100.7", 10, 0.5)[0] == 2
    assert rrl.counts.limited == 28 and rrl.counts.slipped == 14


def test_the_netblock_is_the_slash_24_and_the_slash_56() -> None:
    query, reply = reply_to("www.tm.example.")
    rrl = limiter(rate=2, slip=0)
    assert outcomes(rrl, query, reply, "198.51.100.7", 2, 0.0)[0] == 2
    assert outcomes(rrl, query, reply, "198.51.100.200", 2, 0.0)[0] == 0  # same /24
    assert outcomes(rrl, query, reply, "198.51.101.7", 2, 0.0)[0] == 2  # another
    assert outcomes(rrl, query, reply, "2001:db8:0:ab::1", 2, 0.0)[0] == 2
    assert outcomes(rrl, query, reply, "2001:db8:0:ff::2", 2, 0.0)[0] == 0  # /56
    assert outcomes(rrl, query, reply, "2001:db8:0:100::1", 2, 0.0)[0] == 2
    # An IPv4 client on a dual-stack socket counts as its IPv4 /24.
    assert outcomes(rrl, query, reply, "::ffff:198.51.100.9", 1, 0.0)[0] == 0


def test_each_name_has_its_own_bucket_but_a_zones_nxdomains_share_one() -> None:
    rrl = limiter(rate=3, slip=0)
    for i in range(3):  # different names that exist: no limiting
        query, reply = reply_to(f"n{i}.tm.example.")
        assert outcomes(rrl, query, reply, "203.0.113.1", 3, 0.0)[0] == 3
    sent = 0
    for i in range(30):  # a random-name flood: one bucket for the zone
        query, reply = reply_to(f"r{i}.tm.example.", dns.rcode.NXDOMAIN, "tm.example.")
        sent += outcomes(rrl, query, reply, "203.0.113.1", 1, 0.0)[0]
    assert sent == 3


def test_response_classes() -> None:
    _, answer = reply_to("WWW.tm.example.")
    assert response_class(answer) == b"a\x03www\x02tm\x07example\x00\x00\x01"
    _, nx = reply_to("abc.Tm.Example.", dns.rcode.NXDOMAIN, "tm.example.")
    assert response_class(nx) == b"n\x02tm\x07example\x00"
    _, refused = reply_to("x.other.example.", dns.rcode.REFUSED)
    _, servfail = reply_to("x.tm.example.", dns.rcode.SERVFAIL)
    assert response_class(refused) == response_class(servfail) == b"e"
    assert response_class(b"\x00\x01\x81\x01" + bytes(8)) == b"e"  # header only


def test_a_slip_is_the_reply_emptied_with_tc_set() -> None:
    _, reply = reply_to("www.tm.example.")
    slipped = dns.message.from_wire(truncated(reply))
    original = dns.message.from_wire(reply)
    assert slipped.flags & dns.flags.TC
    assert slipped.id == original.id and slipped.question == original.question
    assert not slipped.answer and not slipped.authority


def test_exempt_networks_are_never_limited() -> None:
    query, reply = reply_to("www.tm.example.")
    rrl = limiter(rate=1, slip=0, exempt=("198.51.100.0/28", "2001:db8::53"))
    assert outcomes(rrl, query, reply, "198.51.100.5", 10, 0.0) == (10, 0, 0)
    assert outcomes(rrl, query, reply, "2001:db8::53", 10, 0.0) == (10, 0, 0)
    assert outcomes(rrl, query, reply, "198.51.100.20", 10, 0.0)[0] < 10
    assert rrl.counts.exempted == 18


def test_a_client_with_a_valid_server_cookie_is_not_limited() -> None:
    """It proved its address by a round trip, so it cannot be a spoofed victim."""
    host = "192.0.2.9"
    client = b"clientck"
    good = SECRETS.server_cookie(client, host, NOW)
    asked = dns.message.make_query(
        "www.tm.example.", "A", options=[dns.edns.CookieOption(client, good)]
    )
    forged = dns.message.make_query(
        "www.tm.example.", "A", options=[dns.edns.CookieOption(client, bytes(16))]
    )
    _, reply = reply_to("www.tm.example.")
    rrl = limiter(rate=1, slip=0)
    assert outcomes(rrl, asked.to_wire(), reply, host, 20, 0.0) == (20, 0, 0)
    assert outcomes(rrl, forged.to_wire(), reply, host, 20, 0.0) == (0, 0, 20)


def test_the_bucket_table_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A flood from spoofed addresses all over cannot grow memory."""
    monkeypatch.setattr(ratelimit, "MAX_BUCKETS", 100)
    query, reply = reply_to("www.tm.example.")
    rrl = limiter(rate=5)
    for i in range(1000):
        rrl.admit(query, reply, f"10.{i // 256}.{i % 256}.1", i / 100)
        assert len(rrl._buckets) <= 100


def test_exempt_list_parses_addresses_and_networks() -> None:
    assert exempt_networks(["10.0.0.0/8", " 192.0.2.53 ", ""]) == (
        ip_network("10.0.0.0/8"),
        ip_network("192.0.2.53/32"),
    )


def test_a_flooding_netblock_is_shed_before_answering_for_the_second() -> None:
    """Past 4 × the rate of limited replies in one second, a netblock's queries
    are dropped unanswered (one in 16 still goes through) until the second
    ends; other netblocks and exempt hosts are never shed."""
    query, reply = reply_to("www.tm.example.")
    rrl = limiter(rate=5, slip=0, exempt=("198.51.100.99",))
    flooder = "198.51.100.7"
    assert not rrl.shed(flooder, 0.0)
    outcomes(rrl, query, reply, flooder, 5 + 4 * 5 + 1, 0.0)  # burst, then 21 limited
    shed = [rrl.shed(flooder, 0.5) for _ in range(32)]
    assert shed.count(False) == 2  # one in 16
    assert not rrl.shed("198.51.101.7", 0.5)  # another /24
    assert not rrl.shed("198.51.100.99", 0.5)  # exempt, though in the /24
    assert rrl.counts.shed == 30
    assert not rrl.shed(flooder, 1.0)  # a new second: answered again


def test_only_buckets_idle_for_seconds_are_forgotten_when_the_table_is_full(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A full table drops the buckets that have refilled (idle past 5 s), which
    hold nothing a new one would not; a netblock being limited keeps its
    empty bucket, so new keys cannot buy it a fresh burst."""
    monkeypatch.setattr(ratelimit, "MAX_BUCKETS", 20)
    query, reply = reply_to("www.tm.example.")
    rrl = limiter(rate=1, slip=0)
    for i in range(19):
        assert outcomes(rrl, query, reply, f"10.0.{i}.1", 1, 0.0) == (1, 0, 0)
    flooder = "198.51.100.7"
    assert outcomes(rrl, query, reply, flooder, 2, 6.0) == (1, 0, 1)
    assert outcomes(rrl, query, reply, "203.0.113.1", 1, 6.0) == (1, 0, 0)  # full
    assert len(rrl._buckets) == 2  # the 19 idle ones went
    assert outcomes(rrl, query, reply, flooder, 1, 6.0) == (0, 0, 1)


def test_the_heat_table_stays_bounded_and_keeps_the_flooder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Limited replies from netblocks all over cannot grow the table that
    finds floods; when it is emptied, the netblock whose reply was just
    limited keeps its count, so a flood going on meanwhile is still shed."""
    monkeypatch.setattr(ratelimit, "MAX_BUCKETS", 20)
    query, reply = reply_to("www.tm.example.")
    rrl = limiter(rate=1, slip=0)
    largest = 0
    # 39 netblocks, each its burst and one limited reply: the table fills and
    # is emptied once, and is one short of full again when the flood starts.
    for i in range(39):
        assert outcomes(rrl, query, reply, f"10.0.{i}.1", 2, 0.0) == (1, 0, 1)
        largest = max(largest, len(rrl._heat))
    flooder = "198.51.100.7"
    for _ in range(6):  # the burst, then 5 limited (past 4 × the rate)
        rrl.admit(query, reply, flooder, 0.0)
        largest = max(largest, len(rrl._heat))
    assert largest == 20
    assert [rrl.shed(flooder, 0.5) for _ in range(15)] == [True] * 15
    assert not rrl.shed("10.0.38.1", 0.5)


def test_the_memo_of_exempt_hosts_stays_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each host's exemption is worked out once and remembered; a flood of
    addresses empties the memo rather than growing it, and exempt hosts stay
    exempt after it was emptied."""
    monkeypatch.setattr(ratelimit, "MAX_BUCKETS", 20)
    query, reply = reply_to("www.tm.example.")
    rrl = limiter(rate=1, slip=0, exempt=("192.0.2.0/24",))
    for i in range(1, 51):  # one /24: one bucket, spent by the first
        assert outcomes(rrl, query, reply, f"192.0.2.{i}", 1, 0.0) == (1, 0, 0)
        assert len(rrl._exempt_hosts) <= 20
    assert rrl.counts.exempted == 49
    assert outcomes(rrl, query, reply, "198.51.100.1", 3, 0.0) == (1, 0, 2)


def test_a_host_that_is_no_address_is_limited_and_never_exempt() -> None:
    """Sockets always report an IP address; should a peer be anything else,
    it is in no exempt network (even one covering every address) and all
    such peers share one bucket, so they are limited, never let through."""
    query, reply = reply_to("www.tm.example.")
    rrl = limiter(rate=1, slip=0, exempt=("0.0.0.0/0", "::/0"))
    assert outcomes(rrl, query, reply, "not-an-address", 3, 0.0) == (1, 0, 2)
    assert outcomes(rrl, query, reply, "no:such::address::", 2, 0.0) == (0, 0, 2)
    assert outcomes(rrl, query, reply, "192.0.2.1", 3, 0.0) == (3, 0, 0)


def _with_cookie(client: bytes, server: bytes, rtype: str = "A") -> bytes:
    cookie = dns.edns.CookieOption(client, server)
    return dns.message.make_query("www.tm.example.", rtype, options=[cookie]).to_wire()


@pytest.mark.parametrize(
    "query",
    [
        _with_cookie(b"clientck", b""),
        dns.message.make_query("www.tm.example.", "NULL", use_edns=0).to_wire(),
    ],
    ids=["client-cookie-only", "no-cookie-but-type-10"],
)
def test_a_query_without_a_server_cookie_proves_nothing(query: bytes) -> None:
    """Only a server cookie we made shows a round trip: a client cookie alone
    (a first contact, or a spoofer's), or no cookie at all in a query whose
    octets merely look like the option's code (type NULL is 10), is limited."""
    _, reply = reply_to("www.tm.example.")
    rrl = limiter(rate=1, slip=0)
    assert outcomes(rrl, query, reply, "192.0.2.9", 10, 0.0) == (1, 0, 9)
    assert rrl.counts.exempted == 0


def test_a_malformed_query_proves_nothing_even_with_a_good_cookie() -> None:
    """The FORMERRs to a query that does not parse are limited as errors,
    though it carries a server cookie that would pass: what it says cannot be
    trusted, so neither can its cookie."""
    host, client = "192.0.2.9", b"clientck"
    good = _with_cookie(client, SECRETS.server_cookie(client, host, NOW))
    broken = good[:4] + b"\x00\x02" + good[6:]  # two questions: FORMERR
    formerr = header_only(int.from_bytes(good[:2], "big"), 0, Rcode.FORMERR)
    rrl = limiter(rate=1, slip=0)
    assert outcomes(rrl, broken, formerr, host, 10, 0.0) == (1, 0, 9)
    assert outcomes(rrl, good, formerr, host, 10, 0.0) == (10, 0, 0)


def test_an_nxdomain_too_big_for_udp_is_limited_in_one_bucket() -> None:
    """With long NS and SOA mailbox names the NXDOMAIN does not fit 512 octets:
    a plain-DNS client gets it empty with TC set, without the SOA that names
    the zone. A random-name flood of those still shares one bucket."""
    long = ".".join(["x" * 60] * 4)
    zone = make_zone(
        make_profile("app", Method.PRIORITY, make_endpoint(id=1)),
        ns=(f"{long}.ns.example.",),
        soa_email=f"hostmaster@{long}.mail.example",
    )
    snapshot = compile_snapshot(Config((zone,)), {}, 1, 0.0)
    handle = make_handler(lambda: snapshot, Random(1), lambda: NOW, lambda _ip: None)
    rrl = limiter(rate=3, slip=0)
    sent = 0
    for i in range(30):
        query = dns.message.make_query(f"r{i}.tm.example.", "A").to_wire()
        reply = handle(query, ("203.0.113.1", 5300), True)
        assert reply is not None
        parsed = dns.message.from_wire(reply)
        assert parsed.rcode() == dns.rcode.NXDOMAIN and parsed.flags & dns.flags.TC
        assert not parsed.authority
        assert response_class(reply) == b"n"
        sent += rrl.admit(query, reply, "203.0.113.1", 0.0) == reply
    assert sent == 3


def _nxdomain_written_out(qname: str, owner: str) -> bytes:
    """An NXDOMAIN whose SOA owner is written out rather than pointing into
    the question, as an encoder that does not compress writes it."""
    query = dns.message.make_query(qname, "A")
    reply = dns.message.make_response(query)
    reply.set_rcode(dns.rcode.NXDOMAIN)
    head = bytearray(reply.to_wire())
    head[8:10] = b"\x00\x01"  # NSCOUNT
    soa = dns.rdata.from_text("IN", "SOA", f"ns1.{owner} h.{owner} 1 2 3 4 5")
    name, rdata = dns.name.from_text(owner).to_wire(), soa.to_wire()
    assert name is not None and rdata is not None  # no file given: the octets
    return bytes(head) + name + struct.pack(">HHIH", 6, 1, 60, len(rdata)) + rdata


def test_nxdomains_share_the_zone_bucket_however_the_soa_owner_is_written() -> None:
    """The class of an NXDOMAIN is its zone's name, in lowercase, whether the
    SOA owner points into the question (as our encoder writes it) or is
    written out: a change of encoding must not split a zone's bucket."""
    written = _nxdomain_written_out("abc.tm.example.", "TM.Example.")
    assert dns.message.from_wire(written).authority[0].name.to_text() == "TM.Example."
    _, pointed = reply_to("xyz.tm.example.", dns.rcode.NXDOMAIN, "tm.example.")
    assert response_class(written) == response_class(pointed)
    assert response_class(written) == b"n\x02tm\x07example\x00"


_, _ANSWER = reply_to("www.tm.example.")


@pytest.mark.parametrize(
    "reply",
    [
        b"",
        _ANSWER[:3],  # shorter than a header
        _ANSWER[:16],  # cut inside the question's name
        _ANSWER[:12] + b"\xc0\x0c\x00\x01\x00\x01",  # a question name that points
        header_only(0x1234, 0, Rcode.FORMERR),
        _ANSWER,
    ],
    ids=["empty", "runt", "cut-name", "pointer-name", "header-only", "answer"],
)
def test_a_slip_is_never_larger_than_the_reply_whatever_its_octets(
    reply: bytes,
) -> None:
    """RRL must never amplify: the slip that stands for a reply is never
    longer than it, and neither it nor the reply's class raises, even on
    octets that are no proper reply (which are sent back as they came)."""
    slip = truncated(reply)
    assert len(slip) <= len(reply)
    if len(reply) < 12:
        assert slip == reply
    else:
        assert slip[2] & 0x02 and slip[:2] == reply[:2]  # TC, same ID
    assert response_class(reply)[:1] in (b"a", b"n", b"e")
