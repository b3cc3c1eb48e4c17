"""What one probe needs: where to go and how, plus the shared client tools."""

from __future__ import annotations

import ssl
from dataclasses import dataclass

import aiohttp

from app.domain.model import Monitor

USER_AGENT = "tmdns-health-probe/1.0"


@dataclass(frozen=True, slots=True)
class Probe:
    address: str  # the IP (or host name) to connect to
    port: int
    monitor: Monitor
    host: str  # Host header, SNI and SIP Request-URI host
    # A composite monitor's checks, each with its name in reasons ("http 8080").
    parts: tuple[tuple[str, Probe], ...] = ()


def parse_codes(spec: str | None, default: str) -> list[tuple[int, int]]:
    """`200-299,301` → [(200, 299), (301, 301)]."""
    ranges = []
    for part in (spec or default).split(","):
        low, _, high = part.partition("-")
        ranges.append((int(low), int(high or low)))
    return ranges


def accepted(code: int, ranges: list[tuple[int, int]]) -> bool:
    return any(low <= code <= high for low, high in ranges)


class ProbeKit:
    """Shared, long-lived client state: one HTTP client without keep-alive (each
    probe makes a fresh connection, as a real client would), and TLS contexts."""

    def __init__(self, concurrency: int) -> None:
        self.http = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(
                force_close=True, limit=concurrency, ttl_dns_cache=60
            ),
            auto_decompress=False,
        )
        self.tls_unverified = ssl.create_default_context()
        self.tls_unverified.check_hostname = False
        self.tls_unverified.verify_mode = ssl.CERT_NONE
        self.tls_verified = ssl.create_default_context()

    def tls(self, verify: bool) -> ssl.SSLContext:
        return self.tls_verified if verify else self.tls_unverified

    async def close(self) -> None:
        await self.http.close()
