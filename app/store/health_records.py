"""Health records: the prober's verdicts, transitions and their retention."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.domain.health import Transition
from app.domain.model import Health, HealthState, Quorum
from app.domain.vantages import Vantage, after_heartbeat, decide
from app.store.base import LOCAL_VANTAGE, HealthUpdate
from app.store.loading import ConfigReader
from app.store.mapping import (
    fill_health_row,
    fill_vantage_row,
    from_epoch,
    health_from_row,
    monitor_from,
    to_epoch,
    vantage_from_row,
)
from app.store.parking import repark_owners_of
from app.store.sessions import Sessions
from app.store.tables import (
    EndpointHealthRow,
    EndpointRow,
    HealthTransitionRow,
    MetaRow,
    ProfileRow,
    VantageHealthRow,
    VantageRow,
)


class HealthRecords:
    def __init__(self, sessions: Sessions) -> None:
        self._sessions = sessions

    async def heartbeat(
        self, now: float, vantage: str = LOCAL_VANTAGE, source: str | None = None
    ) -> list[Vantage]:
        """The vantage is alive; no generation change, so no snapshot rebuild,
        unless the vantages that vote changed (one went quiet or came back):
        then every endpoint is decided again in this transaction. Returns the
        vantages whose vote changed, for the prober to tell."""
        async with self._sessions.write() as session:
            await _serialised(session)
            await session.execute(
                update(MetaRow).values(prober_seen_at=from_epoch(now))
            )
            rows = {r.name: r for r in await session.scalars(select(VantageRow))}
            known = [vantage_from_row(r) for r in rows.values()]
            after, changed = after_heartbeat(known, vantage, now, source)
            for v in after:
                row = rows.get(v.name)
                if row is None:
                    row = VantageRow(name=v.name)
                    session.add(row)
                fill_vantage_row(row, v)
            if changed:
                await session.flush()
                voting = frozenset(v.name for v in after if v.voting)
                await self._decide(session, None, voting, {})
            return changed

    async def record_health(
        self,
        endpoint_id: int,
        health: Health,
        previous: HealthState | None,
        vantage: str = LOCAL_VANTAGE,
    ) -> None:
        await self.record_health_batch(
            [HealthUpdate(endpoint_id, health, previous)], vantage
        )

    async def record_health_batch(
        self, updates: Sequence[HealthUpdate], vantage: str = LOCAL_VANTAGE
    ) -> None:
        """Store one vantage's latest views in one transaction, and decide
        each endpoint again over the voting vantages. A decided state that
        differs from the stored one (no row reads as checking, as in DNS)
        gets a new generation, which is what moves DNS answers, and is logged
        as a transition. Views of endpoints deleted while their probe ran are
        dropped."""
        if not updates:
            return
        ids = [u.endpoint_id for u in updates]
        async with self._sessions.write() as session:
            await _serialised(session)
            voting = await _voting(session, vantage, self._sessions.clock())
            alive = set(
                await session.scalars(
                    select(EndpointRow.id).where(EndpointRow.id.in_(ids))
                )
            )
            rows = {
                r.endpoint_id: r
                for r in await session.scalars(
                    select(VantageHealthRow).where(
                        VantageHealthRow.vantage == vantage,
                        VantageHealthRow.endpoint_id.in_(ids),
                    )
                )
            }
            quorums: dict[int, Quorum] = {}
            for u in updates:
                if u.endpoint_id not in alive:
                    continue
                row = rows.get(u.endpoint_id)
                if row is None:
                    row = rows[u.endpoint_id] = VantageHealthRow(
                        endpoint_id=u.endpoint_id, vantage=vantage
                    )
                    session.add(row)
                fill_health_row(row, u.health)
                quorums[u.endpoint_id] = u.quorum
            await session.flush()
            await self._decide(session, list(quorums), voting, quorums)

    async def _decide(
        self,
        session: AsyncSession,
        ids: list[int] | None,
        voting: frozenset[str],
        quorums: dict[int, Quorum],
    ) -> None:
        """Decide these endpoints (None: every one any vantage has a view of)
        and store what changed; `quorums` as the prober sent them, the rest
        read from the configuration."""
        now = self._sessions.clock()
        views: dict[int, dict[str, Health]] = {}
        query = select(VantageHealthRow)
        if ids is not None:
            query = query.where(VantageHealthRow.endpoint_id.in_(ids))
        for view in await session.scalars(query):
            views.setdefault(view.endpoint_id, {})[view.vantage] = health_from_row(view)
        decided = {
            r.endpoint_id: r
            for r in await session.scalars(
                select(EndpointHealthRow).where(
                    EndpointHealthRow.endpoint_id.in_(list(views))
                )
            )
        }
        missing = [i for i in views if i not in quorums]
        quorums = quorums | await _quorums(session, missing)
        moved: list[EndpointHealthRow] = []
        for endpoint_id, seen in views.items():
            row = decided.get(endpoint_id)
            current = health_from_row(row) if row is not None else None
            health = decide(seen, voting, quorums[endpoint_id], current, now)
            if current == health:
                continue
            if row is None:
                row = EndpointHealthRow(
                    endpoint_id=endpoint_id, state=HealthState.CHECKING.value
                )
                session.add(row)
            if row.state != health.state.value:
                moved.append(row)
                session.add(
                    HealthTransitionRow(
                        endpoint_id=endpoint_id,
                        at=from_epoch(health.since),
                        old_state=row.state,
                        new_state=health.state.value,
                        reason=health.reason,
                    )
                )
            fill_health_row(row, health)
        await session.flush()
        if moved:
            owners = [r.endpoint_id for r in moved]
            await repark_owners_of(session, owners, now)
            generation = await self._sessions.bump(session)
            for changed in moved:
                changed.revision = generation

    async def views_of(self, vantage: str) -> dict[int, Health]:
        """One vantage's own views, so a restarted prober continues its counts
        instead of starting every endpoint from `checking`."""
        async with self._sessions.read() as session:
            rows = await session.scalars(
                select(VantageHealthRow).where(VantageHealthRow.vantage == vantage)
            )
            return {r.endpoint_id: health_from_row(r) for r in rows}

    async def vantage_views(
        self, endpoint_ids: Sequence[int]
    ) -> dict[int, dict[str, Health]]:
        """Every vantage's view of these endpoints, by endpoint and vantage."""
        views: dict[int, dict[str, Health]] = {}
        async with self._sessions.read() as session:
            rows = await session.scalars(
                select(VantageHealthRow)
                .where(VantageHealthRow.endpoint_id.in_(list(endpoint_ids)))
                .order_by(VantageHealthRow.vantage)
            )
            for r in rows:
                views.setdefault(r.endpoint_id, {})[r.vantage] = health_from_row(r)
        return views

    async def vantages(self) -> list[Vantage]:
        async with self._sessions.read() as session:
            rows = await session.scalars(select(VantageRow).order_by(VantageRow.name))
            return [vantage_from_row(r) for r in rows]

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


