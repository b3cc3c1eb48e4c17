"""SqlStore: the Store on SQLAlchemy 2, for SQLite and PostgreSQL alike,
composed of one repository per aggregate over shared sessions.

Each use case is one transaction that writes the rows, an audit row and a new
generation together, so a failed write leaves the database as it was and every
DNS instance sees a change exactly once. Each Store method below hands its
call to the repository that owns it: that is where to look for what it does.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, Self

from sqlalchemy.ext.asyncio import AsyncEngine

from app.domain.changes import Changes
from app.domain.health import Transition
from app.domain.model import (
    Config,
    Health,
    HealthState,
    LatencyRows,
    Profile,
    StaticRRset,
    Zone,
)
from app.domain.tokens import Token
from app.domain.vantages import Vantage
from app.domain.webhooks import Webhook
from app.store.accounts import Accounts
from app.store.base import (
    LOCAL_VANTAGE,
    AuditEntry,
    AuditQuery,
    Delivery,
    Event,
    HealthUpdate,
    ProfileChange,
    RRsetGuard,
    Step,
    TrafficCounts,
    ZoneChange,
)
from app.store.bulk import Imports
from app.store.engine import is_sqlite, make_engine
from app.store.events import Events
from app.store.health_records import HealthRecords
from app.store.latency import Latency
from app.store.profiles import Profiles
from app.store.sessions import Sessions, written_generation
from app.store.snapshots import Snapshots
from app.store.traffic import Traffic
from app.store.webhooks import Webhooks
from app.store.zones import Zones


class SqlStore:
    """Every role's Store (base.Store) on one engine."""

    def __init__(
        self, engine: AsyncEngine, clock: Callable[[], float] = time.time
    ) -> None:
        self.sessions = Sessions(engine, clock)
        self._url = str(engine.url)
        self.snapshots = Snapshots(self.sessions)
        self.health = HealthRecords(self.sessions)
        self.events = Events(self.sessions)
        self.webhooks = Webhooks(self.sessions)
        self.traffic = Traffic(self.sessions)
        self.zones = Zones(self.sessions)
        self.profiles = Profiles(self.sessions)
        self.latency = Latency(self.sessions)
        self.accounts = Accounts(self.sessions)
        self.imports = Imports(self.sessions)

    @classmethod
    @contextlib.asynccontextmanager
    async def open(cls, url: str) -> AsyncIterator[Self]:
        engine = make_engine(url)
        try:
            yield cls(engine)
        finally:
            await engine.dispose()

    @property
    def is_sqlite(self) -> bool:
        return is_sqlite(self._url)

    async def ping(self) -> None:
        await self.pulse()

    # SnapshotReader: what DNS instances refresh from.

    async def pulse(self) -> tuple[int, float | None]:
        return await self.sessions.pulse()

    async def generation(self) -> int:
        return (await self.pulse())[0]

    async def load_all(self) -> tuple[Config, Mapping[int, Health]]:
        return await self.snapshots.load_all()

    async def load_changes(self, since: int) -> Changes:
        return await self.snapshots.load_changes(since)

    # HealthWriter: what the prober writes.

    async def heartbeat(
        self, now: float, vantage: str = LOCAL_VANTAGE, source: str | None = None
    ) -> list[Vantage]:
        return await self.health.heartbeat(now, vantage, source)

    async def views_of(self, vantage: str) -> dict[int, Health]:
        return await self.health.views_of(vantage)

    async def record_health(
        self,
        endpoint_id: int,
        health: Health,
        previous: HealthState | None,
        vantage: str = LOCAL_VANTAGE,
    ) -> None:
        await self.health.record_health(endpoint_id, health, previous, vantage)

    async def record_health_batch(
        self, updates: Sequence[HealthUpdate], vantage: str = LOCAL_VANTAGE
    ) -> None:
        await self.health.record_health_batch(updates, vantage)

    async def prune_transitions(self, before: float) -> int:
        """Old transitions, and events past the stream's backlog."""
        await self.events.prune()
        return await self.health.prune_transitions(before)

    # AdminStore: what the API, the command line and the demo read and change.

    @staticmethod
    def written_generation() -> int | None:
        return written_generation()

    async def health_of(self, endpoint_ids: Sequence[int]) -> dict[int, Health]:
        return await self.health.health_of(endpoint_ids)

    async def vantage_views(
        self, endpoint_ids: Sequence[int]
    ) -> dict[int, dict[str, Health]]:
        return await self.health.vantage_views(endpoint_ids)

    async def vantages(self) -> list[Vantage]:
        return await self.health.vantages()

    async def events_after(self, last_id: int, limit: int = 100) -> list[Event]:
        return await self.events.after(last_id, limit)

    async def record_state(
        self, at: float, kind: str, subject: str, data: dict[str, Any], normal: bool
    ) -> bool:
        return await self.events.record_state(at, kind, subject, data, normal)

    async def event_bounds(self) -> tuple[int, int]:
        return await self.events.bounds()

    async def create_webhook(self, webhook: Webhook, *, actor: str) -> Webhook:
        return await self.webhooks.create(webhook, actor=actor)

    async def list_webhooks(self) -> list[Webhook]:
        return await self.webhooks.all()

    async def get_webhook(self, webhook_id: int) -> Webhook:
        return await self.webhooks.get(webhook_id)

    async def delete_webhook(
        self,
        webhook_id: int,
        *,
        actor: str,
        guard: Callable[[Webhook], None] | None = None,
    ) -> None:
        await self.webhooks.delete(webhook_id, actor=actor, guard=guard)

    async def webhook_deliveries(self, webhook_id: int) -> list[Delivery]:
        return await self.webhooks.deliveries(webhook_id)

    async def lease_webhook(self, webhook_id: int, owner: str, seconds: float) -> bool:
        return await self.webhooks.lease(webhook_id, owner, seconds)

    async def advance_webhook(self, webhook_id: int, event_id: int) -> None:
        await self.webhooks.advance(webhook_id, event_id)

    async def log_delivery(self, webhook_id: int, delivery: Delivery) -> None:
        await self.webhooks.log(webhook_id, delivery)

    # TrafficWriter, and its reading for the dashboard.

    async def add_traffic(self, counts: TrafficCounts) -> None:
        await self.traffic.add(counts)

    async def prune_traffic(self, before: int) -> int:
        return await self.traffic.prune(before)

    async def traffic_series(
        self, zone: str, profile: str, since: int
    ) -> dict[int, dict[str, int]]:
        return await self.traffic.series(zone, profile, since)

    async def transitions(
        self, endpoint_ids: Sequence[int], limit: int
    ) -> list[Transition]:
        return await self.health.transitions(endpoint_ids, limit)

    async def list_zones(self) -> list[Zone]:
        return await self.zones.list_zones()

    async def get_zone(self, name: str) -> Zone:
        return await self.zones.get_zone(name)

    async def create_zone(self, zone: Zone, *, actor: str) -> Zone:
        return await self.zones.create_zone(zone, actor=actor)

    async def update_zone(self, name: str, change: ZoneChange, *, actor: str) -> Zone:
        return await self.zones.update_zone(name, change, actor=actor)

    async def delete_zone(
        self, name: str, *, actor: str, guard: Callable[[Zone], None] | None = None
    ) -> None:
        await self.zones.delete_zone(name, actor=actor, guard=guard)

    async def get_rrsets(self, zone: str) -> tuple[StaticRRset, ...]:
        return await self.zones.get_rrsets(zone)

    async def put_rrset(
        self, zone: str, rrset: StaticRRset, *, actor: str, guard: RRsetGuard = None
    ) -> bool:
        return await self.zones.put_rrset(zone, rrset, actor=actor, guard=guard)

    async def delete_rrset(
        self, zone: str, name: str, rtype: int, *, actor: str, guard: RRsetGuard = None
    ) -> None:
        await self.zones.delete_rrset(zone, name, rtype, actor=actor, guard=guard)

    async def get_profile(self, zone: str, name: str) -> Profile:
        return await self.profiles.get_profile(zone, name)

    async def create_profile(
        self, zone: str, profile: Profile, *, actor: str
    ) -> Profile:
        return await self.profiles.create_profile(zone, profile, actor=actor)

    async def update_profile(
        self, zone: str, name: str, change: ProfileChange, *, actor: str, action: str
    ) -> Profile:
        return await self.profiles.update_profile(
            zone, name, change, actor=actor, action=action
        )

    async def expire_overrides(self, zone: str, name: str, now: float) -> bool:
        return await self.profiles.expire_overrides(zone, name, now)

    async def delete_profile(
        self,
        zone: str,
        name: str,
        *,
        actor: str,
        guard: Callable[[Profile], None] | None = None,
    ) -> None:
        await self.profiles.delete_profile(zone, name, actor=actor, guard=guard)

    async def get_latency(self) -> LatencyRows:
        return await self.latency.get_latency()

    async def replace_latency(self, rows: LatencyRows, *, actor: str) -> LatencyRows:
        return await self.latency.replace_latency(rows, actor=actor)

    async def create_token(self, token: Token, *, actor: str) -> Token:
        return await self.accounts.create_token(token, actor=actor)

    async def list_tokens(self) -> list[tuple[Token, float, float | None]]:
        return await self.accounts.list_tokens()

    async def revoke_token(self, name: str, *, actor: str) -> None:
        await self.accounts.revoke_token(name, actor=actor)

    async def find_token(self, digest: str) -> Token | None:
        return await self.accounts.find_token(digest)

    async def audit_log(self, query: AuditQuery) -> list[AuditEntry]:
        return await self.accounts.audit_log(query)

    async def apply_steps(self, steps: Sequence[Step], *, actor: str) -> None:
        await self.imports.apply_steps(steps, actor=actor)
