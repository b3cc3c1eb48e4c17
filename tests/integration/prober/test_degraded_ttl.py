"""The degraded TTL as a resolver sees it: dig reads the answer's TTL drop
while an endpoint is down and come back once it recovers."""

from __future__ import annotations

import asyncio
import shutil
import subprocess

import pytest

from tests.support.listeners import listening
from tests.support.ports import free_port
from tests.support.tmdns import Tmdns

pytestmark = pytest.mark.postgres


async def dig_ttl(tm: Tmdns, name: str) -> tuple[int, str]:
    """(TTL, address) of the first answer, read from dig's own output; (0, "")
    while there is none."""
    if shutil.which("dig") is None:
        pytest.fail("dig (Debian dnsutils) is not installed")
    result = await asyncio.to_thread(
        subprocess.run,
        [
            "dig",
            "@127.0.0.1",
            "-p",
            str(tm.run.dns_port),
            "+noall",
            "+answer",
            "+time=2",
            "+tries=1",
            name,
            "A",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = result.stdout.splitlines()
    if not lines:
        return 0, ""  # not answered yet
    _owner, ttl, _class, _type, address = lines[0].split()
    return int(ttl), address


async def test_dig_sees_the_degraded_ttl_while_an_endpoint_is_down(tm: Tmdns) -> None:
    up, down = free_port(), free_port()
    async with listening(up):
        await tm.ok("POST", "/zones", {"name": "tm.example", "ns": ["ns.example.net"]})
        monitor = {
            "protocol": "tcp",
            "interval": 1,
            "timeout": 0.5,
            "tolerated_failures": 0,
        }
        await tm.ok(
            "POST",
            "/zones/tm.example/profiles",
            {
                "name": "sip",
                "method": "priority",
                "ttl": 60,
                "ttl_degraded": 10,
                "monitor": monitor,
                "endpoints": [
                    {"name": "a", "address": "127.0.0.1", "monitor": {"port": up}},
                    {
                        "name": "b",
                        "address": "127.0.0.2",
                        "monitor": {"port": down, "address": "127.0.0.1"},
                    },
                ],
            },
        )

        async def degraded() -> bool:
            return await dig_ttl(tm, "sip.tm.example.") == (10, "127.0.0.1")

        await tm.wait_for(degraded, limit=3)
        async with listening(down):

            async def recovered() -> bool:
                return await dig_ttl(tm, "sip.tm.example.") == (60, "127.0.0.1")

            await tm.wait_for(recovered, limit=3)
