"""Traffic: queries and answers per profile per minute, summed over every DNS
process. Each process adds what it answered since its last flush
(app.traffic), so the rows are increments, written with one upsert; the API
reads them for the dashboard's charts. A day is kept."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from app.store.base import TrafficCounts
from app.store.sessions import Sessions
from app.store.tables import TrafficRow

RETENTION_SECONDS = 86400


def minute_of(at: float) -> int:
    """The start of the minute `at` falls in, epoch seconds: a row's key."""
    return int(at // 60) * 60


class Traffic:
    def __init__(self, sessions: Sessions) -> None:
        self._sessions = sessions

    async def add(self, counts: TrafficCounts) -> None:
        """Add `counts` ((minute, zone, profile, endpoint) → n) to what is
        stored: several processes add to the same minute at once."""
        if not counts:
            return
        rows = [
            {"minute": m, "zone": z, "profile": p, "endpoint": e, "count": n}
            for (m, z, p, e), n in counts.items()
        ]
        async with self._sessions.write() as session:
            await session.execute(_increment(session), rows)

    async def series(
        self, zone: str, profile: str, since: int
    ) -> dict[int, dict[str, int]]:
        """minute → {endpoint ("" for the queries): count}, from `since` on."""
        async with self._sessions.read() as session:
            rows = await session.execute(
                select(TrafficRow.minute, TrafficRow.endpoint, TrafficRow.count).where(
                    TrafficRow.zone == zone,
                    TrafficRow.profile == profile,
                    TrafficRow.minute >= since,
                )
            )
            found: dict[int, dict[str, int]] = {}
            for minute, endpoint, count in rows:
                found.setdefault(int(minute), {})[endpoint] = int(count)
            return found

    async def prune(self, before: int) -> int:
        async with self._sessions.write() as session:
            result = await session.execute(
                delete(TrafficRow).where(TrafficRow.minute < before)
            )
            return int(getattr(result, "rowcount", 0) or 0)


def _increment(session: AsyncSession) -> Any:
    """INSERT … ON CONFLICT DO UPDATE count = count + the new one: the same
    statement in both dialects' words."""
    dialect: Mapping[str, Any] = {"sqlite": sqlite, "postgresql": postgresql}
    insert = dialect[session.get_bind().dialect.name].insert
    statement = insert(TrafficRow)
    return statement.on_conflict_do_update(
        index_elements=["minute", "zone", "profile", "endpoint"],
        set_={"count": TrafficRow.count + statement.excluded.count},
    )
