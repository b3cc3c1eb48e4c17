"""HTTP(S) monitor: one request; up if the status is expected (default 2xx).

Only the status line and headers are waited for, unless the monitor matches
a string in the body (`body_contains`): then the first BODY_WINDOW bytes are
read too, as Route 53 does. Redirects are not followed (a 301 is a failure
unless listed); for HTTPS the SNI is the Host, and the certificate is not
verified unless asked (as Azure).
"""

from __future__ import annotations

import asyncio
import time
from http import HTTPStatus

import aiohttp

from app.domain.health import Verdict
from app.domain.model import MonitorProtocol
from app.prober.checks.kit import USER_AGENT, Probe, ProbeKit, accepted, parse_codes

DEFAULT_CODES = "200-299"
BODY_WINDOW = 5120  # bytes of the body searched for body_contains (Route 53's)


def url_of(probe: Probe) -> str:
    scheme = "https" if probe.monitor.protocol is MonitorProtocol.HTTPS else "http"
    host = f"[{probe.address}]" if ":" in probe.address else probe.address
    return f"{scheme}://{host}:{probe.port}{probe.monitor.path}"


def host_header(probe: Probe, https: bool) -> str:
    """RFC 9110 §7.2: the host, and the port unless it is the scheme's own;
    an IPv6 literal in brackets. A Host given with its port is kept as is."""
    host = probe.host
    if host.startswith("[") or (host.count(":") == 1 and ":" in host):
        return host
    if ":" in host:
        host = f"[{host}]"
    default = 443 if https else 80
    return host if probe.port == default else f"{host}:{probe.port}"


def sni_of(host: str) -> str:
    """The name alone: no port, no brackets."""
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.split(":", 1)[0] if host.count(":") == 1 else host


async def check(probe: Probe, kit: ProbeKit) -> Verdict:
    monitor = probe.monitor
    https = monitor.protocol is MonitorProtocol.HTTPS
    headers = {
        "User-Agent": USER_AGENT,
        "Host": host_header(probe, https),
        **dict(monitor.headers),
    }
    started = time.perf_counter()
    try:
        async with asyncio.timeout(monitor.timeout):
            async with kit.http_for(probe.address).request(
                monitor.method.value,
                url_of(probe),
                headers=headers,
                allow_redirects=False,
                ssl=kit.tls(monitor.verify_tls) if https else False,
                server_hostname=sni_of(probe.host) if https else None,
            ) as response:
                status = response.status
                latency = (time.perf_counter() - started) * 1e3
                ok = accepted(
                    status, parse_codes(monitor.expected_status, DEFAULT_CODES)
                )
                lacks = None
                if ok and monitor.body_contains is not None:
                    head = await _head_of_body(response)
                    if monitor.body_contains.encode() not in head:
                        lacks = monitor.body_contains
    except TimeoutError:
        return Verdict(False, f"timeout after {monitor.timeout:g} s", outcome="timeout")
    except aiohttp.ClientConnectorCertificateError as exc:
        return Verdict(
            False, f"TLS certificate rejected: {exc.certificate_error}", outcome="tls"
        )
    except aiohttp.ClientConnectorError as exc:
        if isinstance(exc.os_error, ConnectionRefusedError):
            return Verdict(False, "connection refused", outcome="refused")
        return Verdict(False, f"connect failed: {_why(exc.os_error)}", outcome="error")
    except aiohttp.ClientError as exc:
        return Verdict(False, f"HTTP error: {exc.__class__.__name__}", outcome="error")
    reason = f"HTTP {status} {_phrase(status)}".strip() + f" in {latency:.0f} ms"
    if lacks is not None:
        return Verdict(False, f"{reason}, body lacks {lacks!r}", latency, "body")
    return Verdict(ok, reason, latency, "ok" if ok else "status")


async def _head_of_body(response: aiohttp.ClientResponse) -> bytes:
    """Up to BODY_WINDOW bytes, however the server chunks them; the rest is
    never read."""
    head = b""
    while len(head) < BODY_WINDOW:
        chunk = await response.content.read(BODY_WINDOW - len(head))
        if not chunk:
            break
        head += chunk
    return head


def _why(error: OSError) -> str:
    """The operating system's words, not aiohttp's repr of its TLS context."""
    return str(getattr(error, "strerror", None) or error or type(error).__name__)


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""
