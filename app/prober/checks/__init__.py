"""One async function per monitor protocol, each returning a Verdict."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from types import MappingProxyType

from app.domain.health import Verdict
from app.domain.model import Monitor, MonitorProtocol
from app.prober.checks import tcp

Check = Callable[[str, int, Monitor], Awaitable[Verdict]]

CHECKS: Mapping[MonitorProtocol, Check] = MappingProxyType(
    {
        MonitorProtocol.TCP: tcp.check,
    }
)
