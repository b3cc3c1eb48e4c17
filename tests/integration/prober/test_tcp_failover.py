"""A real TCP listener on loopback, probed by tmdns; failover seen through DNS."""

import time

import pytest

from tests.support.listeners import listening
from tests.support.ports import free_port
from tests.support.tmdns import Tmdns

pytestmark = pytest.mark.postgres
INTERVAL, TOLERATED = 1.0, 1


async def setup_profile(tm: Tmdns, port: int) -> None:
    await tm.ok("POST", "/zones", {"name": "tm.example", "ns": ["ns.example.net"]})
    await tm.ok(
        "POST",
        "/zones/tm.example/profiles",
        {
            "name": "sip",
            "method": "priority",
            "monitor": {
                "protocol": "tcp",
                "port": port,
                "interval": INTERVAL,
                "timeout": 0.5,
                "tolerated_failures": TOLERATED,
            },
            "endpoints": [
                {"name": "primary", "address": "127.0.0.1"},
                # The secondary is probed on its own port, where a listener always runs.
                {
                    "name": "secondary",
                    "address": "127.0.0.2",
                    "monitor": {"protocol": "none"},
                },
            ],
        },
    )


async def test_a_closed_port_fails_over_after_the_tolerance_and_comes_back(
    tm: Tmdns,
) -> None:
    port = free_port()
    async with listening(port):
        await setup_profile(tm, port)
        # Probed within 1 s of creation, and found up.
        await tm.wait_for(lambda: _state(tm, "primary", "online"), limit=2.0)
        assert await tm.addresses("sip.tm.example.") == ["127.0.0.1"]
    closed_at = time.monotonic()
    await tm.wait_for(
        lambda: _answers(tm, ["127.0.0.2"]), limit=INTERVAL * (TOLERATED + 1) + 1.0
    )
    took = time.monotonic() - closed_at
    # One failed probe is tolerated: the answer cannot move before the second one.
    assert took > INTERVAL * TOLERATED * 0.85
    endpoint = await tm.ok("GET", "/zones/tm.example/profiles/sip/endpoints/primary")
    assert endpoint["state"] == "offline"

    async with listening(port):
        await tm.wait_for(lambda: _answers(tm, ["127.0.0.1"]), limit=INTERVAL + 1.0)


async def _answers(tm: Tmdns, expected: list[str]) -> bool:
    return await tm.addresses("sip.tm.example.") == expected


async def _state(tm: Tmdns, endpoint: str, state: str) -> bool:
    body = await tm.ok("GET", f"/zones/tm.example/profiles/sip/endpoints/{endpoint}")
    return bool(body["state"] == state)


async def test_a_monitor_change_is_probed_within_a_second_not_at_the_old_turn(
    tm: Tmdns,
) -> None:
    """A 30 s interval, the wrong port, then the right one: the fixed check
    runs at once instead of up to 30 s later."""
    closed, open_port = free_port(), free_port()
    monitor = {"protocol": "tcp", "port": closed, "interval": 30, "timeout": 0.5}
    await tm.ok("POST", "/zones", {"name": "tm.example", "ns": ["ns.example.net"]})
    await tm.ok(
        "POST",
        "/zones/tm.example/profiles",
        {
            "name": "sip",
            "method": "priority",
            "monitor": {**monitor, "tolerated_failures": 0},
            "endpoints": [{"name": "primary", "address": "127.0.0.1"}],
        },
    )
    await tm.wait_for(lambda: _state(tm, "primary", "offline"), limit=2.0)
    async with listening(open_port):
        fixed = {"monitor": {**monitor, "tolerated_failures": 0, "port": open_port}}
        await tm.ok("PATCH", "/zones/tm.example/profiles/sip", fixed)
        await tm.wait_for(lambda: _state(tm, "primary", "online"), limit=2.0)
