"""One async function per monitor protocol, each returning a Verdict."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from types import MappingProxyType

from app.domain.health import Verdict, combined, inverted
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


async def run_probe(probe: Probe, kit: ProbeKit) -> Verdict:
    """One probe as its monitor says: a single check, or every check of a
    composite monitor at once, combined by `require`; inverted where asked."""
    if not probe.parts:
        verdict = await CHECKS[probe.monitor.protocol](probe, kit)
        return inverted(verdict) if probe.monitor.invert else verdict
    verdicts = await asyncio.gather(*(run_probe(part, kit) for _, part in probe.parts))
    named = [(name, v) for (name, _), v in zip(probe.parts, verdicts, strict=True)]
    verdict = combined(named, probe.monitor.required())
    return inverted(verdict) if probe.monitor.invert else verdict


__all__ = ["CHECKS", "Check", "Probe", "ProbeKit", "run_probe"]
