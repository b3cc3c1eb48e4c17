"""Events: written in the transaction of the change that makes them, read in
order by the event stream (app.api.handlers.events) and webhooks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.store.base import Event
from app.store.mapping import from_epoch, to_epoch
from app.store.tables import EndpointRow, EventRow, ProfileRow, ZoneRow

if TYPE_CHECKING:  # sessions writes events with record(): no import cycle
    from app.store.sessions import Sessions

# How far back a stream can resume (Last-Event-ID): older events are pruned.
MAX_EVENTS = 10_000


def record(
    session: AsyncSession, at: float, kind: str, subject: str, data: dict[str, Any]
) -> None:
    session.add(EventRow(at=from_epoch(at), kind=kind, subject=subject, data=data))


async def endpoint_names(
    session: AsyncSession, ids: Sequence[int]
) -> dict[int, tuple[str, str, str]]:
    """(zone, profile, endpoint) by endpoint id, as events name them."""
    if not ids:
        return {}
    rows = await session.execute(
        select(EndpointRow.id, ZoneRow.name, ProfileRow.name, EndpointRow.name)
        .join(ProfileRow, EndpointRow.profile_id == ProfileRow.id)
        .join(ZoneRow, ProfileRow.zone_id == ZoneRow.id)
        .where(EndpointRow.id.in_(list(ids)))
    )
    return {i: (zone, profile, endpoint) for i, zone, profile, endpoint in rows}


class Events:
    def __init__(self, sessions: Sessions) -> None:
        self._sessions = sessions

    async def after(self, last_id: int, limit: int = 100) -> list[Event]:
        """The events after `last_id`, oldest first."""
        async with self._sessions.read() as session:
            rows = await session.scalars(
                select(EventRow)
                .where(EventRow.id > last_id)
                .order_by(EventRow.id)
                .limit(limit)
            )
            return [
                Event(r.id, to_epoch(r.at) or 0.0, r.kind, r.subject, r.data)
                for r in rows
            ]

    async def bounds(self) -> tuple[int, int]:
        """The ids of the oldest and newest events kept (0, 0 with none)."""
        async with self._sessions.read() as session:
            row = (
                await session.execute(
                    select(func.min(EventRow.id), func.max(EventRow.id))
                )
            ).one()
        return int(row[0] or 0), int(row[1] or 0)

    async def prune(self) -> int:
        """Keep the newest MAX_EVENTS; returns how many went."""
        async with self._sessions.write() as session:
            newest = await session.scalar(select(func.max(EventRow.id)))
            if not newest or newest <= MAX_EVENTS:
                return 0
            result = await session.execute(
                delete(EventRow).where(EventRow.id <= newest - MAX_EVENTS)
            )
            return int(getattr(result, "rowcount", 0) or 0)
