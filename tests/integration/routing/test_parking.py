"""Parking failback through DNS: two tmdns instances on one database agree on
the endpoint in use, and a restarted instance still knows it."""

import asyncio
import contextlib
from pathlib import Path

from tests.support.listeners import listening
from tests.support.ports import free_port
from tests.support.tmdns import Tmdns, started_tmdns

NAME = "park.tm.example."


async def answers(tm: Tmdns, expected: str) -> bool:
    return await tm.addresses(NAME) == [expected]


async def test_parking_is_shared_by_instances_and_survives_a_restart(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path}/shared.db"
    port = free_port()
    async with contextlib.AsyncExitStack() as stack:
        probed = await stack.enter_async_context(contextlib.AsyncExitStack())
        await probed.enter_async_context(listening(port))
        first = await stack.enter_async_context(started_tmdns(url))
        await first.ok(
            "POST", "/zones", {"name": "tm.example", "ns": ["ns.example.net"]}
        )
        await first.ok(
            "POST",
            "/zones/tm.example/profiles",
            {
                "name": "park",
                "method": "priority",
                "failback": "parking",
                "monitor": {
                    "protocol": "tcp",
                    "port": port,
                    "interval": 1,
                    "timeout": 0.5,
                    "tolerated_failures": 0,
                },
                "endpoints": [
                    {"name": "primary", "address": "127.0.0.1"},
                    {
                        "name": "secondary",
                        "address": "127.0.0.2",
                        "monitor": {"protocol": "none"},
                    },
                ],
            },
        )
        second = await stack.enter_async_context(started_tmdns(url, role="dns"))
        await first.wait_for(lambda: _state(first, "online"), limit=3.0)
        for tm in (first, second):
            await tm.wait_for(lambda tm=tm: answers(tm, "127.0.0.1"), limit=1.0)

        await probed.aclose()  # the primary stops listening: it fails, we park
        await first.wait_for(lambda: _state(first, "offline"), limit=3.0)
        for tm in (first, second):
            await tm.wait_for(lambda tm=tm: answers(tm, "127.0.0.2"), limit=1.0)

        async with listening(port):  # the primary is back: parking stays put
            await first.wait_for(lambda: _state(first, "online"), limit=3.0)
            await asyncio.sleep(0.5)  # several snapshot refreshes
            for tm in (first, second):
                assert await answers(tm, "127.0.0.2")
    async with started_tmdns(url, role="dns") as restarted:
        assert await answers(restarted, "127.0.0.2")


async def _state(tm: Tmdns, state: str) -> bool:
    body = await tm.ok("GET", "/zones/tm.example/profiles/park/endpoints/primary")
    return bool(body["state"] == state)
