"""DNS cookies (RFC 7873) with interoperable server cookies (RFC 9018).

A server cookie is Version 1, three reserved octets, a 32-bit timestamp and
SipHash-2-4 of (client cookie, version, reserved, timestamp, client address)
under a 16-octet secret. Every instance of a fleet that shares the secret
makes and accepts the same cookies; a previous secret is still accepted while
a new one is rolled out. A cookie is good for an hour, and may be up to five
minutes ahead of this clock (RFC 9018 §4.3).
"""

from __future__ import annotations

import secrets
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from ipaddress import ip_address

VERSION = 1
CLIENT_LENGTH = 8
SERVER_LENGTH = 16  # the RFC 9018 form: 4 + 4 + 8 octets
LIFETIME = 3600
FUTURE = 300
_MASK = (1 << 64) - 1


def siphash24(key: bytes, message: bytes) -> bytes:
    """SipHash-2-4 (Aumasson and Bernstein), 8 octets little-endian: the hash
    RFC 9018 names. Python keeps its own SipHash private, so it is here."""
    k0, k1 = struct.unpack("<QQ", key)
    v0 = k0 ^ 0x736F6D6570736575
    v1 = k1 ^ 0x646F72616E646F6D
    v2 = k0 ^ 0x6C7967656E657261
    v3 = k1 ^ 0x7465646279746573
    tail = len(message) % 8
    blocks = message[: len(message) - tail]
    last = (
        message[len(message) - tail :] + bytes(7 - tail) + bytes([len(message) & 0xFF])
    )

    def rounds(count: int) -> None:
        nonlocal v0, v1, v2, v3
        for _ in range(count):
            v0 = (v0 + v1) & _MASK
            v1 = ((v1 << 13) | (v1 >> 51)) & _MASK
            v1 ^= v0
            v0 = ((v0 << 32) | (v0 >> 32)) & _MASK
            v2 = (v2 + v3) & _MASK
            v3 = ((v3 << 16) | (v3 >> 48)) & _MASK
            v3 ^= v2
            v0 = (v0 + v3) & _MASK
            v3 = ((v3 << 21) | (v3 >> 43)) & _MASK
            v3 ^= v0
            v2 = (v2 + v1) & _MASK
            v1 = ((v1 << 17) | (v1 >> 47)) & _MASK
            v1 ^= v2
            v2 = ((v2 << 32) | (v2 >> 32)) & _MASK

    for (m,) in struct.iter_unpack("<Q", blocks + last):
        v3 ^= m
        rounds(2)
        v0 ^= m
    v2 ^= 0xFF
    rounds(4)
    return struct.pack("<Q", v0 ^ v1 ^ v2 ^ v3)


@dataclass(frozen=True, slots=True)
class CookieSecrets:
    """The secret new cookies are made with, and the ones still accepted."""

    current: bytes
    previous: tuple[bytes, ...] = ()

    @classmethod
    def random(cls) -> CookieSecrets:
        """For a lone instance: cookies work, but only with this process."""
        return cls(secrets.token_bytes(16))

    @classmethod
    def from_hex(cls, current: str, previous: Sequence[str] = ()) -> CookieSecrets:
        return cls(bytes.fromhex(current), tuple(bytes.fromhex(p) for p in previous))

    def server_cookie(self, client: bytes, host: str, now: float) -> bytes:
        """A fresh server cookie for this client cookie and address."""
        head = bytes([VERSION, 0, 0, 0]) + struct.pack(">I", int(now) & 0xFFFFFFFF)
        return head + siphash24(self.current, client + head + _address(host))

    def valid(self, client: bytes, server: bytes, host: str, now: float) -> bool:
        """A server cookie this fleet made for this client, still in date."""
        if len(server) != SERVER_LENGTH or server[0] != VERSION:
            return False
        stamp = struct.unpack(">I", server[4:8])[0]
        age = (int(now) - stamp) & 0xFFFFFFFF  # serial-number arithmetic
        if age >= 1 << 31:
            age -= 1 << 32
        if not -FUTURE <= age <= LIFETIME:
            return False
        message = client + server[:8] + _address(host)
        return any(
            secrets.compare_digest(siphash24(key, message), server[8:])
            for key in (self.current, *self.previous)
        )


def reply_cookie(
    keys: CookieSecrets, client: bytes, server: bytes, host: str, now: float
) -> bytes:
    """The COOKIE option data of a reply: the client's cookie and a server
    cookie. A good one under half its lifetime is given back as it came, so a
    client's cookie stays put; a missing, wrong or stale one gets a fresh one
    (as Knot and NSD answer), never BADCOOKIE, since no query needs one."""
    if server and keys.valid(client, server, host, now):
        stamp = struct.unpack(">I", server[4:8])[0]
        if (int(now) - stamp) & 0xFFFFFFFF < LIFETIME // 2:
            return client + server
    return client + keys.server_cookie(client, host, now)


def _address(host: str) -> bytes:
    try:
        return ip_address(host.split("%", 1)[0]).packed
    except ValueError:
        return b""
