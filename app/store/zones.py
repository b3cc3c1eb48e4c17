"""Zones: their own fields (name servers, SOA mailbox, negative TTL, glue)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from sqlalchemy import select

from app.domain import names, validation
from app.domain.model import StaticRRset, Zone
from app.domain.query import RType
from app.domain.validation import Invalid
from app.store.base import Conflict, NotFound, RRsetGuard, ZoneChange
from app.store.loading import ConfigReader
from app.store.mapping import fill_zone_row, zone_from_row
from app.store.rows import (
    profile_names,
    readable_profiles,
    validate_rrsets,
    validate_zone,
    zone_row,
)
from app.store.sessions import Sessions
from app.store.tables import ProfileRow, ZoneRow


class Zones:
    def __init__(self, sessions: Sessions) -> None:
        self._sessions = sessions

    async def list_zones(self) -> list[Zone]:
        async with self._sessions.read() as session:
            rows = await session.scalars(select(ZoneRow).order_by(ZoneRow.name))
            return [zone_from_row(z) for z in rows]

    async def get_zone(self, name: str) -> Zone:
        async with self._sessions.read() as session:
            row = await zone_row(session, name)
            names_by_id = await profile_names(session, row)
            profiles = await ConfigReader(session).profiles(
                ProfileRow.zone_id == row.id, names_by_id
            )
        return replace(
            zone_from_row(row),
            profiles=tuple(profiles.get(row.id, ())),
        )

    async def get_rrsets(self, name: str) -> tuple[StaticRRset, ...]:
        async with self._sessions.read() as session:
            return zone_from_row(await zone_row(session, name)).rrsets

    async def create_zone(self, zone: Zone, *, actor: str) -> Zone:
        problems = validation.header_problems(zone)
        if problems:
            raise Invalid(problems)
        async with self._sessions.write() as session:
            if await session.scalar(
                select(ZoneRow.id).where(ZoneRow.name == zone.name)
            ):
                raise Conflict(f"zone {zone.name} already exists")
            row = fill_zone_row(ZoneRow(), zone)
            session.add(row)
            await session.flush()
            self._sessions.audit(session, actor, "zone.create", zone.name, None, zone)
            await self._sessions.bump(session)
            return zone_from_row(row)

    async def update_zone(self, name: str, change: ZoneChange, *, actor: str) -> Zone:
        async with self._sessions.write() as session:
            row = await zone_row(session, name, lock=True)
            before = zone_from_row(row)
            # Static rrsets change through their own calls (put/delete_rrset).
            after = replace(change(before), profiles=(), rrsets=before.rrsets)
            await validate_zone(session, row, after)
            fill_zone_row(row, after)
            self._sessions.audit(session, actor, "zone.update", name, before, after)
            await self._sessions.bump(session)
        return zone_from_row(row)

    async def put_rrset(
        self, zone: str, rrset: StaticRRset, *, actor: str, guard: RRsetGuard = None
    ) -> bool:
        """Set the rrset of its name and type; True when it is new. `guard`
        sees the one there (or None) in this transaction and may refuse."""
        async with self._sessions.write() as session:
            row = await zone_row(session, zone, lock=True)
            before = zone_from_row(row)
            old = _find(before, rrset.name, rrset.rtype)
            if guard is not None:
                guard(old)
            kept = [r for r in before.rrsets if r is not old]
            after = replace(before, rrsets=_sorted([*kept, rrset]))
            delegation = rrset.rtype == RType.NS  # `old` is of the same type
            await validate_rrsets(session, row, after, rrset.name, delegation)
            fill_zone_row(row, after)
            self._sessions.audit(
                session, actor, "rrset.put", _resource(rrset, zone), old, rrset
            )
            await self._sessions.bump(session)
        return old is None

    async def delete_rrset(
        self, zone: str, name: str, rtype: int, *, actor: str, guard: RRsetGuard = None
    ) -> None:
        async with self._sessions.write() as session:
            row = await zone_row(session, zone, lock=True)
            before = zone_from_row(row)
            old = _find(before, name, rtype)
            if old is None:
                raise NotFound(f"{zone} has no {RType(rtype).name} rrset at {name}")
            if guard is not None:
                guard(old)
            after = replace(
                before, rrsets=tuple(r for r in before.rrsets if r is not old)
            )
            await validate_rrsets(session, row, after, name, delegation=False)
            fill_zone_row(row, after)
            self._sessions.audit(
                session, actor, "rrset.delete", _resource(old, zone), old, None
            )
            await self._sessions.bump(session)

    async def delete_zone(
        self, name: str, *, actor: str, guard: Callable[[Zone], None] | None = None
    ) -> None:
        """`guard` sees the zone as locked by this transaction and may refuse;
        a profile in it whose rows do not read does not stop the delete."""
        async with self._sessions.write() as session:
            row = await zone_row(session, name, lock=True, tree=True)
            names_by_id = {p.id: p.name for p in row.profiles}
            before = replace(
                zone_from_row(row),
                profiles=readable_profiles(row.profiles, names_by_id),
            )
            if guard is not None:
                guard(before)
            self._sessions.audit(session, actor, "zone.delete", name, before, None)
            await session.delete(row)
            await self._sessions.bump(session)


def _find(zone: Zone, name: str, rtype: int) -> StaticRRset | None:
    return next((r for r in zone.rrsets if (r.name, r.rtype) == (name, rtype)), None)


def _sorted(rrsets: list[StaticRRset]) -> tuple[StaticRRset, ...]:
    return tuple(sorted(rrsets, key=lambda r: (r.name, r.rtype)))


def _resource(rrset: StaticRRset, zone: str) -> str:
    """As the audit log and events name it: the rrset's URL below the API."""
    return f"{zone}/rrsets/{names.relative(rrset.name, zone)}/{RType(rrset.rtype).name}"
