"""Health records: the prober's verdicts, transitions and their retention."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.domain.health import Transition
from app.domain.model import Health, HealthState, Quorum
from app.domain.vantages import Vantage, after_heartbeat, decide
from app.store.base import LOCAL_VANTAGE, HealthUpdate
from app.store.events import endpoint_names, record, take_turns
from app.store.loading import ConfigReader
from app.store.mapping import (
    VIEW_COLUMNS,
    RowMapper,
    fill_vantage_row,
    from_epoch,
    health_from_row,
    health_values,
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
            await take_turns(session)  # deciders read each other's views
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
            for v in changed:
                state = "voting" if v.voting else "stale"
                data = {"vantage": v.name, "voting": v.voting, "seen_at": v.seen_at}
                record(
                    session,
                    now,
                    "vantage",
                    f"vantage/{v.name}",
                    data | {"state": state},
                )
            if changed:
                await session.flush()
                voting = frozenset(v.name for v in after if v.voting)
                every = await session.scalars(select(VantageHealthRow))
                steps = list(_by_endpoint(every).items())
                await self._decide(session, steps, voting, {})
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
            await take_turns(session)  # deciders read each other's views
            voting = await _voting(session, vantage, self._sessions.clock())
            alive = set(
                await session.scalars(
                    select(EndpointRow.id).where(EndpointRow.id.in_(ids))
                )
            )
            # One read of every vantage's view of these endpoints; this
            # vantage's own are written in bulk (thousands of endpoints cost
            # two statements, not a unit of work per row).
            views: dict[int, dict[str, Health]] = {}
            for row in await session.execute(
                select(*VIEW_COLUMNS).where(VantageHealthRow.endpoint_id.in_(ids))
            ):
                views.setdefault(row[0], {})[row[-1]] = RowMapper.health(row[:-1])
            stored = {i for i, seen in views.items() if vantage in seen}
            quorums: dict[int, Quorum] = {}
            latest: dict[int, Health] = {}
            # In order, one decision per view: verdicts kept through an outage
            # keep every transition they make, each at its own time.
            steps: list[tuple[int, dict[str, Health]]] = []
            flips: list[tuple[HealthUpdate, HealthState]] = []
            for u in updates:
                if u.endpoint_id not in alive:
                    continue
                seen = views.setdefault(u.endpoint_id, {})
                seen[vantage] = latest[u.endpoint_id] = u.health
                quorums[u.endpoint_id] = u.quorum
                steps.append((u.endpoint_id, dict(seen)))
                if u.previous is not None and u.previous is not u.health.state:
                    flips.append((u, u.previous))
            rows = [
                health_values(h) | {"endpoint_id": i, "vantage": vantage}
                for i, h in latest.items()
            ]
            await _upsert(session, VantageHealthRow, rows, stored)
            names = await endpoint_names(session, [u.endpoint_id for u, _ in flips])
            for u, old in flips:
                _health_event(
                    session,
                    "vantage_health",
                    names,
                    u.endpoint_id,
                    old,
                    u.health,
                    {"vantage": vantage},
                )
            await self._decide(session, steps, voting, quorums)

    async def _decide(
        self,
        session: AsyncSession,
        steps: Sequence[tuple[int, dict[str, Health]]],
        voting: frozenset[str],
        quorums: dict[int, Quorum],
    ) -> None:
        """Decide each endpoint over its views, step by step in order, and
        store what changed: a transition per change of the decided state,
        the last decision per endpoint. `quorums` as the prober sent them,
        the rest read from the configuration."""
        now = self._sessions.clock()
        ids = list(dict.fromkeys(i for i, _ in steps))
        stored = await ConfigReader(session).health(
            EndpointHealthRow.endpoint_id.in_(ids)
        )
        quorums = quorums | await _quorums(
            session, [i for i in ids if i not in quorums]
        )
        last: dict[int, Health] = {}
        moved: set[int] = set()
        told: list[tuple[int, HealthState, Health]] = []
        for endpoint_id, seen in steps:
            before = last.get(endpoint_id) or stored.get(endpoint_id)
            health = decide(seen, voting, quorums[endpoint_id], before, now)
            old = before.state if before is not None else HealthState.CHECKING
            if health.state is not old:
                moved.add(endpoint_id)
                session.add(
                    HealthTransitionRow(
                        endpoint_id=endpoint_id,
                        at=from_epoch(health.since),
                        old_state=old.value,
                        new_state=health.state.value,
                        reason=health.reason,
                    )
                )
                told.append((endpoint_id, old, health))
            last[endpoint_id] = health
        names = await endpoint_names(session, [i for i, _, _ in told])
        for endpoint_id, old, health in told:
            _health_event(session, "health", names, endpoint_id, old, health, {})
        rows = [
            health_values(h) | {"endpoint_id": i}
            for i, h in last.items()
            if stored.get(i) != h
        ]
        await _upsert(session, EndpointHealthRow, rows, stored.keys())
        await session.flush()
        if moved:
            await repark_owners_of(session, list(moved), now)
            generation = await self._sessions.bump(session)
            revised = [{"endpoint_id": i, "revision": generation} for i in moved]
            await session.execute(update(EndpointHealthRow), revised)

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
        async with self._sessions.read() as session:
            rows = await session.scalars(
                select(VantageHealthRow)
                .where(VantageHealthRow.endpoint_id.in_(list(endpoint_ids)))
                .order_by(VantageHealthRow.vantage)
            )
            return _by_endpoint(rows)

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


def _health_event(
    session: AsyncSession,
    kind: str,
    names: dict[int, tuple[str, str, str]],
    endpoint_id: int,
    old: HealthState,
    health: Health,
    more: dict[str, Any],
) -> None:
    """A state change as an event: the endpoint by name, from, to and why."""
    zone, profile, endpoint = names.get(endpoint_id, ("", "", str(endpoint_id)))
    data = {
        "zone": zone,
        "profile": profile,
        "endpoint": endpoint,
        "from": old.value,
        "to": health.state.value,
        "reason": health.reason,
        **more,
    }
    record(session, health.since, kind, f"{zone}/{profile}/{endpoint}", data)


def _by_endpoint(rows: Iterable[VantageHealthRow]) -> dict[int, dict[str, Health]]:
    views: dict[int, dict[str, Health]] = {}
    for row in rows:
        views.setdefault(row.endpoint_id, {})[row.vantage] = health_from_row(row)
    return views


async def _upsert(
    session: AsyncSession,
    table: type[EndpointHealthRow] | type[VantageHealthRow],
    rows: list[dict[str, Any]],
    stored: Collection[int],
) -> None:
    """Write health rows in bulk: an UPDATE by primary key for the endpoints
    that have one (`stored`), one INSERT for the rest."""
    known = [r for r in rows if r["endpoint_id"] in stored]
    if known:
        await session.execute(update(table), known)
    if len(known) < len(rows):
        fresh = [r for r in rows if r["endpoint_id"] not in stored]
        await session.execute(insert(table), fresh)


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
