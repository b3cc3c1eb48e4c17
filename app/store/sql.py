"""SqlStore: the Store on SQLAlchemy 2, for SQLite and PostgreSQL alike.

Each use case is one transaction that writes the rows, an audit row and a new
generation together, so a failed write leaves the database as it was and every
DNS instance sees a change exactly once.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.orm import selectinload

from app.domain import validation
from app.domain.health import Transition
from app.domain.model import (
    Config,
    Health,
    HealthState,
    LatencyRows,
    Profile,
    Zone,
)
from app.store.base import (
    Conflict,
    HealthUpdate,
    Invalid,
    NotFound,
    ProfileChange,
    StoreUnavailable,
    ZoneChange,
)
from app.store.engine import is_sqlite, make_engine
from app.store.mapping import (
    fill_endpoint_row,
    fill_health_row,
    fill_profile_row,
    fill_zone_row,
    from_epoch,
    health_from_row,
    plain,
    profile_from_row,
    profile_names,
    to_epoch,
    zone_from_row,
)
from app.store.parking import repark, repark_owners_of
from app.store.tables import (
    AuditRow,
    EndpointHealthRow,
    EndpointRow,
    HealthTransitionRow,
    LatencyRow,
    MetaRow,
    ProfileRow,
    ZoneRow,
)

_ZONE_TREE = selectinload(ZoneRow.profiles).selectinload(ProfileRow.endpoints)


class SqlStore:
    def __init__(
        self, engine: AsyncEngine, clock: Callable[[], float] = time.time
    ) -> None:
        self._engine = engine
        self._sessions = async_sessionmaker(engine, expire_on_commit=False)
        self._clock = clock
        # SQLite allows one writer; queue writers here rather than on the file lock.
        self._write_lock = asyncio.Lock() if engine.dialect.name == "sqlite" else None

    @classmethod
    @contextlib.asynccontextmanager
    async def open(cls, url: str) -> AsyncIterator[SqlStore]:
        engine = make_engine(url)
        try:
            yield cls(engine)
        finally:
            await engine.dispose()

    @property
    def is_sqlite(self) -> bool:
        return is_sqlite(str(self._engine.url))

    @contextlib.asynccontextmanager
    async def _read(self) -> AsyncIterator[AsyncSession]:
        try:
            async with self._sessions() as session:
                yield session
        except (OperationalError, InterfaceError, OSError) as exc:
            raise StoreUnavailable(str(exc).splitlines()[0]) from exc

    @contextlib.asynccontextmanager
    async def _write(self) -> AsyncIterator[AsyncSession]:
        lock = self._write_lock or contextlib.nullcontext()
        try:
            async with lock, self._sessions.begin() as session:
                yield session
        except IntegrityError as exc:  # the database's wording never reaches the API
            raise Conflict("the change conflicts with existing data") from exc
        except (OperationalError, InterfaceError, OSError) as exc:
            raise StoreUnavailable(str(exc).splitlines()[0]) from exc

    async def _bump(self, session: AsyncSession) -> None:
        await session.execute(update(MetaRow).values(generation=MetaRow.generation + 1))

    def _audit(
        self,
        session: AsyncSession,
        actor: str,
        action: str,
        resource: str,
        before: Any,
        after: Any,
    ) -> None:
        session.add(
            AuditRow(
                at=from_epoch(self._clock()),
                actor=actor,
                action=action,
                resource=resource,
                before=plain(before),
                after=plain(after),
            )
        )

    async def ping(self) -> None:
        await self.generation()

    async def generation(self) -> int:
        return (await self.pulse())[0]

    async def pulse(self) -> tuple[int, float | None]:
        """The generation and the prober's last heartbeat, in one cheap read."""
        async with self._read() as session:
            row = (
                await session.execute(
                    select(MetaRow.generation, MetaRow.prober_seen_at)
                )
            ).first()
        if row is None:
            raise StoreUnavailable("the database is not migrated (run `tmdns migrate`)")
        return int(row[0]), to_epoch(row[1])

    async def heartbeat(self, now: float) -> None:
        """The prober is alive; no generation change, so no snapshot rebuild."""
        async with self._write() as session:
            await session.execute(
                update(MetaRow).values(prober_seen_at=from_epoch(now))
            )

    async def load_all(self) -> tuple[Config, Mapping[int, Health]]:
        async with self._read() as session:
            zones = (await session.scalars(select(ZoneRow).options(_ZONE_TREE))).all()
            health = (await session.scalars(select(EndpointHealthRow))).all()
            latency = (
                await session.scalars(select(LatencyRow).order_by(LatencyRow.id))
            ).all()
        parked = {
            p.id: p.parked_endpoint_id
            for z in zones
            for p in z.profiles
            if p.parked_endpoint_id is not None
        }
        config = Config(
            zones=tuple(zone_from_row(z) for z in zones),
            latency=tuple((r.network, dict(r.rtt_ms)) for r in latency),
            parked=parked,
        )
        return config, {h.endpoint_id: health_from_row(h) for h in health}

    async def get_latency(self) -> LatencyRows:
        async with self._read() as session:
            rows = await session.scalars(select(LatencyRow).order_by(LatencyRow.id))
            return tuple((r.network, dict(r.rtt_ms)) for r in rows)

    async def replace_latency(self, rows: LatencyRows, *, actor: str) -> LatencyRows:
        """The whole table at once: measurements are uploaded as a set."""
        async with self._write() as session:
            before = await session.scalars(select(LatencyRow))
            old = tuple((r.network, dict(r.rtt_ms)) for r in before)
            await session.execute(delete(LatencyRow))
            session.add_all(LatencyRow(network=n, rtt_ms=dict(rtt)) for n, rtt in rows)
            self._audit(
                session, actor, "latency.replace", "latency", list(old), list(rows)
            )
            await self._bump(session)
        return rows

    async def list_zones(self) -> list[Zone]:
        async with self._read() as session:
            rows = await session.scalars(select(ZoneRow).order_by(ZoneRow.name))
            return [zone_from_row(z, with_profiles=False) for z in rows]

    async def get_zone(self, name: str) -> Zone:
        async with self._read() as session:
            return zone_from_row(await self._zone_row(session, name))

    async def create_zone(self, zone: Zone, *, actor: str) -> Zone:
        async with self._write() as session:
            if await session.scalar(
                select(ZoneRow.id).where(ZoneRow.name == zone.name)
            ):
                raise Conflict(f"zone {zone.name} already exists")
            row = fill_zone_row(ZoneRow(), zone)
            session.add(row)
            await session.flush()
            self._audit(session, actor, "zone.create", zone.name, None, zone)
            await self._bump(session)
            return zone_from_row(row, with_profiles=False)

    async def update_zone(self, name: str, change: ZoneChange, *, actor: str) -> Zone:
        async with self._write() as session:
            row = await self._zone_row(session, name)
            before = zone_from_row(row)
            after = change(before)
            fill_zone_row(row, after)
            self._audit(session, actor, "zone.update", name, before, after)
            await self._bump(session)
        return zone_from_row(row, with_profiles=False)

    async def delete_zone(self, name: str, *, actor: str) -> None:
        async with self._write() as session:
            row = await self._zone_row(session, name)
            self._audit(session, actor, "zone.delete", name, zone_from_row(row), None)
            await session.delete(row)
            await self._bump(session)

    async def get_profile(self, zone: str, name: str) -> Profile:
        async with self._read() as session:
            zone_row = await self._zone_row(session, zone)
            return profile_from_row(
                self._profile_row(zone_row, name), profile_names(zone_row)
            )

    async def create_profile(
        self, zone: str, profile: Profile, *, actor: str
    ) -> Profile:
        async with self._write() as session:
            zone_row = await self._zone_row(session, zone)
            if any(p.name == profile.name for p in zone_row.profiles):
                raise Conflict(f"profile {profile.name!r} already exists in {zone}")
            self._validate(zone_row, profile)
            ids = {p.name: p.id for p in zone_row.profiles}
            row = fill_profile_row(ProfileRow(), profile)
            row.endpoints = [
                fill_endpoint_row(EndpointRow(), e, ids) for e in profile.endpoints
            ]
            zone_row.profiles.append(row)
            await session.flush()
            await repark(session, row, self._clock())
            saved = profile_from_row(row, profile_names(zone_row))
            self._audit(
                session, actor, "profile.create", _ref(zone, profile.name), None, saved
            )
            await self._bump(session)
        return saved

    async def update_profile(
        self, zone: str, name: str, change: ProfileChange, *, actor: str, action: str
    ) -> Profile:
        """Apply `change` to the current profile inside the transaction.

        The change runs against the row as locked by this transaction, so two
        concurrent endpoint edits on one profile cannot overwrite each other.
        """
        async with self._write() as session:
            zone_row = await self._zone_row(session, zone, lock=True)
            row = self._profile_row(zone_row, name)
            names_by_id = profile_names(zone_row)
            before = profile_from_row(row, names_by_id)
            after = change(before)
            if after.name != name and any(
                p.name == after.name for p in zone_row.profiles
            ):
                raise Conflict(f"profile {after.name!r} already exists in {zone}")
            self._validate(zone_row, after, replacing=row.id)
            fill_profile_row(row, after)
            ids = {p.name: p.id for p in zone_row.profiles}
            await self._reconcile_endpoints(session, row, after, ids)
            await repark(session, row, self._clock())
            saved = profile_from_row(row, profile_names(zone_row))
            self._audit(session, actor, action, _ref(zone, name), before, saved)
            await self._bump(session)
        return saved

    async def delete_profile(self, zone: str, name: str, *, actor: str) -> None:
        async with self._write() as session:
            zone_row = await self._zone_row(session, zone)
            row = self._profile_row(zone_row, name)
            parents = [
                p.name
                for p in zone_row.profiles
                if any(e.child_id == row.id for e in p.endpoints)
            ]
            if parents:
                raise Conflict(
                    f"profile {name!r} is nested in {', '.join(map(repr, parents))}: "
                    "remove those nested endpoints first"
                )
            before = profile_from_row(row, profile_names(zone_row))
            self._audit(
                session, actor, "profile.delete", _ref(zone, name), before, None
            )
            await session.delete(row)
            await self._bump(session)

    async def record_health(
        self, endpoint_id: int, health: Health, previous: HealthState | None
    ) -> None:
        await self.record_health_batch([HealthUpdate(endpoint_id, health, previous)])

    async def record_health_batch(self, updates: Sequence[HealthUpdate]) -> None:
        """Store the latest verdicts in one transaction; a state change is also a
        transition and a new generation, which is what moves DNS answers.
        Verdicts of endpoints deleted while their probe ran are dropped."""
        if not updates:
            return
        ids = [u.endpoint_id for u in updates]
        async with self._write() as session:
            alive = set(
                await session.scalars(
                    select(EndpointRow.id).where(EndpointRow.id.in_(ids))
                )
            )
            rows = {
                r.endpoint_id: r
                for r in await session.scalars(
                    select(EndpointHealthRow).where(
                        EndpointHealthRow.endpoint_id.in_(ids)
                    )
                )
            }
            moved = False
            for u in updates:
                if u.endpoint_id not in alive:
                    continue
                row = rows.get(u.endpoint_id)
                if row is None:
                    row = rows[u.endpoint_id] = EndpointHealthRow(
                        endpoint_id=u.endpoint_id
                    )
                    session.add(row)
                fill_health_row(row, u.health)
                if u.previous is not None and u.previous is not u.health.state:
                    moved = True
                    session.add(
                        HealthTransitionRow(
                            endpoint_id=u.endpoint_id,
                            at=from_epoch(u.health.since),
                            old_state=u.previous.value,
                            new_state=u.health.state.value,
                            reason=u.health.reason,
                        )
                    )
            await session.flush()
            if moved:
                await repark_owners_of(session, ids, self._clock())
                await self._bump(session)

    async def transitions(
        self, endpoint_ids: Sequence[int], limit: int
    ) -> list[Transition]:
        """The most recent state changes of these endpoints, newest first."""
        async with self._read() as session:
            rows = await session.scalars(
                select(HealthTransitionRow)
                .where(HealthTransitionRow.endpoint_id.in_(list(endpoint_ids)))
                .order_by(HealthTransitionRow.at.desc(), HealthTransitionRow.id.desc())
                .limit(limit)
            )
            return [
                Transition(
                    r.endpoint_id,
                    to_epoch(r.at) or 0.0,
                    HealthState(r.old_state),
                    HealthState(r.new_state),
                    r.reason,
                )
                for r in rows
            ]

    async def prune_transitions(self, before: float) -> int:
        """Drop transitions older than the retention; returns how many went."""
        async with self._write() as session:
            result = await session.execute(
                delete(HealthTransitionRow).where(
                    HealthTransitionRow.at < from_epoch(before)
                )
            )
            return int(getattr(result, "rowcount", 0) or 0)

    async def _zone_row(
        self, session: AsyncSession, name: str, lock: bool = False
    ) -> ZoneRow:
        query = select(ZoneRow).where(ZoneRow.name == name).options(_ZONE_TREE)
        if lock and not self.is_sqlite:
            query = query.with_for_update(of=ZoneRow)
        row = await session.scalar(query)
        if row is None:
            raise NotFound(f"zone {name} does not exist")
        return row

    @staticmethod
    def _profile_row(zone_row: ZoneRow, name: str) -> ProfileRow:
        for row in zone_row.profiles:
            if row.name == name:
                return row
        raise NotFound(f"profile {name!r} does not exist in zone {zone_row.name}")

    @staticmethod
    def _validate(
        zone_row: ZoneRow, profile: Profile, replacing: int | None = None
    ) -> None:
        names_by_id = profile_names(zone_row)
        others = tuple(
            profile_from_row(p, names_by_id)
            for p in zone_row.profiles
            if p.id != replacing
        )
        zone = zone_from_row(zone_row, with_profiles=False)
        candidate = Zone(
            zone.name,
            zone.ns,
            zone.soa_email,
            zone.negative_ttl,
            zone.glue,
            (*others, profile),
        )
        problems = validation.profile_problems(profile) + validation.zone_problems(
            candidate
        )
        if problems:
            raise Invalid(problems)

    @staticmethod
    async def _reconcile_endpoints(
        session: AsyncSession, row: ProfileRow, after: Profile, ids: Mapping[str, int]
    ) -> None:
        """Delete, update, then insert: a reused name never trips the unique key."""
        keep = {e.id for e in after.endpoints if e.id}
        for gone in [e for e in row.endpoints if e.id not in keep]:
            row.endpoints.remove(gone)
            await session.delete(gone)
        await session.flush()
        existing = {e.id: e for e in row.endpoints}
        for endpoint in after.endpoints:
            if endpoint.id in existing:
                fill_endpoint_row(existing[endpoint.id], endpoint, ids)
            else:
                row.endpoints.append(fill_endpoint_row(EndpointRow(), endpoint, ids))
        await session.flush()


def _ref(zone: str, profile: str) -> str:
    return f"{zone}/{profile}"
