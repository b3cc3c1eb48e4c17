import asyncio
from collections.abc import AsyncIterator

import pytest

from app.store import SqlStore, migrate


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[SqlStore]:
    await asyncio.to_thread(migrate.upgrade, db_url)
    async with SqlStore.open(db_url) as opened:
        yield opened
