"""A real tmdns (every role) on loopback ports, with an HTTP client and a DNS client."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from random import Random
from typing import Any

import aiohttp
import dns.asyncquery
import dns.message
import dns.rcode

from app.runtime import Running, running
from app.settings import Settings
from app.store import SqlStore, migrate

TOKEN = "test-token-with-write-scope"


@dataclass
class Tmdns:
    run: Running
    http: aiohttp.ClientSession
    base: str

    async def call(
        self, method: str, path: str, body: Any = None, token: str | None = TOKEN
    ) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with self.http.request(
            method, self.base + path, json=body, headers=headers
        ) as response:
            payload = None if response.status == 204 else await response.json()
            return response.status, payload

    async def ok(self, method: str, path: str, body: Any = None) -> Any:
        status, payload = await self.call(method, path, body)
        assert status < 300, (status, payload)
        return payload

    async def query(
        self, name: str, rtype: str = "A", tcp: bool = False, **kw: Any
    ) -> dns.message.Message:
        q = dns.message.make_query(name, rtype, **kw)
        send = dns.asyncquery.tcp if tcp else dns.asyncquery.udp
        return await send(q, "127.0.0.1", port=self.run.dns_port, timeout=2)

    async def addresses(self, name: str, rtype: str = "A") -> list[str]:
        reply = await self.query(name, rtype)
        return sorted(rd.to_text() for rrset in reply.answer for rd in rrset)

    async def wait_for(
        self, check: Callable[[], Any], limit: float, every: float = 0.02
    ) -> float:
        """Poll until `check()` is truthy; return the seconds it took (≤ `limit`)."""
        started = time.monotonic()
        while not await check():
            elapsed = time.monotonic() - started
            assert elapsed < limit, f"not true within {limit} s"
            await asyncio.sleep(every)
        return time.monotonic() - started


def test_settings(db_url: str, **more: Any) -> Settings:
    given: dict[str, Any] = {
        "dns": {"listen": "127.0.0.1:0"},
        "api": {"listen": "127.0.0.1:0"},
        "db": {"url": db_url},
        "bootstrap_token": TOKEN,
    }
    return Settings(**(given | more))


@contextlib.asynccontextmanager
async def started_tmdns(
    db_url: str,
    seed: int = 1234,
    open_store: Callable[[str], AbstractAsyncContextManager[SqlStore]] = SqlStore.open,
    **settings: Any,
) -> AsyncIterator[Tmdns]:
    await asyncio.to_thread(migrate.upgrade, db_url)
    async with (
        running(
            test_settings(db_url, **settings), rng=Random(seed), open_store=open_store
        ) as run,
        aiohttp.ClientSession() as http,
    ):
        base = f"http://127.0.0.1:{run.api_port}/api/v1" if run.api_runner else ""
        yield Tmdns(run, http, base)
