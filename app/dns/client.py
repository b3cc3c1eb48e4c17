"""Who the client is: one rule for the fast path and the full path alike.

The ECS address decides when its source prefix is above 0; otherwise the
packet's source address does, IPv4-mapped IPv6 taken as IPv4, with all its
bits known (RFC 7871 §7.1.2: a /0 source asks us not to use client
information, so the answer is given with prefix 0, though the source still
decides). The fast path keys its cache on this; the full path builds its
QueryContext from it, so the two can never disagree about a client.
"""

from __future__ import annotations

from collections.abc import Callable
from ipaddress import IPv4Address, IPv6Address
from socket import AF_INET, AF_INET6, inet_pton
from typing import NamedTuple

from app.domain.query import Locate, QueryContext

MAPPED = bytes(10) + b"\xff\xff"  # ::ffff:0:0/96, IPv4-mapped IPv6 addresses


class Client(NamedTuple):
    bits: int  # of the address family: 32 or 128
    address: int
    prefix: int  # what the answer is given for: the ECS source prefix, or all
    known: int  # how many leading bits of `address` the query tells


def client_of(ecs: bytes | None, host: str) -> Client | None:
    """From the ECS option data (family onwards, as received and already
    checked) and the packet's source host; None for a host that is no address
    (which the kernel never gives)."""
    if ecs is not None and ecs[2] > 0:
        bits = 32 if ecs[1] == 1 else 128
        raw = ecs[4:]
        address = int.from_bytes(raw, "big") << (bits - 8 * len(raw))
        return Client(bits, address, ecs[2], ecs[2])
    source = _source(host)
    if source is None:
        return None
    bits, address = source
    return Client(bits, address, bits if ecs is None else 0, bits)


def context_of(
    client: Client | None, clock: Callable[[], float], locate: Locate
) -> QueryContext:
    """The routing context the full path answers with."""
    if client is None:
        return QueryContext(None, 0, clock(), locate)
    return QueryContext(address_of(client), client.prefix, clock(), locate)


def address_of(client: Client) -> IPv4Address | IPv6Address:
    """The client's address as the routing methods and GeoIP take it."""
    if client.bits == 32:
        return IPv4Address(client.address)
    return IPv6Address(client.address)


def _source(host: str) -> tuple[int, int] | None:
    try:
        if ":" not in host:
            return 32, int.from_bytes(inet_pton(AF_INET, host), "big")
        packed = inet_pton(AF_INET6, host.split("%", maxsplit=1)[0])
    except OSError:
        return None
    if packed[:12] == MAPPED:
        return 32, int.from_bytes(packed[12:], "big")
    return 128, int.from_bytes(packed, "big")
