"""SqlStore: the Store on SQLAlchemy 2, for SQLite and PostgreSQL alike.

Each use case is one transaction that writes the rows, an audit row and a new
generation together, so a failed write leaves the database as it was and every
DNS instance sees a change exactly once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from sqlalchemy import delete, select

from app.domain.model import (
    Config,
    Health,
    LatencyRows,
    Profile,
    Zone,
)
from app.store.accounts import Accounts
from app.store.base import (
    Conflict,
    ProfileChange,
    ZoneChange,
)
from app.store.bulk import BulkApply
from app.store.health_records import HealthRecords
from app.store.mapping import (
    fill_endpoint_row,
    fill_profile_row,
    fill_zone_row,
    health_from_row,
    profile_from_row,
    profile_names,
    zone_from_row,
)
from app.store.parking import repark
from app.store.rows import ZONE_TREE
from app.store.tables import (
    EndpointHealthRow,
    EndpointRow,
    LatencyRow,
    ProfileRow,
    ZoneRow,
)


class SqlStore(HealthRecords, Accounts, BulkApply):
    """The Store on SQLAlchemy 2, for SQLite and PostgreSQL alike."""

    async def load_all(self) -> tuple[Config, Mapping[int, Health]]:
        async with self._read() as session:
            zones = (await session.scalars(select(ZoneRow).options(ZONE_TREE))).all()
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
            row = await self._zone_row(session, name, lock=True)
            before = zone_from_row(row)
            after = change(before)
            fill_zone_row(row, after)
            self._audit(session, actor, "zone.update", name, before, after)
            await self._bump(session)
        return zone_from_row(row, with_profiles=False)

    async def delete_zone(
        self, name: str, *, actor: str, guard: Callable[[Zone], None] | None = None
    ) -> None:
        """`guard` sees the zone as locked by this transaction and may refuse."""
        async with self._write() as session:
            row = await self._zone_row(session, name, lock=True)
            before = zone_from_row(row)
            if guard is not None:
                guard(before)
            self._audit(session, actor, "zone.delete", name, before, None)
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

    async def delete_profile(
        self,
        zone: str,
        name: str,
        *,
        actor: str,
        guard: Callable[[Profile], None] | None = None,
    ) -> None:
        async with self._write() as session:
            zone_row = await self._zone_row(session, zone, lock=True)
            row = self._profile_row(zone_row, name)
            if guard is not None:
                guard(profile_from_row(row, profile_names(zone_row)))
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


def _ref(zone: str, profile: str) -> str:
    return f"{zone}/{profile}"
