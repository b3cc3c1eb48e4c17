"""The probe loop: due endpoints are probed concurrently, verdicts become health.

The target list is derived from the live snapshot, so deleting or disabling an
endpoint stops its probes at the next tick, and a new one is probed within 1 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from random import Random

from app.domain.health import after_probe, first_health
from app.domain.model import (
    DEFAULT_PORTS,
    EndpointKind,
    Health,
    Monitor,
    effective_monitor,
)
from app.domain.snapshot import Snapshot
from app.prober.checks import CHECKS
from app.prober.schedule import first_due, next_due
from app.store.base import Store, StoreUnavailable

log = logging.getLogger(__name__)
TICK = 0.05


@dataclass(frozen=True, slots=True)
class Target:
    endpoint_id: int
    label: str  # "profile.zone./endpoint" for logs
    host: str
    port: int
    monitor: Monitor


def targets_of(snapshot: Snapshot) -> dict[int, Target]:
    """Every enabled endpoint of an enabled profile whose monitor can be probed."""
    found: dict[int, Target] = {}
    for zone in snapshot.config.zones:
        for profile in zone.profiles:
            if not profile.enabled:
                continue
            for e in profile.endpoints:
                monitor = effective_monitor(profile, e)
                if not e.enabled or monitor.protocol not in CHECKS:
                    continue
                host = str(e.address) if e.kind is EndpointKind.ADDRESS else e.target
                if host is None:
                    continue
                port = monitor.port or DEFAULT_PORTS[monitor.protocol]
                label = f"{profile.name}.{zone.name}/{e.name}"
                found[e.id] = Target(e.id, label, host, port, monitor)
    return found


class Prober:
    def __init__(
        self,
        store: Store,
        current_snapshot: Callable[[], Snapshot],
        concurrency: int,
        rng: Random,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._snapshot = current_snapshot
        self._slots = asyncio.Semaphore(concurrency)
        self._rng = rng
        self._clock = clock
        self._health: dict[int, Health] = {}
        self._due: dict[int, float] = {}
        self._targets: dict[int, Target] = {}
        self._generation = -1
        self._in_flight: dict[int, asyncio.Task[None]] = {}

    async def run(self, stop: asyncio.Event, known: Mapping[int, Health]) -> None:
        self._health = dict(known)
        try:
            while not stop.is_set():
                self._sync_targets()
                self._launch_due()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), TICK)
        finally:
            for task in self._in_flight.values():
                task.cancel()
            await asyncio.gather(*self._in_flight.values(), return_exceptions=True)

    def _sync_targets(self) -> None:
        snapshot = self._snapshot()
        if snapshot.generation == self._generation:
            return
        self._generation = snapshot.generation
        fresh = targets_of(snapshot)
        now = time.monotonic()
        for gone in self._targets.keys() - fresh.keys():
            self._due.pop(gone, None)
            if (task := self._in_flight.pop(gone, None)) is not None:
                task.cancel()  # DESIGN §5: deleting or disabling stops probes at once
        for new in fresh.keys() - self._targets.keys():
            self._due[new] = first_due(now, fresh[new].monitor.interval, self._rng)
        self._targets = fresh

    def _launch_due(self) -> None:
        now = time.monotonic()
        for endpoint_id, due in self._due.items():
            if due <= now and endpoint_id not in self._in_flight:
                target = self._targets[endpoint_id]
                self._due[endpoint_id] = next_due(
                    now, target.monitor.interval, self._rng
                )
                task = asyncio.create_task(self._probe(target))
                self._in_flight[endpoint_id] = task
                task.add_done_callback(self._finished(endpoint_id))

    def _finished(self, endpoint_id: int) -> Callable[[asyncio.Task[None]], None]:
        def forget(task: asyncio.Task[None]) -> None:
            if self._in_flight.get(endpoint_id) is task:
                del self._in_flight[endpoint_id]

        return forget

    async def _probe(self, target: Target) -> None:
        async with self._slots:
            verdict = await CHECKS[target.monitor.protocol](
                target.host, target.port, target.monitor
            )
        if self._targets.get(target.endpoint_id) != target:
            return  # deleted or changed while the probe ran
        now = self._clock()
        prev = self._health.get(target.endpoint_id) or first_health(now)
        new = after_probe(prev, verdict, now, target.monitor)
        self._health[target.endpoint_id] = new
        if new.state is not prev.state:
            log.info(
                "%s: %s → %s (%s)", target.label, prev.state, new.state, verdict.reason
            )
        try:
            await self._store.record_health(target.endpoint_id, new, prev.state)
        except StoreUnavailable:
            log.warning(
                "could not record health of %s: store unavailable", target.label
            )
