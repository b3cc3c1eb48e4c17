"""TCP monitor: connect, then close. Up if the handshake completes in time."""

from __future__ import annotations

import asyncio
import contextlib
import time

from app.domain.health import Verdict
from app.prober.checks.kit import Probe, ProbeKit


async def check(probe: Probe, kit: ProbeKit) -> Verdict:
    timeout = probe.monitor.timeout
    started = time.perf_counter()
    try:
        async with asyncio.timeout(timeout):
            _, writer = await asyncio.open_connection(
                probe.address, probe.port, local_addr=kit.local_addr(probe.address)
            )
    except TimeoutError:
        return Verdict(False, f"timeout after {timeout:g} s", outcome="timeout")
    except ConnectionRefusedError:
        return Verdict(False, "connection refused", outcome="refused")
    except OSError as exc:
        return Verdict(False, f"connect failed: {exc.strerror or exc}", outcome="error")
    latency = (time.perf_counter() - started) * 1e3
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return Verdict(True, f"TCP connect in {latency:.0f} ms", latency)
