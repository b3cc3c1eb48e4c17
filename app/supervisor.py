"""Supervisor: every long-running loop of every role runs under it.

A loop that raises (or returns before stop) is logged with its traceback and
started again after a capped exponential backoff, and its restarts are
counted, so no background task dies unnoticed. A loop that keeps failing is
reported (by `failing()`) so /healthz can say so, while the rest of the
process, DNS answering from its last good snapshot included, goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)

Loop = Callable[[], Awaitable[None]]


@dataclass(slots=True)
class LoopStatus:
    """What the supervisor knows of one loop, for /healthz and /metrics."""

    name: str
    restarts: int = 0
    streak: int = 0  # failures in a row, each after a short run
    last_error: str | None = None
    running_since: float = 0.0  # monotonic, of the current run

    def failing(self, now: float, settle: float, after: int) -> bool:
        """Failed `after` times in a row and not yet run `settle` seconds since."""
        return self.streak >= after and now - self.running_since < settle


class Supervisor:
    """Runs loops as tasks until `stop` is set, restarting any that fail.

    Backoff doubles from `first_delay` up to `max_delay`; it starts again from
    `first_delay` once a loop has run `settle` seconds without failing.
    """

    def __init__(
        self,
        stop: asyncio.Event,
        *,
        first_delay: float = 0.5,
        max_delay: float = 30.0,
        settle: float = 30.0,
        failing_after: int = 3,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stop = stop
        self._first, self._max, self._settle = first_delay, max_delay, settle
        self._failing_after = failing_after
        self._clock = clock
        self.loops: dict[str, LoopStatus] = {}
        self.tasks: list[asyncio.Task[None]] = []

    def start(self, name: str, loop: Loop) -> asyncio.Task[None]:
        if name in self.loops:
            raise ValueError(f"a loop named {name!r} already runs")
        self.loops[name] = LoopStatus(name, running_since=self._clock())
        task = asyncio.create_task(self._keep(self.loops[name], loop), name=name)
        self.tasks.append(task)
        return task

    def failing(self) -> list[str]:
        now = self._clock()
        return [
            s.name
            for s in self.loops.values()
            if s.failing(now, self._settle, self._failing_after)
        ]

    async def wait(self) -> None:
        """Every loop has ended (after stop is set)."""
        await asyncio.gather(*self.tasks, return_exceptions=True)

    async def _keep(self, status: LoopStatus, loop: Loop) -> None:
        delay = self._first
        while not self._stop.is_set():
            status.running_since = started = self._clock()
            try:
                await loop()
                if self._stop.is_set():
                    return
                raise RuntimeError("the loop returned before the process stopped")
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                now = self._clock()
                if now - started >= self._settle:
                    delay, status.streak = self._first, 0
                status.restarts += 1
                status.streak += 1
                status.last_error = f"{type(exc).__name__}: {exc}"
                log.error(
                    "loop %s failed (%d in a row); restarting in %.1f s",
                    status.name,
                    status.streak,
                    delay,
                    exc_info=exc,
                )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), delay)
            delay = min(delay * 2, self._max)
