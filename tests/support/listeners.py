"""TCP and HTTP listeners on 127.0.0.1 that stand in for a live service in
probe tests."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from aiohttp import web

from tests.support.ports import free_port


@contextlib.asynccontextmanager
async def listening(port: int) -> AsyncIterator[None]:
    """Accepts and hangs up: what a TCP probe sees of a live service. Closing it
    makes the port refuse connections, as a stopped service does."""

    async def hang_up(
        _reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        writer.close()

    server = await asyncio.start_server(hang_up, "127.0.0.1", port, reuse_address=True)
    try:
        yield
    finally:
        server.close()
        await server.wait_closed()


@contextlib.asynccontextmanager
async def serving(app: web.Application) -> AsyncIterator[int]:
    """An aiohttp application on a free port of 127.0.0.1: what an HTTP probe
    talks to. Yields the port."""
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield port
    finally:
        await runner.cleanup()
