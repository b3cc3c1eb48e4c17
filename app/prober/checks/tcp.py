"""TCP monitor: connect, then close. Up if the handshake completes in time."""

from __future__ import annotations

import asyncio
import contextlib
import time

from app.domain.health import Verdict
from app.domain.model import Monitor


async def check(host: str, port: int, monitor: Monitor) -> Verdict:
    started = time.perf_counter()
    try:
        async with asyncio.timeout(monitor.timeout):
            _, writer = await asyncio.open_connection(host, port)
    except TimeoutError:
        return Verdict(False, f"timeout after {monitor.timeout:g} s")
    except ConnectionRefusedError:
        return Verdict(False, "connection refused")
    except OSError as exc:
        return Verdict(False, f"connect failed: {exc.strerror or exc}")
    latency = (time.perf_counter() - started) * 1e3
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return Verdict(True, f"TCP connect in {latency:.0f} ms", latency)
