"""The embedded SQLite database keeps its connections: the refresh polls five
times a second in every DNS process, and a connection per poll started and
stopped an aiosqlite thread each time. A kept connection must not hold a
lock that stops another process writing."""

from __future__ import annotations

import threading
from pathlib import Path

from sqlalchemy import text

from app.store.engine import make_engine


async def test_sessions_reuse_one_connection_and_its_thread(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path}/pool.db")
    threads_before = {t.ident for t in threading.enumerate()}
    try:
        seen = []  # kept alive, so no two can share an id()
        for _ in range(20):
            async with engine.connect() as conn:
                await conn.execute(text("SELECT 1"))
                seen.append((await conn.get_raw_connection()).driver_connection)
        started = {t.ident for t in threading.enumerate()} - threads_before
        assert len({id(c) for c in seen}) == 1
        assert len(started) == 1  # the one connection's thread, kept
    finally:
        await engine.dispose()


async def test_a_kept_connection_neither_blocks_nor_misses_another_writer(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path}/pool.db"
    reader, writer = make_engine(url), make_engine(url)
    try:
        async with writer.begin() as conn:
            await conn.execute(text("CREATE TABLE t (v INTEGER)"))
        async with reader.connect() as conn:  # read, then back to the pool
            assert (await conn.execute(text("SELECT count(*) FROM t"))).scalar() == 0
        async with writer.begin() as conn:
            await conn.execute(text("PRAGMA busy_timeout=100"))  # fail fast if held
            await conn.execute(text("INSERT INTO t VALUES (1)"))
        async with reader.connect() as conn:  # and the kept one sees the write
            assert (await conn.execute(text("SELECT count(*) FROM t"))).scalar() == 1
    finally:
        await reader.dispose()
        await writer.dispose()
