"""Keeps the current Snapshot fresh. The DNS path only ever reads holder.current."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import Callable, Iterator

from app.domain.changes import fold
from app.domain.snapshot import Reuse, Snapshot, compile_snapshot
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


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """A build allocates about ten objects per endpoint, nearly all of which
    live on; the cyclic collector would walk the growing heap again and again
    (a dozen full passes at 10,000 profiles, over half the build time) and free
    nothing, since snapshots hold no cycles and reference counting frees them."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


async def build_snapshot(
    store: Store, clock: Callable[[], float] = time.time
) -> Snapshot:
    """From a full read: at start, and when a change is too wide to fold in."""
    started = time.perf_counter()
    with collector_paused():
        generation = await store.generation()
        config, health = await store.load_all()
        snapshot = compile_snapshot(config, health, generation, clock())
    _took("full", snapshot, started)
    return snapshot


async def next_snapshot(
    store: Store, current: Snapshot, clock: Callable[[], float] = time.time
) -> Snapshot:
    """Read what changed since `current` and recompile only the profiles it
    touched; anything `fold` cannot account for takes a full read."""
    started = time.perf_counter()
    with collector_paused():
        changes = await store.load_changes(current.generation)
        folded = fold(current.config, current.health, changes)
    if folded is None:
        return await build_snapshot(store, clock)
    now = clock()
    if current.expires_at is not None and now >= current.expires_at:
        reuse = None  # an override ran out: every plan is looked at again
    else:
        reuse = Reuse(current, folded.dirty)
    with collector_paused():
        snapshot = compile_snapshot(
            folded.config, folded.health, changes.generation, now, reuse
        )
    _took(f"{len(folded.dirty)} profiles", snapshot, started)
    return snapshot


def _took(what: str, snapshot: Snapshot, started: float) -> None:
    log.info(
        "snapshot %d (%s) in %.1f ms",
        snapshot.generation,
        what,
        (time.perf_counter() - started) * 1e3,
    )


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
                holder.current = await next_snapshot(store, current, clock)
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
