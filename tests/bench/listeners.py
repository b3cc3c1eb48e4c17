"""Loopback listeners for the probe benchmark: TCP ports that accept and close,
and HTTP ports that answer 200. Run as its own process, pinned to its own core."""

from __future__ import annotations

import asyncio
import sys

from aiohttp import web


async def main(tcp_ports: list[int], http_ports: list[int]) -> None:
    async def close(
        _reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        writer.close()

    async def ok(_request: web.Request) -> web.Response:
        return web.Response(text="ok")

    servers = [
        await asyncio.start_server(close, "127.0.0.1", p, backlog=4096)
        for p in tcp_ports
    ]
    app = web.Application()
    app.router.add_get("/health", ok)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    for port in http_ports:
        await web.TCPSite(runner, "127.0.0.1", port, backlog=4096).start()
    print("ready", flush=True)
    await asyncio.Event().wait()
    del servers


if __name__ == "__main__":
    half = sys.argv[1:]
    count = len(half) // 2
    asyncio.run(main([int(p) for p in half[:count]], [int(p) for p in half[count:]]))
