"""The probe loop: due endpoints are probed concurrently, verdicts become health.

The target list is derived from the live snapshot, so deleting or disabling an
endpoint stops its probes at once, a monitor change applies from the next
probe, and a new endpoint is probed within 1 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from random import Random

from app.domain.health import Verdict, after_probe, first_health
from app.domain.model import DEFAULT_PORTS, EndpointKind, Health, effective_monitor
from app.domain.snapshot import Snapshot
from app.metrics import Metrics
from app.prober.checks import CHECKS, Probe, ProbeKit
from app.prober.schedule import first_due, next_due
from app.store.base import Store, StoreUnavailable

log = logging.getLogger(__name__)
TICK = 0.05
PRUNE_EVERY = 3600.0


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


def targets_of(snapshot: Snapshot) -> dict[int, Target]:
    """Every enabled endpoint of an enabled profile whose monitor can be probed.

    The probe goes to the monitor's own address when it has one (an element
    whose health port is elsewhere), else to the served address or host.
    """
    found: dict[int, Target] = {}
    for zone in snapshot.config.zones:
        for profile in zone.profiles:
            if not profile.enabled:
                continue
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
                found[e.id] = Target(e.id, zone.name, profile.name, e.name, probe)
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
        self._due: dict[int, float] = {}
        self._targets: dict[int, Target] = {}
        self._generation = -1
        self._in_flight: dict[int, asyncio.Task[None]] = {}
        self.slips: deque[float] = deque(maxlen=200_000)  # seconds late, for benchmarks

    async def run(self, stop: asyncio.Event, known: Mapping[int, Health]) -> None:
        self._health = dict(known)
        kit = ProbeKit(self._concurrency)
        pruned = float("-inf")
        try:
            while not stop.is_set():
                self._sync_targets()
                self._launch_due(kit)
                if time.monotonic() - pruned > PRUNE_EVERY:
                    pruned = time.monotonic()
                    await self._prune()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), TICK)
        finally:
            for task in self._in_flight.values():
                task.cancel()
            await asyncio.gather(*self._in_flight.values(), return_exceptions=True)
            await kit.close()

    def _sync_targets(self) -> None:
        snapshot = self._snapshot()
        if snapshot.generation == self._generation:
            return
        self._generation = snapshot.generation
        fresh = targets_of(snapshot)
        now = time.monotonic()
        for gone in [i for i, t in self._targets.items() if fresh.get(i) != t]:
            if (task := self._in_flight.pop(gone, None)) is not None:
                task.cancel()  # deleted, disabled or changed: its verdict is moot
            if gone not in fresh:
                self._due.pop(gone, None)
        for new in fresh.keys() - self._targets.keys():
            self._due[new] = first_due(
                now, fresh[new].probe.monitor.interval, self._rng
            )
        self._targets = fresh

    def _launch_due(self, kit: ProbeKit) -> None:
        now = time.monotonic()
        for endpoint_id, due in self._due.items():
            if due <= now and endpoint_id not in self._in_flight:
                target = self._targets[endpoint_id]
                self._record_slip(now - due)
                interval = target.probe.monitor.interval
                self._due[endpoint_id] = next_due(now, interval, self._rng)
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
        await self._conclude(target, verdict)

    async def _conclude(self, target: Target, verdict: Verdict) -> None:
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
        try:
            await self._store.record_health(target.endpoint_id, new, prev.state)
        except StoreUnavailable:
            log.warning(
                "could not record health of %s: store unavailable", target.label
            )

    async def _prune(self) -> None:
        try:
            removed = await self._store.prune_transitions(
                self._clock() - self._retention
            )
        except StoreUnavailable:
            return
        if removed:
            log.info("pruned %d health transitions past retention", removed)
