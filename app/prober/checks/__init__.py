"""One async function per monitor protocol, each returning a Verdict."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from types import MappingProxyType

from app.domain.health import Verdict
from app.domain.model import MonitorProtocol
from app.prober.checks import http, sip, tcp
from app.prober.checks.kit import Probe, ProbeKit

Check = Callable[[Probe, ProbeKit], Awaitable[Verdict]]

CHECKS: Mapping[MonitorProtocol, Check] = MappingProxyType(
    {
        MonitorProtocol.TCP: tcp.check,
        MonitorProtocol.HTTP: http.check,
        MonitorProtocol.HTTPS: http.check,
        MonitorProtocol.SIP_UDP: sip.check,
        MonitorProtocol.SIP_TCP: sip.check,
        MonitorProtocol.SIP_TLS: sip.check,
    }
)

__all__ = ["CHECKS", "Check", "Probe", "ProbeKit"]
