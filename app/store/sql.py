"""SqlStore: the Store on SQLAlchemy 2, for SQLite and PostgreSQL alike.

Each use case is one transaction that writes the rows, an audit row and a new
generation together, so a failed write leaves the database as it was and every
DNS instance sees a change exactly once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.domain import validation
from app.domain.changes import Changes, ProfileLine
from app.domain.model import (
    Config,
    Health,
    LatencyRows,
    Profile,
    Quarantined,
    Zone,
)
from app.domain.validation import Invalid
from app.store.accounts import Accounts
from app.store.base import Conflict, ProfileChange, ZoneChange
from app.store.bulk import BulkApply
from app.store.health_records import HealthRecords
from app.store.loading import ConfigReader
from app.store.mapping import (
    fill_endpoint_row,
    fill_profile_row,
    fill_zone_row,
    profile_from_row,
    zone_from_row,
)
from app.store.parking import repark
from app.store.tables import (
    EndpointHealthRow,
    EndpointRow,
    LatencyRow,
    MetaRow,
    ProfileRow,
    ZoneRow,
)


class SqlStore(HealthRecords, Accounts, BulkApply):
    """The Store on SQLAlchemy 2, for SQLite and PostgreSQL alike."""

    async def load_all(self) -> tuple[Config, Mapping[int, Health]]:
        async with self._read() as session:
            reader = ConfigReader(session)
            lines = await reader.index()
            zones, bad_zones = await self._zone_headers(session)
            profiles = await reader.profiles(None, _names(lines))
            health = await reader.health()
            latency = await self._latency_rows(session)
        config = Config(
            zones=tuple(
                replace(z, profiles=tuple(profiles.get(z.id, ()))) for z in zones
            ),
            latency=latency,
            parked={i: p.parked for i, p in lines.items() if p.parked is not None},
            broken=_broken(zones, bad_zones, reader),
        )
        return config, health

    async def load_changes(self, since: int) -> Changes:
        """What generations after `since` wrote: the generation is read first, so
        everything up to it is included (later writes may be too; folding them
        in twice is harmless)."""
        async with self._read() as session:
            generation = await session.scalar(select(MetaRow.generation))
            reader = ConfigReader(session)
            lines = await reader.index()
            zones, bad_zones = await self._zone_headers(session)
            written = await reader.profiles(ProfileRow.revision > since, _names(lines))
            health = await reader.health(EndpointHealthRow.revision > since)
            latency = await self._latency_rows(session)
        return Changes(
            since=since,
            generation=int(generation or 0),
            zones=zones,
            lines=lines,
            profiles=tuple((zone_id, p) for zone_id, ps in written.items() for p in ps),
            health=health,
            latency=latency,
            broken=_broken(zones, bad_zones, reader),
        )

    @staticmethod
    async def _zone_headers(
        session: AsyncSession,
    ) -> tuple[tuple[Zone, ...], dict[int, Quarantined]]:
        """Every zone that reads; one that does not is quarantined (by minus
        its id, beside the profiles) with its profiles, not the whole read."""
        zones: list[Zone] = []
        bad: dict[int, Quarantined] = {}
        for row in await session.scalars(select(ZoneRow).order_by(ZoneRow.id)):
            try:
                zones.append(zone_from_row(row, with_profiles=False))
            except Exception as exc:
                bad[-row.id] = Quarantined(-row.id, row.name, "", str(exc))
        return tuple(zones), bad

    @staticmethod
    async def _latency_rows(session: AsyncSession) -> LatencyRows:
        rows = await session.scalars(select(LatencyRow).order_by(LatencyRow.id))
        return tuple((r.network, dict(r.rtt_ms)) for r in rows)

    async def get_latency(self) -> LatencyRows:
        async with self._read() as session:
            return await self._latency_rows(session)

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
            row = await self._zone_row(session, name)
            names_by_id = await self._profile_names(session, row)
            profiles = await ConfigReader(session).profiles(
                ProfileRow.zone_id == row.id, names_by_id
            )
        return replace(
            zone_from_row(row, with_profiles=False),
            profiles=tuple(profiles.get(row.id, ())),
        )

    async def create_zone(self, zone: Zone, *, actor: str) -> Zone:
        problems = validation.header_problems(zone)
        if problems:
            raise Invalid(problems)
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
            before = zone_from_row(row, with_profiles=False)
            after = replace(change(before), profiles=())
            await self._validate_zone(session, row, after)
            fill_zone_row(row, after)
            self._audit(session, actor, "zone.update", name, before, after)
            await self._bump(session)
        return zone_from_row(row, with_profiles=False)

    async def delete_zone(
        self, name: str, *, actor: str, guard: Callable[[Zone], None] | None = None
    ) -> None:
        """`guard` sees the zone as locked by this transaction and may refuse."""
        async with self._write() as session:
            row = await self._zone_row(session, name, lock=True, tree=True)
            before = zone_from_row(row)
            if guard is not None:
                guard(before)
            self._audit(session, actor, "zone.delete", name, before, None)
            await session.delete(row)
            await self._bump(session)

    async def get_profile(self, zone: str, name: str) -> Profile:
        async with self._read() as session:
            zone_row = await self._zone_row(session, zone)
            row = await self._profile_row(session, zone_row, name)
            return profile_from_row(row, await self._profile_names(session, zone_row))

    async def create_profile(
        self, zone: str, profile: Profile, *, actor: str
    ) -> Profile:
        async with self._write() as session:
            zone_row = await self._zone_row(session, zone)
            names_by_id = await self._profile_names(session, zone_row)
            if profile.name in names_by_id.values():
                raise Conflict(f"profile {profile.name!r} already exists in {zone}")
            await self._validate(session, zone_row, names_by_id, profile)
            ids = {name: profile_id for profile_id, name in names_by_id.items()}
            row = fill_profile_row(ProfileRow(zone_id=zone_row.id), profile)
            row.endpoints = [
                fill_endpoint_row(EndpointRow(), e, ids) for e in profile.endpoints
            ]
            session.add(row)
            await session.flush()
            await repark(session, row, self._clock())
            saved = profile_from_row(row, names_by_id)
            self._audit(
                session, actor, "profile.create", _ref(zone, profile.name), None, saved
            )
            row.revision = await self._bump(session)
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
            row = await self._profile_row(session, zone_row, name)
            names_by_id = await self._profile_names(session, zone_row)
            before = profile_from_row(row, names_by_id)
            after = change(before)
            if after.name != name and after.name in names_by_id.values():
                raise Conflict(f"profile {after.name!r} already exists in {zone}")
            await self._validate(session, zone_row, names_by_id, after, row.id)
            fill_profile_row(row, after)
            ids = {n: profile_id for profile_id, n in names_by_id.items()}
            await self._reconcile_endpoints(session, row, after, ids)
            await repark(session, row, self._clock())
            saved = profile_from_row(row, names_by_id)
            self._audit(session, actor, action, _ref(zone, name), before, saved)
            row.revision = await self._bump(session)
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
            row = await self._profile_row(session, zone_row, name)
            names_by_id = await self._profile_names(session, zone_row)
            before = profile_from_row(row, names_by_id)
            if guard is not None:
                guard(before)
            parents = list(
                await session.scalars(
                    select(ProfileRow.name)
                    .join(EndpointRow, EndpointRow.profile_id == ProfileRow.id)
                    .where(EndpointRow.child_id == row.id)
                    .distinct()
                    .order_by(ProfileRow.name)
                )
            )
            if parents:
                raise Conflict(
                    f"profile {name!r} is nested in {', '.join(map(repr, parents))}: "
                    "remove those nested endpoints first"
                )
            self._audit(
                session, actor, "profile.delete", _ref(zone, name), before, None
            )
            await session.delete(row)
            await self._bump(session)


def _broken(
    zones: tuple[Zone, ...], bad_zones: dict[int, Quarantined], reader: ConfigReader
) -> dict[int, Quarantined]:
    """What could not be read, by profile id (zones by minus their id)."""
    names = {z.id: z.name for z in zones}
    broken = dict(bad_zones)
    for profile_id, (zone_id, name, reason) in reader.broken.items():
        if zone_id in names:
            broken[profile_id] = Quarantined(profile_id, names[zone_id], name, reason)
    return broken


def _names(lines: Mapping[int, ProfileLine]) -> dict[int, str]:
    """Profile names by id, to name nested children."""
    return {profile_id: line.name for profile_id, line in lines.items()}


def _ref(zone: str, profile: str) -> str:
    return f"{zone}/{profile}"
