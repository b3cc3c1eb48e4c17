"""Events: written in the transaction of the change that makes them, read in
order by the event stream (app.api.handlers.events) and webhooks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.domain.overrides import OverrideEvent
from app.store.base import Event
from app.store.mapping import from_epoch, to_epoch
from app.store.tables import EndpointRow, EventRow, MetaRow, ProfileRow, ZoneRow

if TYPE_CHECKING:  # sessions writes events with record(): no import cycle
    from app.store.sessions import Sessions

# How far back a stream can resume (Last-Event-ID): older events are pruned.
MAX_EVENTS = 10_000


def override_data(told: OverrideEvent, actor: str) -> dict[str, Any]:
    """An `override` event's data: what changed, and the override in force
    (for end and expire, the one that went)."""
    return {
        "zone": told.zone,
        "profile": told.profile,
        "endpoint": told.endpoint,
        "change": told.change.value,
        "state": told.override.state.value,
        "reason": told.override.reason,
        "until": told.override.until,
        "actor": actor,
    }


async def take_turns(session: AsyncSession) -> None:
    """Writers that decide on what others wrote (vantages deciding over each
    other's views, processes telling a state once) take turns on the meta row
    until they commit (PostgreSQL; SQLite has one writer anyway)."""
    await session.execute(select(MetaRow.id).with_for_update())


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

    async def record_state(
        self, at: float, kind: str, subject: str, data: dict[str, Any], normal: bool
    ) -> bool:
        """Tell a state that every process sees for itself (a quarantined
        profile, a silent prober) once, however many see it: written unless
        the subject's latest event of this kind already says the same, or
        there is none and the state is the normal one (nothing to recover
        from). Writers take turns, so two processes cannot both write it."""
        async with self._sessions.write() as session:
            await take_turns(session)
            latest = await session.scalar(
                select(EventRow.data)
                .where(EventRow.kind == kind, EventRow.subject == subject)
                .order_by(EventRow.id.desc())
                .limit(1)
            )
            if latest == data or (latest is None and normal):
                return False
            record(session, at, kind, subject, data)
            return True

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
