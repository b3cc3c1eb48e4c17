"""Every revision on a real database of each engine: upgrade, compare, downgrade."""

import asyncio

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect, text

from app.store import migrate
from app.store.engine import make_engine
from app.store.tables import Base

pytestmark = pytest.mark.postgres


async def schema_differences(url: str) -> list[object]:
    engine = make_engine(url)
    try:
        async with engine.connect() as connection:
            return await connection.run_sync(
                lambda sync: compare_metadata(
                    MigrationContext.configure(sync, opts={"compare_type": True}),
                    Base.metadata,
                )
            )
    finally:
        await engine.dispose()


async def table_names(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        async with engine.connect() as connection:
            return set(
                await connection.run_sync(lambda s: inspect(s).get_table_names())
            )
    finally:
        await engine.dispose()


async def test_upgrade_head_creates_a_schema_identical_to_the_models(
    db_url: str,
) -> None:
    await asyncio.to_thread(migrate.upgrade, db_url)
    assert await schema_differences(db_url) == []
    assert {
        "zone",
        "profile",
        "endpoint",
        "endpoint_health",
        "health_transition",
        "audit",
        "meta",
    } <= await table_names(db_url)


async def test_the_generation_starts_at_one(db_url: str) -> None:
    await asyncio.to_thread(migrate.upgrade, db_url)
    engine = make_engine(db_url)
    try:
        async with engine.connect() as connection:
            assert (await connection.scalar(text("SELECT generation FROM meta"))) == 1
    finally:
        await engine.dispose()


async def test_downgrade_to_base_removes_every_table(db_url: str) -> None:
    await asyncio.to_thread(migrate.upgrade, db_url)
    await asyncio.to_thread(migrate.downgrade, db_url, "base")
    assert await table_names(db_url) <= {"alembic_version"}
