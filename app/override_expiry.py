"""Overrides that run out are removed from the configuration, as a change of
its own: audited, with an `override` event (change "expire") for the stream
and webhooks, so the configuration read back says what DNS does.

DNS does not wait for this: each snapshot knows the next expiry and answers
as if the override were gone from that moment (app.refresh). A loop of the
API role: with several API processes each tries, and the first to commit
wins; the others find nothing left to remove and write nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from app.domain.snapshot import Snapshot
from app.store.base import AdminStore, StoreUnavailable

log = logging.getLogger(__name__)
EVERY = 1.0


class OverrideExpiry:
    def __init__(
        self,
        store: AdminStore,
        current: Callable[[], Snapshot],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._current = current
        self._clock = clock
        self._failed: set[tuple[str, str, float]] = set()  # told once each

    def due(self, now: float) -> list[tuple[str, str, float]]:
        """(zone, profile, latest expiry passed) of the profiles holding an
        override that has run out, as the snapshot has them."""
        found = []
        for zone in self._current().config.zones:
            for profile in zone.profiles:
                ends = [
                    e.override.until
                    for e in profile.endpoints
                    if e.override is not None
                    and e.override.until is not None
                    and e.override.until <= now
                ]
                if ends:
                    found.append((zone.name, profile.name, max(ends)))
        return found

    async def expire_once(self) -> int:
        """Remove what has run out; returns how many profiles changed."""
        now, changed = self._clock(), 0
        for zone, profile, until in self.due(now):
            try:
                changed += await self._store.expire_overrides(zone, profile, now)
            except StoreUnavailable:
                raise
            except Exception as exc:  # one unreadable profile must not stop the rest
                if (zone, profile, until) not in self._failed:
                    self._failed.add((zone, profile, until))
                    log.warning(
                        "cannot remove the expired overrides of %s in %s: %s",
                        profile,
                        zone,
                        exc,
                    )
        return changed

    async def expire_forever(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            with contextlib.suppress(StoreUnavailable):
                await self.expire_once()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), EVERY)
