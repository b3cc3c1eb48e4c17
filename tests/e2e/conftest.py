"""Fixtures for end-to-end tests: a running tmdns, and Unbound delegating to it."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.tmdns import Tmdns, started_tmdns
from tests.support.unbound import Unbound, started_unbound


@pytest.fixture
async def tm(tmp_path: Path) -> AsyncIterator[Tmdns]:
    """A running tmdns (every role) on an SQLite file."""
    async with started_tmdns(f"sqlite:///{tmp_path}/tmdns.db") as running:
        yield running


@pytest.fixture
async def unbound(tm: Tmdns) -> AsyncIterator[Unbound]:
    """Unbound with the stub zone tm.example. at tmdns's DNS port (known only
    once tmdns runs, so tmdns starts first)."""
    async with started_unbound(tm.run.dns_port, "tm.example.") as resolver:
        yield resolver
