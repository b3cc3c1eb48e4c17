"""DNS cookies (RFC 7873, server cookies as RFC 9018): made and checked by
SipHash-2-4 under a fleet's shared secret, good for an hour, a previous
secret still accepted, and a reply for every query that carries one."""

from __future__ import annotations

from random import Random

import dns.edns
import dns.message
import dns.rcode
import pytest

from app.dns.cookies import CookieSecrets, siphash24
from app.dns.handler import make_handler
from app.domain.model import Config, Method
from app.domain.snapshot import compile_snapshot
from tests.builders import make_endpoint, make_profile, make_zone

KEY = bytes(range(16))
OTHER = bytes(16)
CLIENT = bytes.fromhex("0102030405060708")
NOW = 1_800_000_000.0
SNAPSHOT = compile_snapshot(
    Config((make_zone(make_profile("app", Method.PRIORITY, make_endpoint(id=1))),)),
    {},
    1,
    0.0,
)
PEER = ("198.51.100.7", 5300)


def test_siphash_gives_the_reference_values() -> None:
    """The vectors of the SipHash paper (key 00..0f)."""
    assert siphash24(KEY, b"").hex() == "310e0edd47db6f72"
    assert siphash24(KEY, bytes(range(15))).hex() == "e545be4961ca29a1"
    assert siphash24(KEY, bytes(range(8))).hex() == "6224939a79f5f593"


def test_a_cookie_is_good_for_an_hour_for_its_client_only() -> None:
    keys = CookieSecrets(KEY)
    cookie = keys.server_cookie(CLIENT, "198.51.100.7", NOW)
    assert len(cookie) == 16 and cookie[0] == 1 and cookie[1:4] == bytes(3)
    assert keys.valid(CLIENT, cookie, "198.51.100.7", NOW + 3600)
    assert not keys.valid(CLIENT, cookie, "198.51.100.7", NOW + 3601)  # stale
    assert keys.valid(CLIENT, cookie, "198.51.100.7", NOW - 300)
    assert not keys.valid(CLIENT, cookie, "198.51.100.7", NOW - 301)  # ahead
    assert not keys.valid(CLIENT, cookie, "198.51.100.8", NOW)  # another address
    assert not keys.valid(bytes(8), cookie, "198.51.100.7", NOW)  # another client
    assert not CookieSecrets(OTHER).valid(CLIENT, cookie, "198.51.100.7", NOW)


def test_a_rolled_secret_still_accepts_the_cookies_of_the_previous_one() -> None:
    old = CookieSecrets(OTHER).server_cookie(CLIENT, "2001:db8::1", NOW)
    rolled = CookieSecrets(KEY, (OTHER,))
    assert rolled.valid(CLIENT, old, "2001:db8::1", NOW)
    assert not CookieSecrets(KEY).valid(CLIENT, old, "2001:db8::1", NOW)


def _ask(
    handle: object, cookie: bytes, peer: tuple[str, int] = PEER
) -> dns.message.Message:
    option = dns.edns.GenericOption(dns.edns.COOKIE, cookie)
    wire = dns.message.make_query("app.tm.example.", "A", use_edns=0, options=[option])
    reply = handle(wire.to_wire(), peer, True)  # type: ignore[operator]
    assert reply is not None
    return dns.message.from_wire(reply)


def _cookie(reply: dns.message.Message) -> bytes:
    [option] = [o for o in reply.options if o.otype == dns.edns.COOKIE]
    return bytes(option.to_wire())


def _handler(keys: CookieSecrets, now: float = NOW) -> object:
    return make_handler(
        lambda: SNAPSHOT, Random(1), lambda: now, lambda _: None, cookies=keys
    )


def test_a_client_cookie_gets_a_server_cookie_and_keeps_a_good_one() -> None:
    handle = _handler(CookieSecrets(KEY))
    first = _cookie(_ask(handle, CLIENT))
    assert first[:8] == CLIENT and len(first) == 24
    # Sent back, a good cookie is kept as it is.
    assert _cookie(_ask(handle, first)) == first
    # Another instance of the fleet (same secret) takes it too.
    assert _cookie(_ask(_handler(CookieSecrets(KEY), NOW + 60), first)) == first


@pytest.mark.parametrize(
    "server",
    [
        bytes(16),  # wrong
        CookieSecrets(KEY).server_cookie(CLIENT, PEER[0], NOW - 7200),  # stale
        CookieSecrets(OTHER).server_cookie(CLIENT, PEER[0], NOW),  # not ours
    ],
)
def test_a_wrong_or_stale_server_cookie_gets_a_fresh_one(server: bytes) -> None:
    """As Knot and NSD answer: the query is answered, never BADCOOKIE."""
    reply = _ask(_handler(CookieSecrets(KEY)), CLIENT + server)
    assert reply.rcode() == dns.rcode.NOERROR and reply.answer
    fresh = _cookie(reply)
    assert fresh[:8] == CLIENT and fresh[8:] != server
    assert CookieSecrets(KEY).valid(CLIENT, fresh[8:], PEER[0], NOW)


@pytest.mark.parametrize("length", [1, 7, 9, 15, 41])
def test_a_malformed_cookie_is_formerr(length: int) -> None:
    reply = _ask(_handler(CookieSecrets(KEY)), bytes(length))
    assert reply.rcode() == dns.rcode.FORMERR


@pytest.mark.parametrize(
    ("age", "kept"),
    [(0, True), (1799, True), (1800, False), (3600, False)],
)
def test_a_good_cookie_past_half_its_lifetime_is_renewed(age: int, kept: bool) -> None:
    """RFC 9018 §4.3: a good cookie is given back as it came for its first
    half hour, so a client's cookie stays put; after that it gets a fresh one
    (stamped now), so a client that keeps asking never holds one that runs out
    before it is renewed."""
    keys = CookieSecrets(KEY)
    server = keys.server_cookie(CLIENT, PEER[0], NOW - age)
    reply = _ask(_handler(keys), CLIENT + server)
    assert reply.rcode() == dns.rcode.NOERROR and reply.answer
    given = _cookie(reply)[8:]
    assert (given == server) is kept
    if not kept:
        assert given == keys.server_cookie(CLIENT, PEER[0], NOW)


def test_a_peer_that_is_no_address_gets_a_cookie_bound_to_no_address() -> None:
    """Sockets always report an IP address; should a peer be anything else,
    its query is still answered with a cookie rather than failing, and that
    cookie binds no address, so it never passes for an IP client's."""
    keys = CookieSecrets(KEY)
    reply = _ask(_handler(keys), CLIENT, ("not-an-address", 0))
    assert reply.rcode() == dns.rcode.NOERROR and reply.answer
    server = _cookie(reply)[8:]
    assert keys.valid(CLIENT, server, "not-an-address", NOW)
    assert not keys.valid(CLIENT, server, PEER[0], NOW)
