"""make_engine(url): the async engine for SQLite (embedded) or PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

ASYNC_DRIVERS = {
    "sqlite": "sqlite+aiosqlite",
    "postgresql": "postgresql+asyncpg",
    "postgres": "postgresql+asyncpg",
}


def async_url(url: str) -> str:
    """Map plain `sqlite:///…` and `postgresql://…` to async drivers (DESIGN §6)."""
    parsed = make_url(url)
    driver = ASYNC_DRIVERS.get(parsed.drivername, parsed.drivername)
    return parsed.set(drivername=driver).render_as_string(hide_password=False)


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def sqlite_file(url: str) -> Path | None:
    """The file an SQLite URL names (None: another engine, or in memory)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (
        None,
        "",
        ":memory:",
    ):
        return None
    return Path(parsed.database)


def make_engine(url: str) -> AsyncEngine:
    """SQLite gets foreign keys, WAL and a busy timeout; PostgreSQL a small pool.

    SQLite connections are pooled too: aiosqlite runs each connection in a
    thread of its own, so opening one per session (the refresh polls five
    times a second in every process) started and stopped a thread and reran
    the pragmas each time: 0.6–1.3 % of a core per idle process. A pooled
    connection holds no transaction between sessions, so other processes'
    writes are not blocked. An in-memory database keeps NullPool: each of its
    connections is a database of its own."""
    full = async_url(url)
    if is_sqlite(full):
        pooling: dict[str, Any] = {} if sqlite_file(full) else {"poolclass": NullPool}
        engine = create_async_engine(full, connect_args={"timeout": 30}, **pooling)
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine
    return create_async_engine(full, pool_size=5, max_overflow=5, pool_pre_ping=True)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()
