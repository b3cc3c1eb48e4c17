"""The API listener against slow and greedy clients, over real sockets: partial
headers and stalled bodies are closed within the read timeout, idle keep-alive
connections within the keep-alive timeout, and one address cannot hold more
than its share of connections, while other clients are served throughout."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from tests.support.tmdns import TOKEN, Tmdns, started_tmdns


@contextlib.asynccontextmanager
async def api(tmp_path: Path, **api_settings: Any) -> AsyncIterator[Tmdns]:
    settings = {"api": {"listen": "127.0.0.1:0", **api_settings}}
    async with started_tmdns(f"sqlite:///{tmp_path}/t.db", **settings) as tm:
        yield tm


Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


async def _open(port: int, source: str, first: bytes) -> Connection:
    reader, writer = await asyncio.open_connection(
        "127.0.0.1", port, local_addr=(source, 0)
    )
    writer.write(first)
    await writer.drain()
    return reader, writer


def _close(connections: list[Connection]) -> None:
    for _, writer in connections:
        writer.close()


async def _closed_within(reader: asyncio.StreamReader, limit: float) -> bytes:
    """What the server sent before it closed the connection (within `limit`)."""
    return await asyncio.wait_for(reader.read(), limit)


async def test_partial_headers_are_closed_within_the_read_timeout(
    tmp_path: Path,
) -> None:
    async with api(tmp_path, read_timeout=1.0, max_connections_per_client=1000) as tm:
        port = tm.run.api_port
        started = time.monotonic()
        opened = await asyncio.gather(
            *(
                _open(port, "127.0.0.2", b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
                for _ in range(300)
            )
        )
        try:
            # Meanwhile another client is served.
            assert (await tm.call("GET", "/zones"))[0] == 200
            sent = await asyncio.gather(*(_closed_within(r, 5) for r, _ in opened))
            assert 0.9 <= time.monotonic() - started < 4
            assert set(sent) == {b""}  # closed, with nothing to answer
        finally:
            _close(opened)


async def test_a_stalled_body_gets_408_within_the_read_timeout(tmp_path: Path) -> None:
    async with api(tmp_path, read_timeout=1.0) as tm:
        head = (
            "POST /api/v1/zones HTTP/1.1\r\nHost: x\r\n"
            f"Authorization: Bearer {TOKEN}\r\n"
            "Content-Type: application/json\r\nContent-Length: 200\r\n\r\n{"
        )
        started = time.monotonic()
        reader, writer = await _open(tm.run.api_port, "127.0.0.2", head.encode())
        answer = await _closed_within(reader, 5)
        writer.close()
        assert 0.9 <= time.monotonic() - started < 4
        assert answer.startswith(b"HTTP/1.1 408"), answer
        assert b'"request_timeout"' in answer
        assert await tm.ok("GET", "/zones") == []  # nothing was written


async def test_an_idle_keep_alive_connection_is_closed(tmp_path: Path) -> None:
    async with api(tmp_path, keepalive_timeout=1.0) as tm:
        request = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
        reader, writer = await _open(tm.run.api_port, "127.0.0.2", request)
        started = time.monotonic()
        answer = await _closed_within(reader, 5)
        writer.close()
        assert answer.startswith(b"HTTP/1.1 200")
        assert 0.8 <= time.monotonic() - started < 4


async def test_one_address_holds_at_most_its_share(tmp_path: Path) -> None:
    async with api(tmp_path, max_connections_per_client=8) as tm:
        port = tm.run.api_port
        opened = [
            await _open(port, "127.0.0.2", b"GET /healthz HTTP/1.1\r\n")
            for _ in range(20)
        ]
        try:
            await asyncio.sleep(0.3)
            closed = [await _eof_soon(r) for r, _ in opened]  # 0.1 s each at most
            assert closed == [False] * 8 + [True] * 12
            assert (await tm.call("GET", "/zones"))[0] == 200  # others are served
        finally:
            _close(opened)


async def _eof_soon(reader: asyncio.StreamReader) -> bool:
    try:
        return await asyncio.wait_for(reader.read(), 0.1) == b""
    except TimeoutError:
        return False
