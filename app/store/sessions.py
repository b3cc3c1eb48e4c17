"""Sessions: the engine, its sessions and the transaction rules every
repository of the store shares. A write is one transaction that also writes
an audit row and moves the generation, so a failed write leaves the database
as it was."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from contextvars import ContextVar
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from app.domain.overrides import override_changes
from app.domain.plain import plain
from app.store.base import Conflict, StoreUnavailable
from app.store.events import override_data, record
from app.store.failures import is_unavailable, is_unmigrated
from app.store.mapping import from_epoch, to_epoch
from app.store.tables import AuditRow, MetaRow

# Per task, not shared: each API request runs in its own task and reads back
# the generation its own write produced.
_written: ContextVar[int | None] = ContextVar("tmdns_written_generation", default=None)

NOT_MIGRATED = "the database is not migrated (run `tmdns migrate`)"


class Sessions:
    """Shared by the repositories, passed in rather than inherited, so each
    repository says in its constructor what it stands on."""

    def __init__(
        self, engine: AsyncEngine, clock: Callable[[], float] = time.time
    ) -> None:
        self.engine = engine
        self.clock = clock
        self._sessions = async_sessionmaker(engine, expire_on_commit=False)
        # SQLite allows one writer; queue writers here rather than on the file lock.
        self._write_lock = asyncio.Lock() if engine.dialect.name == "sqlite" else None

    @contextlib.asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncSession]:
        async with _translated(), self._sessions() as session:
            yield session

    @contextlib.asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncSession]:
        lock = self._write_lock or contextlib.nullcontext()
        async with _translated(), lock, self._sessions.begin() as session:
            yield session

    async def bump(self, session: AsyncSession) -> int:
        """The next generation, for this transaction. Writers queue on the one
        meta row until commit, so generations commit in order."""
        generation = await session.scalar(
            update(MetaRow)
            .values(generation=MetaRow.generation + 1)
            .returning(MetaRow.generation)
        )
        _written.set(generation)
        return int(generation or 0)

    def audit(
        self,
        session: AsyncSession,
        actor: str,
        action: str,
        resource: str,
        before: Any,
        after: Any,
    ) -> None:
        now = self.clock()
        session.add(
            AuditRow(
                at=from_epoch(now),
                actor=actor,
                action=action,
                resource=resource,
                before=plain(before),
                after=plain(after),
            )
        )
        record(session, now, "config", resource, {"action": action, "actor": actor})
        zone = resource.partition("/")[0]
        for told in override_changes(zone, before, after, now):
            subject = f"{zone}/{told.profile}/{told.endpoint}"
            record(session, now, "override", subject, override_data(told, actor))

    async def pulse(self) -> tuple[int, float | None]:
        """The generation and the prober's last heartbeat, in one cheap read."""
        async with self.read() as session:
            row = (
                await session.execute(
                    select(MetaRow.generation, MetaRow.prober_seen_at)
                )
            ).first()
        if row is None:
            raise StoreUnavailable(NOT_MIGRATED)
        return int(row[0]), to_epoch(row[1])


def written_generation() -> int | None:
    """The generation of the last change this task wrote: the snapshot that
    holds it. Per task (a ContextVar), so concurrent requests never see each
    other's numbers; note it only counts once the transaction committed."""
    return _written.get()


@contextlib.asynccontextmanager
async def _translated() -> AsyncIterator[None]:
    """Driver errors as the store's own: a conflict (the database's wording
    never reaches the API), or the database out of reach or not migrated, in
    one line without the driver's SQL or parameters."""
    try:
        yield
    except IntegrityError as exc:
        raise Conflict("the change conflicts with existing data") from exc
    except Exception as exc:
        if is_unmigrated(exc):
            raise StoreUnavailable(NOT_MIGRATED) from exc
        if not is_unavailable(exc):
            raise
        lines = str(exc).splitlines()
        raise StoreUnavailable(lines[0] if lines else type(exc).__name__) from exc
