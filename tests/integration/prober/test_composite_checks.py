"""Composite monitors against real servers: SIP OPTIONS to Kamailio beside HTTP
to an aiohttp site, combined with require all / any, and an inverted check.
The monitors are written as the API takes them, so the path from the JSON to
the probes the prober runs is the one a user's request takes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from aiohttp import web

from app.domain.health import Verdict
from app.prober.checks import ProbeKit, run_probe
from app.prober.worker import _profile_targets
from app.schemas import ProfileIn, from_json
from tests.support.kamailio import Kamailio
from tests.support.listeners import serving
from tests.support.ports import free_port

pytestmark = pytest.mark.sip


@dataclass
class Site:
    status: int = 200
    port: int = 0


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    state = Site()

    async def handler(_request: web.Request) -> web.Response:
        return web.Response(status=state.status, text="ok")

    app = web.Application()
    app.router.add_get("/{tail:.*}", handler)
    async with serving(app) as state.port:
        yield state


@pytest.fixture
async def kit() -> AsyncIterator[ProbeKit]:
    tools = ProbeKit(8)
    yield tools
    await tools.close()


async def probed(monitor: dict[str, Any], kit: ProbeKit) -> Verdict:
    """The verdict of the one endpoint of a profile with this monitor."""
    body = {
        "name": "sbc",
        "method": "priority",
        "monitor": {"interval": 5, "timeout": 2, **monitor},
        "endpoints": [{"name": "a", "address": "127.0.0.1"}],
    }
    profile = from_json(ProfileIn, body).to_domain("tm.example.")
    [target] = _profile_targets("tm.example.", profile).values()
    return await run_probe(target.probe, kit)


def sip_and_http(kamailio: Kamailio, site: Site, require: str) -> dict[str, Any]:
    return {
        "checks": [
            {"protocol": "sip-udp", "port": kamailio.udp_port},
            {"protocol": "http", "port": site.port, "path": "/health"},
        ],
        "require": require,
    }


async def test_all_needs_both_and_names_the_one_that_failed(
    kamailio: Kamailio, site: Site, kit: ProbeKit
) -> None:
    both = await probed(sip_and_http(kamailio, site, "all"), kit)
    assert both.ok
    assert both.reason.startswith("2 of 2 checks up (all required): sip-udp ")
    assert f"http {site.port}: HTTP 200 OK in " in both.reason
    site.status = 503
    one = await probed(sip_and_http(kamailio, site, "all"), kit)
    assert not one.ok and one.outcome == "status"
    assert one.reason.startswith("1 of 2 checks up (all required): ")
    assert "SIP 200 OK" in one.reason and "HTTP 503 Service Unavailable" in one.reason


async def test_any_is_up_while_one_check_is(
    kamailio: Kamailio, site: Site, kit: ProbeKit
) -> None:
    site.status = 503
    verdict = await probed(sip_and_http(kamailio, site, "any"), kit)
    assert verdict.ok and verdict.reason.startswith("1 of 2 checks up (1 required)")
    closed = free_port()
    both_down = {
        "checks": [
            {"protocol": "http", "port": site.port},
            {"protocol": "tcp", "port": closed},
        ],
        "require": "any",
    }
    assert not (await probed(both_down, kit)).ok


async def test_an_inverted_check_is_up_when_its_check_fails(
    site: Site, kit: ProbeKit
) -> None:
    """A maintenance flag: the endpoint is up while the flag port is closed."""
    flag = free_port()
    inverted = await probed({"protocol": "tcp", "port": flag, "invert": True}, kit)
    assert inverted.ok and inverted.reason == "inverted: connection refused"
    healthy_site = await probed(
        {"protocol": "http", "port": site.port, "invert": True}, kit
    )
    assert not healthy_site.ok and healthy_site.outcome == "inverted"
    assert healthy_site.reason.startswith("inverted: HTTP 200 OK in ")
