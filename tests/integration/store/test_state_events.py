"""Quarantines and silent probers told once, however many API processes
watch: StateWatch over a real store (SQLite and PostgreSQL), each watcher
standing for one API process seeing the same snapshot."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from app.domain.model import Config, Method, Monitor, MonitorProtocol, Quarantined
from app.domain.snapshot import Snapshot, compile_snapshot
from app.freshness import Freshness
from app.refresh import SnapshotHolder
from app.state_events import StateWatch
from app.store.sql import SqlStore
from tests.builders import make_endpoint, make_profile, make_zone

NOW = 1_800_000_000.0
PROBED = make_profile(
    "web",
    Method.PRIORITY,
    make_endpoint("a", "127.0.0.1", id=1),
    monitor=Monitor(protocol=MonitorProtocol.TCP, interval=10),
)


def snapshot(**more: Any) -> Snapshot:
    built = compile_snapshot(Config((make_zone(PROBED),)), {}, 1, NOW)
    return replace(built, **more)


def holder(shown: Snapshot, prober_seen_at: float | None) -> SnapshotHolder:
    held = SnapshotHolder(shown, Freshness(NOW))
    held.freshness.prober_seen_at = prober_seen_at
    return held


async def told(store: SqlStore) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (e.kind, e.subject, e.data)
        for e in await store.events_after(0, 1000)
        if e.kind in ("quarantine", "prober")
    ]


async def test_a_silent_prober_is_told_once_and_so_is_its_return(
    store: SqlStore,
) -> None:
    shown = holder(snapshot(), NOW - 5)
    watchers = [StateWatch(store, shown, lambda: NOW) for _ in range(3)]
    # Reporting, and nothing told before: nothing to say.
    assert sum(await asyncio.gather(*(w.tell_once() for w in watchers))) == 0
    shown.freshness.prober_seen_at = NOW - 31  # 3 intervals of 10 s, and more
    assert sum(await asyncio.gather(*(w.tell_once() for w in watchers))) == 1
    assert sum(await asyncio.gather(*(w.tell_once() for w in watchers))) == 0
    shown.freshness.prober_seen_at = NOW
    assert sum(await asyncio.gather(*(w.tell_once() for w in watchers))) == 1
    assert await told(store) == [
        ("prober", "prober", {"state": "stale"}),
        ("prober", "prober", {"state": "ok"}),
    ]
    # A process started later sees the probers reporting: already told.
    assert await StateWatch(store, shown, lambda: NOW).tell_once() == 0


async def test_a_quarantined_profile_is_told_once_and_so_is_its_recovery(
    store: SqlStore,
) -> None:
    poisoned = Quarantined(7, "tm.example.", "web", "endpoints.0.weight: -1", True)
    shown = holder(snapshot(quarantined={7: poisoned}), NOW)
    watchers = [StateWatch(store, shown, lambda: NOW) for _ in range(2)]
    assert sum(await asyncio.gather(*(w.tell_once() for w in watchers))) == 1
    shown.swap(snapshot(), shown.freshness.source)
    assert sum(await asyncio.gather(*(w.tell_once() for w in watchers))) == 1
    assert sum(await asyncio.gather(*(w.tell_once() for w in watchers))) == 0
    assert await told(store) == [
        (
            "quarantine",
            "tm.example./web",
            {
                "zone": "tm.example.",
                "profile": "web",
                "quarantined": True,
                "reason": "endpoints.0.weight: -1",
                "kept": True,
            },
        ),
        (
            "quarantine",
            "tm.example./web",
            {"zone": "tm.example.", "profile": "web", "quarantined": False},
        ),
    ]