async def _serialised(session: AsyncSession) -> None:
    """Vantages write at once from several hosts: each decides over the
    others' stored views, so deciders take turns on the meta row (PostgreSQL;
    SQLite has one writer anyway)."""
    await session.execute(select(MetaRow.id).with_for_update())


async def _voting(session: AsyncSession, vantage: str, now: float) -> frozenset[str]:
    """The vantages whose views count: as the last heartbeats judged, and the
    one writing (it is alive; its first heartbeat may still be on its way,
    and then its row is made here)."""
    rows = {r.name: r for r in await session.scalars(select(VantageRow))}
    if vantage not in rows:
        session.add(
            VantageRow(
                name=vantage,
                seen_at=from_epoch(now),
                resumed_at=from_epoch(now),
                voting=True,
            )
        )
        await session.flush()
    return frozenset(n for n, r in rows.items() if r.voting) | {vantage}


async def _quorums(session: AsyncSession, ids: list[int]) -> dict[int, Quorum]:
    """Each endpoint's quorum from its effective monitor (its own, else its
    profile's)."""
    if not ids:
        return {}
    rows = await session.execute(
        select(EndpointRow.id, EndpointRow.monitor, ProfileRow.monitor)
        .join(ProfileRow, EndpointRow.profile_id == ProfileRow.id)
        .where(EndpointRow.id.in_(ids))
    )
    return {i: monitor_from(own or profile).quorum for i, own, profile in rows}
