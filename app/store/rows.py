"""Row lookups and rules shared by the store's writers: find a zone or profile
row, validate a candidate profile, reconcile a profile's endpoint rows."""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from app.domain import validation
from app.domain.model import Profile, Zone
from app.store.base import Invalid, NotFound
from app.store.mapping import (
    fill_endpoint_row,
    profile_from_row,
    profile_names,
    zone_from_row,
)
from app.store.sessions import SessionStore
from app.store.tables import EndpointRow, ProfileRow, ZoneRow

ZONE_TREE = selectinload(ZoneRow.profiles).selectinload(ProfileRow.endpoints)


class RowAccess(SessionStore):
    async def _zone_row(
        self, session: AsyncSession, name: str, lock: bool = False
    ) -> ZoneRow:
        query = select(ZoneRow).where(ZoneRow.name == name).options(ZONE_TREE)
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
