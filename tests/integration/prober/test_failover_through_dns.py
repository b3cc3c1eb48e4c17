"""HTTP health checks end to end: a real aiohttp site flips to 503, DNS A and SRV
answers move within interval × (tolerated failures + 1) + 1 s, and the API,
the health history and /metrics say why."""

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from aiohttp import web

from tests.support.ports import free_port
from tests.support.tmdns import Tmdns

pytestmark = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
INTERVAL, TOLERATED = 1.0, 1
LIMIT = INTERVAL * (TOLERATED + 1) + 1.0


@dataclass
class Site:
    status: int = 200
    hits: int = 0
    port: int = 0


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    state = Site()

    async def handler(request: web.Request) -> web.Response:
        state.hits += 1
        return web.Response(status=state.status)

    app = web.Application()
    app.router.add_get("/health", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    state.port = free_port()
    await web.TCPSite(runner, "127.0.0.1", state.port).start()
    yield state
    await runner.cleanup()


async def setup(tm: Tmdns, site: Site) -> None:
    await tm.ok("POST", "/zones", {"name": "tm.example", "ns": ["ns.example.net"]})
    await tm.ok(
        "POST",
        "/zones/tm.example/profiles",
        {
            "name": "sip",
            "method": "priority",
            "monitor": {
                "protocol": "http",
                "port": site.port,
                "path": "/health",
                "interval": INTERVAL,
                "timeout": 0.5,
                "tolerated_failures": TOLERATED,
            },
            "srv": [{"service": "_sip._udp", "port": 5060}],
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


async def srv_targets(tm: Tmdns) -> list[str]:
    reply = await tm.query("_sip._udp.sip.tm.example.", "SRV")
    return sorted(r.target.to_text() for rrset in reply.answer for r in rrset)


async def test_503_fails_over_a_and_srv_and_says_why(tm: Tmdns, site: Site) -> None:
    created = time.monotonic()
    await setup(tm, site)
    await tm.wait_for(lambda: _hit(site), limit=1.5)
    assert time.monotonic() - created < 1.5  # a new endpoint is probed within 1 s
    await tm.wait_for(lambda: _state(tm, "online"), limit=1.0)

    site.status = 503
    flipped = time.monotonic()
    await tm.wait_for(lambda: _answers(tm, ["127.0.0.2"]), limit=LIMIT)
    await tm.wait_for(lambda: _srv_is(tm, ["secondary.sip.tm.example."]), limit=0.5)
    took = time.monotonic() - flipped
    assert took > INTERVAL * TOLERATED * 0.85  # one failure alone never moves traffic

    health = await tm.ok("GET", "/zones/tm.example/profiles/sip/health")
    primary = next(e for e in health["endpoints"] if e["name"] == "primary")
    assert primary["state"] == "offline" and not primary["stale"]
    assert primary["reason"].startswith("HTTP 503 Service Unavailable")
    assert [t["to"] for t in health["transitions"]][:2] == ["offline", "online"]

    metrics = await _metrics(tm)
    assert (
        'tmdns_probe_results_total{outcome="status",protocol="http",result="down"}'
        in (metrics)
    )
    assert (
        'tmdns_endpoint_state{endpoint="primary",profile="sip",state="offline",'
        'zone="tm.example."} 1.0'
    ) in metrics

    site.status = 200
    await tm.wait_for(lambda: _answers(tm, ["127.0.0.1"]), limit=INTERVAL + 1.0)
    assert await srv_targets(tm) == [
        "primary.sip.tm.example.",
        "secondary.sip.tm.example.",
    ]


async def test_deleting_an_endpoint_stops_its_probe_at_once(
    tm: Tmdns, site: Site
) -> None:
    await setup(tm, site)
    await tm.wait_for(lambda: _hit(site), limit=1.5)
    status, _ = await tm.call(
        "DELETE", "/zones/tm.example/profiles/sip/endpoints/primary"
    )
    assert status == 204
    await tm.wait_for(lambda: _no_primary(tm), limit=1.0)
    hits = site.hits
    await asyncio.sleep(2.5 * INTERVAL)
    assert site.hits == hits


async def _hit(site: Site) -> bool:
    return site.hits > 0


async def _state(tm: Tmdns, state: str) -> bool:
    body = await tm.ok("GET", "/zones/tm.example/profiles/sip/endpoints/primary")
    return bool(body["state"] == state)


async def _answers(tm: Tmdns, expected: list[str]) -> bool:
    return await tm.addresses("sip.tm.example.") == expected


async def _srv_is(tm: Tmdns, expected: list[str]) -> bool:
    return await srv_targets(tm) == expected


async def _no_primary(tm: Tmdns) -> bool:
    return await tm.addresses("sip.tm.example.") == ["127.0.0.2"]


async def _metrics(tm: Tmdns) -> str:
    url = tm.base.removesuffix("/api/v1") + "/metrics"
    async with tm.http.get(url) as response:
        assert response.status == 200
        return await response.text()
