"""Keeps the current Snapshot fresh. The DNS path only ever reads holder.current."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from app.domain.snapshot import Snapshot, compile_snapshot
from app.store.base import Store, StoreUnavailable

log = logging.getLogger(__name__)


class SnapshotHolder:
    """One reference, swapped whole: readers never see a half-built snapshot."""

    def __init__(self, initial: Snapshot) -> None:
        self.current = initial
        self.prober_seen_at: float | None = None  # the prober's last heartbeat

    def get(self) -> Snapshot:
        return self.current

    def seen(self) -> float | None:
        return self.prober_seen_at


async def build_snapshot(
    store: Store, clock: Callable[[], float] = time.time
) -> Snapshot:
    generation = await store.generation()
    config, health = await store.load_all()
    started = time.perf_counter()
    snapshot = compile_snapshot(config, health, generation, clock())
    log.info(
        "snapshot %d compiled in %.1f ms",
        generation,
        (time.perf_counter() - started) * 1e3,
    )
    return snapshot


async def refresh_forever(
    store: Store,
    holder: SnapshotHolder,
    stop: asyncio.Event,
    every: float,
    clock: Callable[[], float] = time.time,
) -> None:
    """Poll the generation every `every` seconds (≤ 1 s, DESIGN §1) and recompile on
    change; while the database is unreachable, keep serving the last snapshot."""
    outage = False
    while not stop.is_set():
        try:
            current = holder.current
            generation, holder.prober_seen_at = await store.pulse()
            # An operator override that runs out changes answers with no write.
            expired = current.expires_at is not None and clock() >= current.expires_at
            if expired or generation != current.generation:
                holder.current = await build_snapshot(store, clock)
            if outage:
                log.warning("store reachable again")
                outage = False
        except StoreUnavailable as exc:
            if not outage:
                log.warning(
                    "store unavailable (%s); serving snapshot %d",
                    exc,
                    holder.current.generation,
                )
                outage = True
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every)
