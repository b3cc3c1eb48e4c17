"""Events for states no single change makes, which every process sees for
itself: a profile quarantined (its rows do not read; its last good version
may still answer) or readable again, and the probers all silent (DNS then
answers as each profile's `on_stale` says) or reporting again.

A loop of the API role. Each process tells what it sees change; the store
writes an event only when the subject's latest one says otherwise
(Events.record_state), so several API processes tell it once.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

from app.domain.snapshot import Snapshot
from app.freshness import prober_verdict
from app.refresh import SnapshotHolder
from app.store.base import AdminStore, StoreUnavailable

EVERY = 1.0
PROBER = "prober"  # the subject of the prober events: the fleet of probers


class StateWatch:
    def __init__(
        self,
        store: AdminStore,
        holder: SnapshotHolder,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._holder = holder
        self._clock = clock
        # (kind, subject) → the data last told (or found told already)
        self._told: dict[tuple[str, str], dict[str, Any]] = {}

    def states(self, snapshot: Snapshot, now: float) -> dict[tuple[str, str], Any]:
        """What this process sees now: (kind, subject) → (data, normal)."""
        found: dict[tuple[str, str], Any] = {}
        for q in snapshot.quarantined.values():
            subject = f"{q.zone}/{q.name}" if q.name else q.zone
            data = {
                "zone": q.zone,
                "profile": q.name or None,
                "quarantined": True,
                "reason": q.reason,
                "kept": q.kept,
            }
            found["quarantine", subject] = (data, False)
        for kind, subject in self._told:
            if kind == "quarantine" and (kind, subject) not in found:
                zone, _, profile = subject.partition("/")
                data = {"zone": zone, "profile": profile or None, "quarantined": False}
                found[kind, subject] = (data, True)
        seen = self._holder.freshness.prober_seen_at
        verdict = prober_verdict(snapshot, seen, now)
        if verdict != "idle":
            found["prober", PROBER] = ({"state": verdict}, verdict == "ok")
        return found

    async def tell_once(self) -> int:
        """Tell what changed since the last round; returns how many events
        this process wrote."""
        now = self._clock()
        wrote = 0
        for (kind, subject), (data, normal) in self.states(
            self._holder.get(), now
        ).items():
            if self._told.get((kind, subject)) == data:
                continue
            wrote += await self._store.record_state(now, kind, subject, data, normal)
            if normal and kind == "quarantine":
                self._told.pop((kind, subject), None)  # nothing left to watch
            else:
                self._told[kind, subject] = data
        return wrote

    async def watch_forever(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            with contextlib.suppress(StoreUnavailable):
                await self.tell_once()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), EVERY)
