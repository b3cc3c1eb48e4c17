from collections.abc import AsyncIterator

import pytest

from tests.support.tmdns import Tmdns, started_tmdns


@pytest.fixture
async def tm(db_url: str) -> AsyncIterator[Tmdns]:
    async with started_tmdns(db_url) as running:
        yield running
