"""Response rate limiting: what one network gets when it asks too often, by
response class, with slips, exemptions and cookies, on a fake clock."""

from __future__ import annotations

from ipaddress import ip_network

import dns.edns
import dns.flags
import dns.message
import dns.rcode
import dns.rrset
import pytest

from app.dns import ratelimit
from app.dns.cookies import CookieSecrets
from app.dns.ratelimit import (
    RateLimiter,
    RrlPolicy,
    exempt_networks,
    response_class,
    truncated,
)

SECRETS = CookieSecrets(bytes(range(16)))
NOW = 1_800_000_000.0


def reply_to(
    name: str, rcode: int = dns.rcode.NOERROR, soa_zone: str | None = None
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
