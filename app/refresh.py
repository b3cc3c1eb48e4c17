"""Keeps the current Snapshot fresh. The DNS path only ever reads holder.current."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from app import snapshot_file
from app.domain.changes import fold
from app.domain.quarantine import keep_last_good
from app.domain.snapshot import Reuse, Snapshot, compile_snapshot
from app.freshness import Freshness, Source
from app.store.base import SnapshotReader, StoreUnavailable

log = logging.getLogger(__name__)
OUTAGE_POLL = 1.0  # the slowest poll while the database is unreachable
OUTAGE_LOG_EVERY = 30.0
SAVE_AT_MOST_EVERY = 1.0  # seconds between writes of the snapshot file


class SnapshotHolder:
    """One reference, swapped whole: readers never see a half-built snapshot."""

    def __init__(self, initial: Snapshot, freshness: Freshness) -> None:
        self.current = initial
        self.freshness = freshness

    def get(self) -> Snapshot:
        return self.current

    def swap(self, snapshot: Snapshot, source: Source) -> None:
        """Serve `snapshot` from now on; its quarantined profiles are logged
        once each time a snapshot is compiled."""
        for q in snapshot.quarantined.values():
            what = f"profile {q.name!r} of {q.zone}" if q.name else f"zone {q.zone}"
            kept = "its last good version answers" if q.kept else "left out"
            log.warning(
                "snapshot %d: %s quarantined (%s); %s",
                snapshot.generation,
                what,
                q.reason,
                kept,
            )
        self.current = snapshot
        self.freshness.source = source


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
    store: SnapshotReader,
    clock: Callable[[], float] = time.time,
    previous: Snapshot | None = None,
) -> Snapshot:
    """From a full read: at start, and when a change is too wide to fold in.
    A profile that cannot be read keeps its version in `previous`, if any.
    The generation is read with the prober's heartbeat, which profiles with
    on_stale=serve_all answer by."""
    started = time.perf_counter()
    with collector_paused():
        generation, prober_seen_at = await store.pulse()
        config, health = await store.load_all()
        if previous is not None:
            config = keep_last_good(config, previous.config)
        snapshot = compile_snapshot(
            config, health, generation, clock(), prober_seen_at=prober_seen_at
        )
    _took("full", snapshot, started)
    return snapshot


async def next_snapshot(
    store: SnapshotReader,
    current: Snapshot,
    clock: Callable[[], float] = time.time,
    prober_seen_at: float | None = None,
) -> Snapshot:
    """Read what changed since `current` and recompile only the profiles it
    touched; anything `fold` cannot account for takes a full read."""
    started = time.perf_counter()
    with collector_paused():
        changes = await store.load_changes(current.generation)
        folded = fold(current.config, current.health, changes)
    if folded is None:
        return await build_snapshot(store, clock, current)
    now = clock()
    if current.expires_at is not None and now >= current.expires_at:
        reuse = None  # an override ran out: every plan is looked at again
    else:
        reuse = Reuse(current, folded.dirty)
    with collector_paused():
        snapshot = compile_snapshot(
            folded.config, folded.health, changes.generation, now, reuse, prober_seen_at
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
    store: SnapshotReader,
    holder: SnapshotHolder,
    stop: asyncio.Event,
    every: float,
    clock: Callable[[], float] = time.time,
) -> None:
    """Poll the generation every `every` seconds (≤ 1 s, DESIGN §1) and recompile
    on change. While the database is unreachable, keep serving the last
    snapshot and poll less often, up to once a second, so recovery is seen
    within a second of the database being back."""
    delay = every
    while not stop.is_set():
        if await refresh_once(store, holder, clock):
            delay = every
        else:
            delay = min(delay * 2, max(every, OUTAGE_POLL))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), delay)


async def refresh_once(
    store: SnapshotReader,
    holder: SnapshotHolder,
    clock: Callable[[], float] = time.time,
) -> bool:
    """One poll; False while the database is unreachable. Any other error is
    raised to the supervisor, which logs it and starts the loop again."""
    fresh = holder.freshness
    try:
        current = holder.current
        generation, fresh.prober_seen_at = await store.pulse()
        if fresh.source is not Source.DATABASE or generation < current.generation:
            # From the local file, from nothing, or a database that went back
            # in time (restored, or a standby promoted behind): only a full
            # read can say what changed.
            holder.swap(await build_snapshot(store, clock, current), Source.DATABASE)
            log.info("serving live data, generation %d", holder.current.generation)
        else:
            # An operator override that runs out, or a prober going quiet or
            # coming back for profiles with on_stale=serve_all, changes
            # answers with no write.
            expired = current.expires_at is not None and clock() >= current.expires_at
            heard = current.stale_serving and (
                fresh.prober_seen_at != current.prober_seen_at
            )
            if expired or heard or generation != current.generation:
                holder.swap(
                    await next_snapshot(store, current, clock, fresh.prober_seen_at),
                    Source.DATABASE,
                )
    except StoreUnavailable as exc:
        _report_outage(fresh, holder.current, exc, clock())
        return False
    if fresh.unreachable_since is not None:
        log.warning(
            "store reachable again after %.1f s", clock() - fresh.unreachable_since
        )
    fresh.reached(generation, holder.current, clock())
    return True


def _report_outage(
    fresh: Freshness, current: Snapshot, exc: StoreUnavailable, now: float
) -> None:
    """The first failed poll of an outage is logged, then one line every
    OUTAGE_LOG_EVERY seconds; with nothing to serve, every attempt is."""
    first = fresh.unreachable_since is None
    fresh.lost(now)
    down = now - (fresh.unreachable_since or now)
    if fresh.source is Source.NONE:
        log.warning(
            "store unavailable (%s); nothing to serve yet, retrying (down %.1f s)",
            exc,
            down,
        )
    elif first or int(down / OUTAGE_LOG_EVERY) != int(
        (down - OUTAGE_POLL) / OUTAGE_LOG_EVERY
    ):
        log.warning(
            "store unavailable (%s) for %.1f s; serving snapshot %d from %s",
            exc,
            down,
            current.generation,
            fresh.source,
        )


async def save_forever(holder: SnapshotHolder, path: Path, stop: asyncio.Event) -> None:
    """Keep the local copy of the last good configuration current: written
    after each new generation from the database, at most once a second and
    at most a tenth of the time (a large configuration takes a while)."""
    written: int | None = None
    pause = SAVE_AT_MOST_EVERY
    while not stop.is_set():
        snapshot = holder.current
        if (
            holder.freshness.source is Source.DATABASE
            and snapshot.generation != written
        ):
            started = time.perf_counter()
            saved = snapshot_file.Saved(
                snapshot.generation, time.time(), snapshot.config, snapshot.health
            )
            await asyncio.to_thread(snapshot_file.write, path, saved)
            written = snapshot.generation
            took = time.perf_counter() - started
            pause = max(SAVE_AT_MOST_EVERY, 10 * took)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), pause)
