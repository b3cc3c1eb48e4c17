"""Reading the configuration in bulk for the snapshot: plain SELECTs straight
into domain values through the store's one mapper, no ORM objects.

At 10,000 profiles × 10 endpoints the ORM's identity map, change tracking and
per-value JSON decoding cost seconds and hundreds of megabytes; here rows come
as plain tuples with JSON as text, which `RowMapper` decodes once per distinct
value.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.domain.changes import ProfileLine
from app.domain.model import Endpoint, Health, Profile
from app.store.mapping import (
    ENDPOINT_COLUMNS,
    HEALTH_COLUMNS,
    KINDS,
    METHODS,
    PROFILE_COLUMNS,
    RowMapper,
    UnreadableRow,
    json_text,
    why,
)
from app.store.tables import EndpointRow, ProfileRow

E = EndpointRow
P = ProfileRow


class ConfigReader:
    """One bulk read: profiles with their endpoints, and health rows.

    Rows come in the mapper's column order; the store contract tests compare
    what this reader reads with what was written, field by field.
    """

    def __init__(self, session: AsyncSession) -> None:
        self._session = session
        self._mapper = RowMapper()
        # Profiles whose rows could not be read: id → (zone id, name, reason).
        # One bad row leaves its profile out; it never stops the whole read.
        self.broken: dict[int, tuple[int, str, str]] = {}

    async def index(self) -> dict[int, ProfileLine]:
        """Every profile in a line: ids, names and parking, no endpoints."""
        rows = await self._rows(
            select(
                ProfileRow.id,
                ProfileRow.zone_id,
                ProfileRow.name,
                ProfileRow.parked_endpoint_id,
            )
        )
        return {r[0]: ProfileLine(r[1], r[2], r[3]) for r in rows}

    async def profiles(
        self,
        where: ColumnElement[bool] | None,
        names_by_id: Mapping[int, str],
    ) -> dict[int, list[Profile]]:
        """Profiles by zone id, in id order, each with its endpoints in id order;
        `names_by_id` names nested children (they may not be among those read)."""
        query = select(*PROFILE_COLUMNS).order_by(ProfileRow.id)
        endpoints_query = select(*ENDPOINT_COLUMNS).order_by(EndpointRow.id)
        if where is not None:
            query = query.where(where)
            endpoints_query = endpoints_query.where(
                EndpointRow.profile_id.in_(select(ProfileRow.id).where(where))
            )
        endpoints: dict[int, list[Endpoint]] = defaultdict(list)
        unreadable: dict[int, str] = {}
        for row in await self._rows(endpoints_query):
            try:
                endpoints[row[0]].append(self._mapper.endpoint(row, names_by_id))
            except Exception as exc:  # a bad row, however it got there
                unreadable.setdefault(row[0], f"endpoints.{row[1]}: {why(exc)}")
        by_zone: dict[int, list[Profile]] = defaultdict(list)
        for row in await self._rows(query):
            zone_id, name, profile_id = row[0], row[1], row[-1]
            try:
                if profile_id in unreadable:
                    raise UnreadableRow(unreadable[profile_id])
                by_zone[zone_id].append(
                    self._mapper.profile(row, endpoints.get(profile_id, ()))
                )
            except Exception as exc:
                self.broken[profile_id] = (zone_id, name, why(exc))
        return by_zone

    async def outline(
        self,
        zone_id: int,
        names_by_id: Mapping[int, str],
        neighbours: Collection[str],
        skip: int | None = None,
    ) -> tuple[Profile, ...]:
        """What a write checks the zone-wide rules against: the profiles named in
        `neighbours` and every profile in the nesting graph (but `skip`), with only
        names, SRV services, endpoint names and kinds, and nested children."""
        nesting = E.child_id.is_not(None)
        chosen = and_(
            P.zone_id == zone_id,
            or_(
                P.name.in_(list(neighbours)),
                P.id.in_(select(E.profile_id).where(nesting)),
                P.id.in_(select(E.child_id).where(nesting)),
            ),
        )
        if skip is not None:
            chosen = and_(chosen, P.id != skip)
        endpoints: dict[int, list[Endpoint]] = defaultdict(list)
        query = (
            select(E.profile_id, E.name, E.kind, E.child_id)
            .where(E.profile_id.in_(select(P.id).where(chosen)))
            .order_by(E.id)
        )
        for profile_id, name, kind, child_id in await self._rows(query):
            child = None if child_id is None else names_by_id.get(child_id)
            endpoints[profile_id].append(Endpoint(name, KINDS[kind], child=child))
        rows = await self._rows(
            select(P.id, P.name, P.method, json_text(P.srv))
            .where(chosen)
            .order_by(P.id)
        )
        return tuple(
            Profile(
                name,
                METHODS[method],
                srv=self._mapper.services(srv),
                endpoints=tuple(endpoints.get(profile_id, ())),
                id=profile_id,
            )
            for profile_id, name, method, srv in rows
        )

    async def health(
        self, where: ColumnElement[bool] | None = None
    ) -> dict[int, Health]:
        query = select(*HEALTH_COLUMNS)
        if where is not None:
            query = query.where(where)
        health = self._mapper.health
        return {row[0]: health(row) for row in await self._rows(query)}

    async def _rows(self, query: Select[*tuple[Any, ...]]) -> Sequence[Any]:
        """Through the session's connection: plain rows, no ORM bookkeeping."""
        connection = await self._session.connection()
        rows: Sequence[Any] = (await connection.execute(query)).all()
        return rows
