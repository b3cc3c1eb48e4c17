"""The latency table that performance routing measures regions by: uploaded
and replaced as one set."""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.domain.model import LatencyRows
from app.store.sessions import Sessions
from app.store.tables import LatencyRow


async def latency_rows(session: AsyncSession) -> LatencyRows:
    rows = await session.scalars(select(LatencyRow).order_by(LatencyRow.id))
    return tuple((r.network, dict(r.rtt_ms)) for r in rows)


async def replace_rows(session: AsyncSession, rows: LatencyRows) -> LatencyRows:
    """Swap the whole table in this transaction; returns what it held."""
    before = await latency_rows(session)
    await session.execute(delete(LatencyRow))
    session.add_all(LatencyRow(network=n, rtt_ms=dict(rtt)) for n, rtt in rows)
    return before


class Latency:
    def __init__(self, sessions: Sessions) -> None:
        self._sessions = sessions

    async def get_latency(self) -> LatencyRows:
        async with self._sessions.read() as session:
            return await latency_rows(session)

    async def replace_latency(self, rows: LatencyRows, *, actor: str) -> LatencyRows:
        """The whole table at once: measurements are uploaded as a set."""
        async with self._sessions.write() as session:
            old = await replace_rows(session, rows)
            self._sessions.audit(
                session, actor, "latency.replace", "latency", list(old), list(rows)
            )
            await self._sessions.bump(session)
        return rows
