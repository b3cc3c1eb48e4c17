"""Zones: their own fields (name servers, SOA mailbox, negative TTL, glue)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from sqlalchemy import select

from app.domain import validation
from app.domain.model import Zone
from app.domain.validation import Invalid
from app.store.base import Conflict, ZoneChange
from app.store.loading import ConfigReader
from app.store.mapping import fill_zone_row, zone_from_row
from app.store.rows import (
    profile_names,
    readable_profiles,
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
            after = replace(change(before), profiles=())
            await validate_zone(session, row, after)
            fill_zone_row(row, after)
            self._sessions.audit(session, actor, "zone.update", name, before, after)
            await self._sessions.bump(session)
        return zone_from_row(row)

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
