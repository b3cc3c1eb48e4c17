"""Who the client is, as the fast path keys its cache and the full path routes:
the ECS address when its source prefix is above 0, else the packet's source."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv6Address, ip_address

from app.dns.client import Client, client_of, context_of
from app.domain.model import IPAddress
from app.domain.query import GeoFacts

NOW = 1_800_000_000.0


def ecs(family: int, source: int, address: bytes) -> bytes:
    """ECS option data from the family on, as the wire parser hands it over."""
    return family.to_bytes(2, "big") + bytes((source, 0)) + address


def nowhere(_address: IPAddress) -> GeoFacts | None:
    """A GeoIP lookup that knows no network."""
    return None


def test_an_ecs_source_prefix_decides_for_the_resolver_behind_it() -> None:
    """A resolver's ECS /24 is the client routing sees, not the resolver, and
    the answer is given for that /24 (RFC 7871 §7.1.1)."""
    client = client_of(ecs(1, 24, bytes((198, 51, 100))), "192.0.2.53")
    assert client == Client(32, int(IPv4Address("198.51.100.0")), 24, 24)
    ctx = context_of(client, lambda: NOW, nowhere)
    assert (ctx.client, ctx.client_prefix, ctx.now) == (
        IPv4Address("198.51.100.0"),
        24,
        NOW,
    )
    network = IPv6Address("2001:db8:abcd::")
    six = client_of(ecs(2, 48, network.packed[:6]), "192.0.2.53")
    assert six == Client(128, int(network), 48, 48)
    assert context_of(six, lambda: NOW, nowhere).client == network


def test_an_ecs_source_of_zero_lets_the_packet_source_decide_at_scope_zero() -> None:
    """RFC 7871 §7.1.2: /0 asks that no client information be used for the
    answer's scope, so the answer is given for /0, though routing still goes
    by the packet's source."""
    client = client_of(ecs(1, 0, b""), "192.0.2.53")
    assert client == Client(32, int(IPv4Address("192.0.2.53")), 0, 32)
    assert context_of(client, lambda: NOW, nowhere).client_prefix == 0


def test_the_packet_source_decides_without_ecs_mapped_ipv4_taken_as_ipv4() -> None:
    """A dual-stack socket reports an IPv4 client as ::ffff:a.b.c.d; it must be
    routed as that IPv4 client, and a link-local scope is not part of it."""
    assert client_of(None, "::ffff:192.0.2.7") == client_of(None, "192.0.2.7")
    assert client_of(None, "192.0.2.7") == Client(
        32, int(IPv4Address("192.0.2.7")), 32, 32
    )
    assert client_of(None, "fe80::1%eth0") == Client(
        128, int(ip_address("fe80::1")), 128, 128
    )


def test_a_source_that_is_no_address_routes_as_an_unknown_client() -> None:
    """Sockets always report an IP address; should a peer be anything else, it
    is answered as a client routing knows nothing about (GeoIP never asked,
    scope 0), not with an error."""
    asked: list[IPAddress] = []

    def locate(address: IPAddress) -> GeoFacts | None:
        asked.append(address)
        return GeoFacts("EU", "FR")

    assert client_of(None, "localhost") is None
    assert client_of(None, "no:such::address::") is None
    ctx = context_of(None, lambda: NOW, locate)
    assert (ctx.client, ctx.client_prefix, ctx.now) == (None, 0, NOW)
    assert ctx.geo() is None and not asked
