"""Keeps a parking profile's endpoint in use current, inside the transaction of
the change (an edit or a health transition) that may move it."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from app.domain.model import Failback
from app.domain.parking import next_parked
from app.domain.snapshot import endpoint_state
from app.store.mapping import UnreadableRow, health_from_row, profile_from_row
from app.store.tables import EndpointHealthRow, EndpointRow, ProfileRow


async def repark(session: AsyncSession, row: ProfileRow, now: float) -> None:
    """Store the endpoint in use, shared by every DNS instance and kept across
    restarts (DESIGN §4); homing profiles keep none."""
    if row.failback != Failback.PARKING.value:
        row.parked_endpoint_id = None
        return
    ids = [e.id for e in row.endpoints]
    health_rows = await session.scalars(
        select(EndpointHealthRow).where(EndpointHealthRow.endpoint_id.in_(ids))
    )
    health = {h.endpoint_id: health_from_row(h) for h in health_rows}
    try:
        profile = profile_from_row(row, {})
    except UnreadableRow:
        return  # quarantined in DNS: keep what it had rather than fail the write
    states = {e.id: endpoint_state(profile, e, health) for e in profile.endpoints}
    row.parked_endpoint_id = next_parked(profile, states, row.parked_endpoint_id, now)


async def repark_owners_of(
    session: AsyncSession, endpoint_ids: Sequence[int], now: float
) -> None:
    """After health transitions, repark the parking profiles they belong to
    (homing profiles keep no state, so they cost nothing here)."""
    owners = select(EndpointRow.profile_id).where(
        EndpointRow.id.in_(list(endpoint_ids))
    )
    rows = await session.scalars(
        select(ProfileRow)
        .where(ProfileRow.id.in_(owners))
        .where(ProfileRow.failback == Failback.PARKING.value)
        .options(selectinload(ProfileRow.endpoints))
    )
    for row in rows:
        await repark(session, row, now)
