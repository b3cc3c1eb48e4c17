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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from random import Random

from app.domain.health import Verdict, after_probe, first_health
from app.domain.model import (
    DEFAULT_PORTS,
    EndpointKind,
    Health,
    HealthState,
    IPAddress,
    Monitor,
    Profile,
    effective_monitor,
)
from app.domain.snapshot import Snapshot
from app.metrics import Metrics
from app.prober.checks import CHECKS, Probe, ProbeKit, run_probe
from app.prober.schedule import first_due, next_due
from app.store.base import (
    LOCAL_VANTAGE,
    HealthUpdate,
    HealthWriter,
    StoreUnavailable,
)

log = logging.getLogger(__name__)
TICK = 0.05
MAX_PENDING = 100_000  # unwritten verdicts kept through an outage (merged past it)
FLUSH_EVERY = 0.2  # with the 0.2 s snapshot refresh, a verdict is in DNS within 0.5 s
PRUNE_EVERY = 3600.0
HEARTBEAT_EVERY = 1.0
# tmdns_vantage_view: 1 up, 0 down, -1 still checking.
_VIEW_VALUES = {HealthState.ONLINE: 1, HealthState.OFFLINE: 0}


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
        if not e.enabled or e.always_serve or monitor.protocol not in CHECKS:
            continue  # always_serve: answered whatever a probe would say
        served = str(e.address) if e.kind is EndpointKind.ADDRESS else e.target
        probe = _probe_of(monitor, served, e.target)
        if probe is None:
            continue
        if monitor.checks:
            parts = [_probe_of(check, served, e.target) for check in monitor.checks]
            probe = replace(
                probe,
                parts=tuple((f"{p.monitor.protocol} {p.port}", p) for p in parts if p),
            )
        found[e.id] = Target(e.id, zone, profile.name, e.name, probe)
    return found


def _probe_of(monitor: Monitor, served: str | None, target: str | None) -> Probe | None:
    """Where and how one check goes: the monitor's own address when it has one
    (an element whose health port is elsewhere), else the served address or
    host; None when there is nowhere to go."""
    address = monitor.address or served
    if address is None:
        return None
    port = monitor.port or DEFAULT_PORTS[monitor.protocol]
    host = monitor.host or (target or served or address).rstrip(".")
    return Probe(address.rstrip("."), port, monitor, host)


