"""HTTP(S) monitor: one request; up if the status is expected (default 2xx).

Only the status line and headers are waited for; redirects are not followed
(a 301 is a failure unless listed); for HTTPS the SNI is the Host, and the
certificate is not verified unless asked (as Azure).
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


def url_of(probe: Probe) -> str:
    scheme = "https" if probe.monitor.protocol is MonitorProtocol.HTTPS else "http"
    host = f"[{probe.address}]" if ":" in probe.address else probe.address
    return f"{scheme}://{host}:{probe.port}{probe.monitor.path}"


async def check(probe: Probe, kit: ProbeKit) -> Verdict:
    monitor = probe.monitor
    headers = {"User-Agent": USER_AGENT, "Host": probe.host, **dict(monitor.headers)}
    https = monitor.protocol is MonitorProtocol.HTTPS
    started = time.perf_counter()
    try:
        async with asyncio.timeout(monitor.timeout):
            async with kit.http.request(
                monitor.method.value,
                url_of(probe),
                headers=headers,
                allow_redirects=False,
                ssl=kit.tls(monitor.verify_tls) if https else False,
                server_hostname=probe.host if https else None,
            ) as response:
                status = response.status
    except TimeoutError:
        return Verdict(False, f"timeout after {monitor.timeout:g} s", outcome="timeout")
    except aiohttp.ClientConnectorCertificateError as exc:
        return Verdict(
            False, f"TLS certificate rejected: {exc.certificate_error}", outcome="tls"
        )
    except aiohttp.ClientConnectorError as exc:
        if isinstance(exc.os_error, ConnectionRefusedError):
            return Verdict(False, "connection refused", outcome="refused")
        return Verdict(False, f"connect failed: {exc}", outcome="error")
    except aiohttp.ClientError as exc:
        return Verdict(False, f"HTTP error: {exc.__class__.__name__}", outcome="error")
    latency = (time.perf_counter() - started) * 1e3
    phrase = _phrase(status)
    ok = accepted(status, parse_codes(monitor.expected_status, DEFAULT_CODES))
    reason = f"HTTP {status} {phrase}".strip() + f" in {latency:.0f} ms"
    return Verdict(ok, reason, latency, "ok" if ok else "status")


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""
