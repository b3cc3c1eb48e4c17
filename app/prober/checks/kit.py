"""What one probe needs: where to go and how, plus the shared client tools."""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from ipaddress import ip_address

import aiohttp

from app.domain.model import IPAddress, Monitor

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

    def __init__(self, concurrency: int, source: IPAddress | None = None) -> None:
        self._source = source
        self._http = self._session(concurrency, None)
        # Bound to the source address: used for targets of its family only.
        self._http_from_source = (
            self._session(concurrency, (str(source), 0)) if source else self._http
        )
        self.tls_unverified = ssl.create_default_context()
        self.tls_unverified.check_hostname = False
        self.tls_unverified.verify_mode = ssl.CERT_NONE
        self.tls_verified = ssl.create_default_context()

    @staticmethod
    def _session(
        concurrency: int, local: tuple[str, int] | None
    ) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(
                force_close=True, limit=concurrency, ttl_dns_cache=60, local_addr=local
            ),
            auto_decompress=False,
        )

    def local_addr(self, address: str) -> tuple[str, int] | None:
        """Where a connection to `address` leaves from: the source address when
        the target is a literal of its family, else the system's choice."""
        if self._source is None:
            return None
        try:
            family = ip_address(address).version
        except ValueError:
            return None  # a host name: its family is known only once resolved
        return (str(self._source), 0) if family == self._source.version else None

    def http_for(self, address: str) -> aiohttp.ClientSession:
        return self._http_from_source if self.local_addr(address) else self._http

    def tls(self, verify: bool) -> ssl.SSLContext:
        return self.tls_verified if verify else self.tls_unverified

    async def close(self) -> None:
        await self._http.close()
        if self._http_from_source is not self._http:
            await self._http_from_source.close()