class Prober:
    def __init__(
        self,
        store: HealthWriter,
        current_snapshot: Callable[[], Snapshot],
        concurrency: int,
        rng: Random,
        metrics: Metrics,
        retention: float,
        clock: Callable[[], float] = time.time,
        source: IPAddress | None = None,
        vantage: str = LOCAL_VANTAGE,
    ) -> None:
        self._store = store
        self._source = source
        self.vantage = vantage
        self._snapshot = current_snapshot
        self._slots = asyncio.Semaphore(concurrency)
        self._concurrency = concurrency
        self._rng = rng
        self._metrics = metrics
        self._retention = retention
        self._clock = clock
        self._health: dict[int, Health] | None = None  # loaded when the loop starts
        # _due is the authority; the heap may still hold superseded entries.
        self._due: dict[int, float] = {}
        self._heap: list[tuple[float, int]] = []
        self._spread: set[int] = set()  # endpoints already moved to a random phase
        self._pending: list[HealthUpdate] = []
        self._backlogged = False
        self._targets: dict[int, Target] = {}
        self._known: Known = {}
        self._generation = -1
        self._in_flight: dict[int, asyncio.Task[None]] = {}
        self.slips: deque[float] = deque(maxlen=200_000)  # seconds late, for benchmarks

    def loops(self, stop: asyncio.Event) -> dict[str, Callable[[], Awaitable[None]]]:
        """The prober's loops, each to run under the supervisor: probes never
        wait for the database, and a failure of one loop stops no other."""
        return {
            "probe-scheduler": lambda: self.schedule_forever(stop),
            "verdict-writer": lambda: self.write_forever(stop),
            "heartbeat": lambda: self.heartbeat_forever(stop),
            "retention": lambda: self.prune_forever(stop),
        }

    async def schedule_forever(self, stop: asyncio.Event) -> None:
        if self._health is None:
            self._health = await self._known_health(stop)
        kit = ProbeKit(self._concurrency, self._source)
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
            self._in_flight.clear()
            self._generation = -1  # a restarted loop looks at every target again
            self._targets = {}
            await kit.close()

    async def _known_health(self, stop: asyncio.Event) -> dict[int, Health]:
        """This vantage's stored views, so the first probe after a start
        continues each endpoint's count instead of starting from `checking`."""
        delay = 0.5
        while True:
            try:
                return await self._store.views_of(self.vantage)
            except StoreUnavailable as exc:
                log.warning("prober waits for the store (%s); retrying", exc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)
            if stop.is_set():
                return {}
            delay = min(delay * 2, 5.0)

    async def write_forever(self, stop: asyncio.Event) -> None:
        """Writes run beside the probe loop, so a slow database never delays a
        probe; the last verdicts are written on the way out."""
        try:
            while not stop.is_set():
                await self._flush()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), FLUSH_EVERY)
        finally:
            if stop.is_set():
                await self._flush()

    async def heartbeat_forever(self, stop: asyncio.Event) -> None:
        """The vantage is alive (shown as stale states when every vantage
        stops); each heartbeat also judges whether the other vantages still
        report, and a change of who votes is logged here, as its own event."""
        source = str(self._source) if self._source is not None else None
        while not stop.is_set():
            with contextlib.suppress(StoreUnavailable):
                changed = await self._store.heartbeat(
                    self._clock(), self.vantage, source
                )
                for v in changed:
                    if v.voting:
                        log.info("vantage %s reports: its views count", v.name)
                    else:
                        log.warning(
                            "vantage %s stale: no heartbeat for %.0f s, its views "
                            "no longer count",
                            v.name,
                            self._clock() - v.seen_at,
                        )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), HEARTBEAT_EVERY)

    async def prune_forever(self, stop: asyncio.Event) -> None:
        """Old transitions go after the retention, once an hour."""
        while not stop.is_set():
            await self._prune()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), PRUNE_EVERY)

    @property
    def pending(self) -> int:
        """Verdicts not yet written (kept through a database outage)."""
        return len(self._pending)

    async def _flush(self) -> None:
        """Verdicts are written in batches: one transaction per flush, not per
        probe, so thousands of endpoints cost the database little. A batch
        that cannot be written is kept, in order, for the next flush."""
        if not self._pending:
            return
        batch, self._pending = self._pending, []
        try:
            await self._store.record_health_batch(batch, self.vantage)
        except BaseException as exc:
            self._pending = keep_bounded(batch + self._pending, MAX_PENDING)
            if isinstance(exc, StoreUnavailable):
                if not self._backlogged:
                    log.warning(
                        "store unavailable (%s): keeping %d verdicts until it is back",
                        exc,
                        len(self._pending),
                    )
                self._backlogged = True
                return
            raise
        if self._backlogged:
            log.info("wrote %d verdicts kept through the outage", len(batch))
            self._backlogged = False

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
                self._forget_view(self._targets[gone])
        for endpoint_id, target in fresh.items():
            old = self._targets.get(endpoint_id)
            if old is None or old.probe != target.probe:
                # New, or checked differently now (a fixed port, a new path): the
                # new check runs within 1 s, not at the old one's next turn.
                self._spread.discard(endpoint_id)
                interval = target.probe.monitor.interval
                self._schedule(endpoint_id, first_due(now, interval, self._rng))
        self._targets = fresh

    def _forget_view(self, target: Target) -> None:
        labels = (self.vantage, target.zone, target.profile, target.endpoint)
        with contextlib.suppress(KeyError):
            self._metrics.vantage_view.remove(*labels)

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
            verdict = await run_probe(target.probe, kit)
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
        if self._health is None:
            self._health = {}
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
        self._metrics.vantage_view.labels(
            self.vantage, target.zone, target.profile, target.endpoint
        ).set(_VIEW_VALUES.get(new.state, -1))
        quorum = target.probe.monitor.quorum
        self._pending.append(HealthUpdate(target.endpoint_id, new, prev.state, quorum))

    async def _prune(self) -> None:
        try:
            removed = await self._store.prune_transitions(
                self._clock() - self._retention
            )
        except StoreUnavailable:
            return
        if removed:
            log.info("pruned %d health transitions past retention", removed)


def keep_bounded(updates: list[HealthUpdate], limit: int) -> list[HealthUpdate]:
    """At most `limit` verdicts, oldest first, losing no state change: past the
    limit, a run of verdicts of one endpoint in the same state is merged into
    its last (keeping the state it came from), which is all the history and
    DNS need; if state changes alone exceed the limit, the oldest go."""
    if len(updates) <= limit:
        return updates
    merged: list[HealthUpdate] = []
    last: dict[int, int] = {}  # endpoint → index in merged of its latest verdict
    for u in updates:
        i = last.get(u.endpoint_id)
        if i is not None and merged[i].health.state is u.health.state:
            merged[i] = HealthUpdate(u.endpoint_id, u.health, merged[i].previous)
            continue
        last[u.endpoint_id] = len(merged)
        merged.append(u)
    if len(merged) > limit:
        log.error("dropping the %d oldest unwritten verdicts", len(merged) - limit)
        merged = merged[-limit:]
    return merged
