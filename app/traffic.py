"""Traffic for the dashboard's charts: every DNS process adds, each interval,
what it answered since the last time (queries per profile, answers per
endpoint) to the store's per-minute rows, where the API reads them.

The counts come from the same totals /metrics reports (QueryStats), so the
charts and the metrics agree, and the fast path pays nothing more. What
cannot be written (the database away) is kept and added later, up to a day:
older minutes are pruned from the store anyway.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from app.dns.querystats import QueryStats
from app.store.base import StoreUnavailable, TrafficWriter
from app.store.traffic import RETENTION_SECONDS, minute_of

log = logging.getLogger(__name__)
PRUNE_EVERY = 600.0
Key = tuple[int, str, str, str]  # minute, zone, profile, endpoint ("" = queries)


class TrafficRecorder:
    def __init__(
        self,
        store: TrafficWriter,
        totals: Callable[[], QueryStats],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._totals = totals
        self._clock = clock
        self._seen: dict[tuple[str, str, str], int] = {}  # totals at the last take
        self._pending: dict[Key, int] = {}
        self._pruned_at = 0.0

    @property
    def pending(self) -> int:
        return len(self._pending)

    def take(self) -> None:
        """Move what was answered since the last take into the pending counts,
        under the current minute."""
        stats = self._totals()
        now: dict[tuple[str, str, str], int] = {}
        for (zone, profile, _, _), n in stats.queries.items():
            if profile:  # names outside profiles have no chart
                key = (zone, profile, "")
                now[key] = now.get(key, 0) + n
        now.update(stats.answers)
        minute = minute_of(self._clock())
        for key, total in now.items():
            delta = total - self._seen.get(key, 0)
            if delta > 0:
                slot = (minute, *key)
                self._pending[slot] = self._pending.get(slot, 0) + delta
        self._seen = now

    async def flush(self) -> None:
        """Write the pending counts; kept for the next flush if the store is
        away, but never more than the store would keep."""
        self.take()
        if not self._pending:
            return
        try:
            await self._store.add_traffic(self._pending)
        except StoreUnavailable:
            oldest = minute_of(self._clock() - RETENTION_SECONDS)
            self._pending = {k: n for k, n in self._pending.items() if k[0] >= oldest}
            return
        self._pending = {}
        await self._prune()

    async def _prune(self) -> None:
        now = self._clock()
        if now - self._pruned_at < PRUNE_EVERY:
            return
        self._pruned_at = now
        removed = await self._store.prune_traffic(minute_of(now - RETENTION_SECONDS))
        if removed:
            log.info("pruned %d traffic rows older than a day", removed)

    async def record_forever(self, stop: asyncio.Event, interval: float) -> None:
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), interval)
            with contextlib.suppress(StoreUnavailable):
                await self.flush()
