"""SqlStore: the Store on SQLAlchemy 2, for SQLite and PostgreSQL alike,
composed of one repository per aggregate over shared sessions.

Each use case is one transaction that writes the rows, an audit row and a new
generation together, so a failed write leaves the database as it was and every
DNS instance sees a change exactly once. Which repository answers a Store
method is written out below, one line each: that is where to look for it.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import Self

from sqlalchemy.ext.asyncio import AsyncEngine

from app.store.accounts import Accounts
from app.store.bulk import Imports
from app.store.engine import is_sqlite, make_engine
from app.store.health_records import HealthRecords
from app.store.latency import Latency
from app.store.profiles import Profiles
from app.store.sessions import Sessions, written_generation
from app.store.snapshots import Snapshots
from app.store.zones import Zones


class SqlStore:
    """Every role's Store (base.Store) on one engine."""

    def __init__(
        self, engine: AsyncEngine, clock: Callable[[], float] = time.time
    ) -> None:
        self.sessions = sessions = Sessions(engine, clock)
        self._url = str(engine.url)
        # SnapshotReader: what DNS instances refresh from.
        self.pulse = sessions.pulse
        snapshots = Snapshots(sessions)
        self.load_all = snapshots.load_all
        self.load_changes = snapshots.load_changes
        # HealthWriter: what the prober writes.
        health = HealthRecords(sessions)
        self.heartbeat = health.heartbeat
        self.record_health = health.record_health
        self.record_health_batch = health.record_health_batch
        self.prune_transitions = health.prune_transitions
        self.health_of = health.health_of
        self.transitions = health.transitions
        # AdminStore: what the API and the demo change and read.
        self.written_generation = written_generation
        zones = Zones(sessions)
        self.list_zones = zones.list_zones
        self.get_zone = zones.get_zone
        self.create_zone = zones.create_zone
        self.update_zone = zones.update_zone
        self.delete_zone = zones.delete_zone
        profiles = Profiles(sessions)
        self.get_profile = profiles.get_profile
        self.create_profile = profiles.create_profile
        self.update_profile = profiles.update_profile
        self.delete_profile = profiles.delete_profile
        latency = Latency(sessions)
        self.get_latency = latency.get_latency
        self.replace_latency = latency.replace_latency
        accounts = Accounts(sessions)
        self.create_token = accounts.create_token
        self.list_tokens = accounts.list_tokens
        self.revoke_token = accounts.revoke_token
        self.find_token = accounts.find_token
        self.audit_log = accounts.audit_log
        self.apply_steps = Imports(sessions).apply_steps

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

    async def generation(self) -> int:
        return (await self.pulse())[0]

    async def ping(self) -> None:
        await self.pulse()
