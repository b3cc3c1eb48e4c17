"""Webhooks over a running tmdns: an aiohttp receiver on loopback gets signed
JSON POSTs, in order, retried while it fails; the log shows every try."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from tests.support.listeners import serving
from tests.support.sample import ZONE
from tests.support.tmdns import Tmdns, started_tmdns

SECRET = "a-secret-of-32-characters-length"


class Receiver:
    """Answers each POST with the next of `statuses` (then 200), keeping
    what it was sent."""

    def __init__(self, *statuses: int) -> None:
        self.statuses = list(statuses)
        self.got: list[tuple[dict[str, str], bytes]] = []
        self.arrived = asyncio.Event()

    async def handle(self, request: web.Request) -> web.Response:
        self.got.append((dict(request.headers), await request.read()))
        self.arrived.set()
        return web.Response(status=self.statuses.pop(0) if self.statuses else 200)

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(body) for _, body in self.got]

    async def wait_for(self, count: int, limit: float = 10.0) -> None:
        async with asyncio.timeout(limit):
            while len(self.got) < count:
                self.arrived.clear()
                await self.arrived.wait()


def app_of(receiver: Receiver) -> web.Application:
    app = web.Application()
    app.router.add_post("/hook", receiver.handle)
    return app


async def test_deliveries_are_signed_in_order_filtered_and_retried(tm: Tmdns) -> None:
    receiver = Receiver(503)  # the first try fails
    async with serving(app_of(receiver)) as port:
        hook = await tm.ok(
            "POST",
            "/webhooks",
            {
                "url": f"http://127.0.0.1:{port}/hook",
                "events": ["config"],
                "secret": SECRET,
            },
        )
        assert "secret" not in hook and hook["events"] == ["config"]
        await tm.ok("POST", "/zones", ZONE)
        # Its own creation (tried twice: 503, then 200), then the zone.
        await receiver.wait_for(3)
        bodies = receiver.bodies()
        assert [b["data"]["action"] for b in bodies] == [
            "webhook.create",
            "webhook.create",
            "zone.create",
        ]
        for headers, body in receiver.got:
            expected = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
            assert headers["X-Tmdns-Signature"] == f"sha256={expected}"
            assert headers["Content-Type"] == "application/json"
            assert headers["X-Tmdns-Event"] == "config"
        assert bodies[2]["subject"] == "tm.example."
        assert headers["X-Tmdns-Event-Id"] == str(bodies[2]["id"])

        path = f"/webhooks/{hook['id']}/deliveries"
        await tm.wait_for(lambda: _logged(tm, path, 3), limit=5.0)
        log = await tm.ok("GET", path)
        assert [(d["attempt"], d["status"], d["outcome"]) for d in log] == [
            (1, 200, "delivered"),
            (2, 200, "delivered"),
            (1, 503, "failed"),
        ]
        assert log[2]["error"] == "HTTP 503"

        # Deleted: nothing more arrives.
        status, _ = await tm.call("DELETE", f"/webhooks/{hook['id']}")
        assert status == 204
        await tm.ok("PATCH", "/zones/tm.example.", {"negative_ttl": 30})
        await asyncio.sleep(1.0)
        assert len(receiver.got) == 3
        status, _ = await tm.call("GET", f"/webhooks/{hook['id']}")
        assert status == 404


async def _logged(tm: Tmdns, path: str, count: int) -> bool:
    return len(await tm.ok("GET", path)) >= count


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"url": "ftp://127.0.0.1/hook", "secret": SECRET}, "url"),
        ({"url": "not a url", "secret": SECRET}, "url"),
        ({"url": "http://127.0.0.1/hook", "secret": "short"}, "secret"),
        (
            {"url": "http://127.0.0.1/hook", "secret": SECRET, "events": ["dns"]},
            "events.0",
        ),
        (
            {"url": "http://127.0.0.1/hook", "secret": SECRET, "events": []},
            "events",
        ),
    ],
)
async def test_a_bad_webhook_is_refused_naming_the_field_and_nothing_is_kept(
    tm: Tmdns, body: dict[str, Any], field: str
) -> None:
    status, problem = await tm.call("POST", "/webhooks", body)
    assert status == 422
    assert problem["error"]["details"][0]["field"] == field
    assert await tm.ok("GET", "/webhooks") == []


async def test_with_webhook_networks_set_only_addresses_inside_are_taken(
    tmp_path: Path,
) -> None:
    """TMDNS_API__WEBHOOK_NETWORKS: a host name is refused without being
    looked up, and so is an address outside."""
    url = f"sqlite:///{tmp_path}/tmdns.db"
    networks = {"listen": "127.0.0.1:0", "webhook_networks": ["127.0.0.0/8"]}
    async with started_tmdns(url, api=networks) as tm:
        for target in ("http://hooks.example.net/x", "http://192.0.2.7/x"):
            status, problem = await tm.call(
                "POST", "/webhooks", {"url": target, "secret": SECRET}
            )
            assert status == 422, target
            assert "127.0.0.0/8" in problem["error"]["message"]
        await tm.ok(
            "POST", "/webhooks", {"url": "http://127.0.0.9:9/x", "secret": SECRET}
        )
