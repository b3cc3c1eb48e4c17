"""Fixtures for end-to-end tests: a running tmdns, Unbound delegating to it, and
Debian's Chromium for the pages tmdns serves."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.conftest import require
from tests.support.tmdns import Tmdns, started_tmdns
from tests.support.unbound import Unbound, started_unbound

if TYPE_CHECKING:
    from playwright.async_api import Browser

CHROMIUM = Path("/usr/bin/chromium")
# The machines have no internet: Chromium must not try to reach Google either.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


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


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    """Headless Chromium (Debian's package, not a downloaded build)."""
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        require("the Python package playwright is not installed")
    if not CHROMIUM.exists():
        require(f"Chromium is not installed at {CHROMIUM} (Debian chromium)")
    async with async_playwright() as pw:
        launched = await pw.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        yield launched
        await launched.close()
