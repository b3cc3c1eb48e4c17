"""Freshness: how current a process's snapshot is, and whether it is fit to serve.

The refresh loop records what it learns from each poll; /healthz and /metrics,
on the API port and on every role's own status listener, read it. The rule is
one: a process is behind when it has not confirmed, for longer than the limit,
that its snapshot holds the database's generation, whether because the
database is unreachable or because a refresh keeps failing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from app.domain.health import is_stale
from app.domain.model import Monitor, MonitorProtocol, effective_monitor
from app.domain.snapshot import Snapshot
from app.supervisor import Supervisor


class Source(StrEnum):
    """Where the snapshot being served came from."""

    DATABASE = "database"
    FILE = "file"  # the local copy, while the database was unreachable at start
    NONE = "none"  # nothing yet: DNS answers REFUSED


@dataclass(slots=True)
class Freshness:
    """Kept by the refresh loop; wall-clock seconds throughout."""

    started: float
    source: Source = Source.NONE
    store_generation: int | None = None
    confirmed_at: float | None = None  # the snapshot last held the store's generation
    unreachable_since: float | None = None
    prober_seen_at: float | None = None  # the prober's last heartbeat

    def reached(self, store_generation: int, snapshot: Snapshot, now: float) -> None:
        self.store_generation = store_generation
        self.unreachable_since = None
        if snapshot.generation >= store_generation:
            self.confirmed_at = now

    def lost(self, now: float) -> None:
        if self.unreachable_since is None:
            self.unreachable_since = now

    def lag_seconds(self, now: float) -> float:
        """Seconds since the snapshot was last known to be current."""
        return max(0.0, now - (self.confirmed_at or self.started))


@dataclass(frozen=True, slots=True)
class Vitals:
    """Everything /healthz and /metrics read, whatever the role."""

    snapshot: Callable[[], Snapshot]
    freshness: Freshness
    supervisor: Supervisor
    max_lag: float
    judge_prober: bool  # a stale prober fails /healthz (api and all roles)
    verdicts_pending: Callable[[], int] = field(default=lambda: 0)


def assess(vitals: Vitals, now: float) -> tuple[bool, dict[str, Any]]:
    """(fit to serve, the /healthz body)."""
    snapshot, fresh = vitals.snapshot(), vitals.freshness
    lag = fresh.lag_seconds(now)
    problems: list[str] = []
    if fresh.source is Source.NONE:
        problems.append("no configuration loaded yet")
    if lag > vitals.max_lag:
        problems.append(f"snapshot not confirmed current for {lag:.1f} s")
    if (
        fresh.unreachable_since is not None
        and now - fresh.unreachable_since > vitals.max_lag
    ):
        down = now - fresh.unreachable_since
        problems.append(f"database unreachable for {down:.1f} s")
    failing = vitals.supervisor.failing()
    problems += [f"loop {name} keeps failing" for name in failing]
    prober = prober_verdict(snapshot, fresh.prober_seen_at, now)
    if vitals.judge_prober and prober == "stale":
        problems.append("the prober has not reported for 3 probe intervals")
    store_generation = (
        fresh.store_generation if fresh.unreachable_since is None else None
    )
    body: dict[str, Any] = {
        "status": "failing" if problems else "ok",
        "problems": problems,
        "source": fresh.source.value,
        "snapshot_generation": snapshot.generation,
        "snapshot_age_seconds": round(now - snapshot.compiled_at, 3),
        "store_generation": store_generation,
        "lag_generations": (
            None if store_generation is None else store_generation - snapshot.generation
        ),
        "lag_seconds": round(lag, 3),
        "database": "unreachable" if fresh.unreachable_since is not None else "ok",
        "database_unreachable_seconds": (
            None
            if fresh.unreachable_since is None
            else round(now - fresh.unreachable_since, 3)
        ),
        "prober": prober,
        "prober_last_report_seconds": (
            None
            if fresh.prober_seen_at is None
            else round(now - fresh.prober_seen_at, 3)
        ),
        "verdicts_pending": vitals.verdicts_pending(),
        "quarantined": [
            {
                "zone": q.zone,
                "profile": q.name or None,  # None: the zone itself
                "reason": q.reason,
                "kept": q.kept,
            }
            for q in snapshot.quarantined.values()
        ],
        "loops": {
            s.name: {
                "state": "failing" if s.name in failing else "running",
                "restarts": s.restarts,
                "last_error": s.last_error,
            }
            for s in vitals.supervisor.loops.values()
        },
    }
    return not problems, body


def prober_verdict(snapshot: Snapshot, seen: float | None, now: float) -> str:
    """ "ok", "stale" (no heartbeat for 3 of the shortest intervals), or "idle"
    when nothing is probed."""
    intervals = [
        effective_monitor(p, e).interval
        for z in snapshot.config.zones
        for p in z.profiles
        for e in p.endpoints
        if effective_monitor(p, e).protocol is not MonitorProtocol.NONE
    ]
    if not intervals:
        return "idle"
    return "stale" if is_stale(seen, Monitor(interval=min(intervals)), now) else "ok"
