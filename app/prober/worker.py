"""The probe loop: due endpoints are probed concurrently, verdicts become health.

The target list is derived from the live snapshot, so deleting or disabling an
endpoint stops its probes at once, a monitor change applies from the next
probe, and a new endpoint is probed within 1 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from random import Random

from app.domain.health import Verdict, after_probe, first_health
from app.domain.model import (
    DEFAULT_PORTS,
    EndpointKind,
    Health,
    Profile,
    effective_monitor,
)
from app.domain.snapshot import Snapshot
from app.metrics import Metrics
from app.prober.checks import CHECKS, Probe, ProbeKit
from app.prober.schedule import first_due, next_due
from app.store.base import HealthUpdate, Store, StoreUnavailable

log = logging.getLogger(__name__)
TICK = 0.05
FLUSH_EVERY = 0.2  # with the 0.2 s snapshot refresh, a verdict is in DNS within 0.5 s
PRUNE_EVERY = 3600.0
HEARTBEAT_EVERY = 1.0


@dataclass(frozen=True, slots=True)
class Target:
    endpoint_id: int
    zone: str
    profile: str
    endpoint: str
    probe: Probe

    @property
    def label(self) -> str:
        return f"{self.profile}/{self.endpoint} in {self.zone}"


Known = dict[int, tuple[Profile, dict[int, Target]]]  # by profile id


def targets_of(snapshot: Snapshot, known: Known | None = None) -> dict[int, Target]:
    """Every enabled endpoint of an enabled profile whose monitor can be probed.

    The probe goes to the monitor's own address when it has one (an element
    whose health port is elsewhere), else to the served address or host.
    `known` keeps each profile's targets between calls: a profile that is the
    very same object as last time (a refresh keeps untouched ones) is not
    looked at again, so a change costs its profile, not every endpoint.
    """
    found: dict[int, Target] = {}
    seen: Known = {}
    for zone in snapshot.config.zones:
        for profile in zone.profiles:
            if not profile.enabled:
                continue
            cached = known.get(profile.id) if known is not None else None
            if cached is not None and cached[0] is profile:
                targets = cached[1]
            else:
                targets = _profile_targets(zone.name, profile)
            seen[profile.id] = (profile, targets)
            found.update(targets)
    if known is not None:
        known.clear()
        known.update(seen)
    return found


def _profile_targets(zone: str, profile: Profile) -> dict[int, Target]:
    found: dict[int, Target] = {}
    for e in profile.endpoints:
        monitor = effective_monitor(profile, e)
        if not e.enabled or monitor.protocol not in CHECKS:
            continue
        served = str(e.address) if e.kind is EndpointKind.ADDRESS else e.target
        address = monitor.address or served
        if address is None:
            continue
        port = monitor.port or DEFAULT_PORTS[monitor.protocol]
        host = monitor.host or (e.target or served or address).rstrip(".")
        probe = Probe(address.rstrip("."), port, monitor, host)
        found[e.id] = Target(e.id, zone, profile.name, e.name, probe)
    return found


class Prober:
    def __init__(
        self,
        store: Store,
        current_snapshot: Callable[[], Snapshot],
        concurrency: int,
        rng: Random,
        metrics: Metrics,
        retention: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._snapshot = current_snapshot
        self._slots = asyncio.Semaphore(concurrency)
        self._concurrency = concurrency
        self._rng = rng
        self._metrics = metrics
        self._retention = retention
        self._clock = clock
        self._health: dict[int, Health] = {}
        # _due is the authority; the heap may still hold superseded entries.
        self._due: dict[int, float] = {}
        self._heap: list[tuple[float, int]] = []
        self._spread: set[int] = set()  # endpoints already moved to a random phase
        self._pending: list[HealthUpdate] = []
        self._targets: dict[int, Target] = {}
        self._known: Known = {}
        self._generation = -1
        self._in_flight: dict[int, asyncio.Task[None]] = {}
        self.slips: deque[float] = deque(maxlen=200_000)  # seconds late, for benchmarks

    async def run(self, stop: asyncio.Event, known: Mapping[int, Health]) -> None:
        self._health = dict(known)
        kit = ProbeKit(self._concurrency)
        writer = asyncio.create_task(self._write_forever(stop))
        try:
            while not stop.is_set():
                self._sync_targets()
                self._launch_due(kit)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), TICK)
        finally:
            for task in self._in_flight.values():
                task.cancel()
            await asyncio.gather(*self._in_flight.values(), return_exceptions=True)
            await writer
            await self._flush()
            await kit.close()

    async def _write_forever(self, stop: asyncio.Event) -> None:
        """Writes run beside the probe loop, so a slow database never delays a
        probe; old transitions are pruned now and then."""
        pruned = beat = float("-inf")
        while not stop.is_set():
            await self._flush()
            if time.monotonic() - beat >= HEARTBEAT_EVERY:
                beat = time.monotonic()
                with contextlib.suppress(StoreUnavailable):
                    await self._store.heartbeat(self._clock())
            if time.monotonic() - pruned > PRUNE_EVERY:
                pruned = time.monotonic()
                await self._prune()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), FLUSH_EVERY)

    async def _flush(self) -> None:
        """Verdicts are written in batches: one transaction per flush, not per
        probe, so thousands of endpoints cost the database little."""
        batch, self._pending = self._pending, []
        try:
            await self._store.record_health_batch(batch)
        except StoreUnavailable:
            log.warning("could not record %d verdicts: store unavailable", len(batch))

    def _sync_targets(self) -> None:
        snapshot = self._snapshot()
        if snapshot.generation == self._generation:
            return
        self._generation = snapshot.generation
        fresh = targets_of(snapshot, self._known)
        now = time.monotonic()
        for gone in [i for i, t in self._targets.items() if fresh.get(i) != t]:
            if (task := self._in_flight.pop(gone, None)) is not None:
                task.cancel()  # deleted, disabled or changed: its verdict is moot
            if gone not in fresh:
                self._due.pop(gone, None)
        for endpoint_id, target in fresh.items():
            old = self._targets.get(endpoint_id)
            if old is None or old.probe != target.probe:
                # New, or checked differently now (a fixed port, a new path): the
                # new check runs within 1 s, not at the old one's next turn.
                self._spread.discard(endpoint_id)
                interval = target.probe.monitor.interval
                self._schedule(endpoint_id, first_due(now, interval, self._rng))
        self._targets = fresh

    def _schedule(self, endpoint_id: int, due: float) -> None:
        self._due[endpoint_id] = due
        heapq.heappush(self._heap, (due, endpoint_id))

    def _launch_due(self, kit: ProbeKit) -> None:
        """Start every probe whose time has come, earliest first (a heap: the
        cost is per due probe, not per endpoint)."""
        now = time.monotonic()
        while self._heap and self._heap[0][0] <= now:
            due, endpoint_id = heapq.heappop(self._heap)
            if self._due.get(endpoint_id) != due:
                continue  # rescheduled or removed since
            target = self._targets[endpoint_id]
            interval = target.probe.monitor.interval
            first = endpoint_id not in self._spread
            self._spread.add(endpoint_id)
            self._schedule(endpoint_id, next_due(now, interval, self._rng, first))
            if endpoint_id in self._in_flight:
                continue  # still running past its interval: skip this turn
            self._record_slip(now - due)
            task = asyncio.create_task(self._probe(target, kit))
            self._in_flight[endpoint_id] = task
            task.add_done_callback(self._finished(endpoint_id))

    def _record_slip(self, late: float) -> None:
        self.slips.append(late)
        self._metrics.probe_slip.observe(late)

    def _finished(self, endpoint_id: int) -> Callable[[asyncio.Task[None]], None]:
        def forget(task: asyncio.Task[None]) -> None:
            if self._in_flight.get(endpoint_id) is task:
                del self._in_flight[endpoint_id]

        return forget

    async def _probe(self, target: Target, kit: ProbeKit) -> None:
        protocol = target.probe.monitor.protocol
        async with self._slots:
            started = time.perf_counter()
            verdict = await CHECKS[protocol](target.probe, kit)
            took = time.perf_counter() - started
        self._metrics.probe_duration.labels(protocol.value).observe(took)
        result = "up" if verdict.ok else "down"
        self._metrics.probe_results.labels(
            protocol.value, result, verdict.outcome
        ).inc()
        if self._targets.get(target.endpoint_id) != target:
            return  # deleted or changed while the probe ran
        self._conclude(target, verdict)

    def _conclude(self, target: Target, verdict: Verdict) -> None:
        now = self._clock()
        prev = self._health.get(target.endpoint_id) or first_health(now)
        new = after_probe(prev, verdict, now, target.probe.monitor)
        self._health[target.endpoint_id] = new
        if new.state is not prev.state:
            log.info(
                "%s: %s → %s (%s)", target.label, prev.state, new.state, verdict.reason
            )
            self._metrics.transitions.labels(
                target.zone, target.profile, target.endpoint, new.state.value
            ).inc()
        self._pending.append(HealthUpdate(target.endpoint_id, new, prev.state))

    async def _prune(self) -> None:
        try:
            removed = await self._store.prune_transitions(
                self._clock() - self._retention
            )
        except StoreUnavailable:
            return
        if removed:
            log.info("pruned %d health transitions past retention", removed)
