"""Health records: the prober's verdicts, transitions and their retention."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, select, update

from app.domain.health import Transition
from app.domain.model import Health, HealthState
from app.store.base import HealthUpdate
from app.store.loading import ConfigReader
from app.store.mapping import fill_health_row, from_epoch, to_epoch
from app.store.parking import repark_owners_of
from app.store.sessions import Sessions
from app.store.tables import (
    EndpointHealthRow,
    EndpointRow,
    HealthTransitionRow,
    MetaRow,
)


class HealthRecords:
    def __init__(self, sessions: Sessions) -> None:
        self._sessions = sessions

    async def heartbeat(self, now: float) -> None:
        """The prober is alive; no generation change, so no snapshot rebuild."""
        async with self._sessions.write() as session:
            await session.execute(
                update(MetaRow).values(prober_seen_at=from_epoch(now))
            )

    async def record_health(
        self, endpoint_id: int, health: Health, previous: HealthState | None
    ) -> None:
        await self.record_health_batch([HealthUpdate(endpoint_id, health, previous)])

    async def record_health_batch(self, updates: Sequence[HealthUpdate]) -> None:
        """Store the latest verdicts in one transaction. A verdict whose state
        differs from the stored one (no row reads as checking, as in DNS) gets
        a new generation, which is what moves DNS answers; one that differs from
        `previous` is also logged as a transition. Verdicts of endpoints deleted
        while their probe ran are dropped."""
        if not updates:
            return
        ids = [u.endpoint_id for u in updates]
        async with self._sessions.write() as session:
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
            moved: list[EndpointHealthRow] = []
            for u in updates:
                if u.endpoint_id not in alive:
                    continue
                row = rows.get(u.endpoint_id)
                if row is None:
                    row = rows[u.endpoint_id] = EndpointHealthRow(
                        endpoint_id=u.endpoint_id, state=HealthState.CHECKING.value
                    )
                    session.add(row)
                if row.state != u.health.state.value:
                    moved.append(row)
                fill_health_row(row, u.health)
                if u.previous is not None and u.previous is not u.health.state:
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
                await repark_owners_of(session, ids, self._sessions.clock())
                generation = await self._sessions.bump(session)
                for changed in moved:
                    changed.revision = generation

    async def health_of(self, endpoint_ids: Sequence[int]) -> dict[int, Health]:
        """The prober's latest verdicts as stored, checked_at and all (the
        snapshot is only refreshed for state changes)."""
        async with self._sessions.read() as session:
            return await ConfigReader(session).health(
                EndpointHealthRow.endpoint_id.in_(list(endpoint_ids))
            )

    async def transitions(
        self, endpoint_ids: Sequence[int], limit: int
    ) -> list[Transition]:
        """The most recent state changes of these endpoints, newest first."""
        async with self._sessions.read() as session:
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
        async with self._sessions.write() as session:
            result = await session.execute(
                delete(HealthTransitionRow).where(
                    HealthTransitionRow.at < from_epoch(before)
                )
            )
            return int(getattr(result, "rowcount", 0) or 0)
