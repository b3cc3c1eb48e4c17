"""Address ranges for subnet routing and latency tables: CIDRs and `first-last`.

A range is kept as integers, so matching and overlap checks are arithmetic,
and the ECS scope of a match can be computed exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from ipaddress import ip_address, ip_network

from app.domain.model import IPAddress


@dataclass(frozen=True, slots=True)
class AddressRange:
    version: int
    first: int
    last: int
    text: str  # as the operator wrote it

    def contains(self, address: IPAddress) -> bool:
        return (
            address.version == self.version and self.first <= int(address) <= self.last
        )

    def overlaps(self, other: AddressRange) -> bool:
        return (
            self.version == other.version
            and self.first <= other.last
            and other.first <= self.last
        )


def parse_range(text: str) -> AddressRange:
    """`10.1.0.0/16` (a network address) or `10.1.0.5-10.1.0.99`; ValueError if not."""
    spec = text.strip()
    if "-" in spec:
        low_text, _, high_text = spec.partition("-")
        low, high = ip_address(low_text.strip()), ip_address(high_text.strip())
        if low.version != high.version:
            raise ValueError(f"{text!r}: both ends must be of one address family")
        if int(low) > int(high):
            raise ValueError(f"{text!r}: the first address is after the last")
        return AddressRange(low.version, int(low), int(high), spec)
    try:
        network = ip_network(spec, strict=True)
    except ValueError as exc:
        raise ValueError(f"{text!r}: {exc}") from None
    first = int(network.network_address)
    return AddressRange(network.version, first, first + network.num_addresses - 1, spec)


def block_scope(
    client: IPAddress, inside: AddressRange | None, avoid: Sequence[AddressRange]
) -> int:
    """The shortest prefix p such that every address in client/p gets the same
    answer: inside `inside` when the client matched it, or outside all of
    `avoid` when it matched none (RFC 7871 §7.2.1 scope)."""
    bits = client.max_prefixlen
    value = int(client)
    for prefix in range(bits + 1):
        size = 1 << (bits - prefix)
        first = value & ~(size - 1) & ((1 << bits) - 1)
        block = AddressRange(client.version, first, first + size - 1, "")
        if inside is not None:
            if inside.first <= block.first and block.last <= inside.last:
                return prefix
        elif not any(block.overlaps(r) for r in avoid):
            return prefix
    return bits


def most_specific(
    ranges: Sequence[AddressRange], client: IPAddress
) -> AddressRange | None:
    """The smallest range holding the client (latency tables may nest)."""
    holding = [r for r in ranges if r.contains(client)]
    return min(holding, key=lambda r: r.last - r.first, default=None)
