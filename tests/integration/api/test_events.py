"""GET /api/v1/events: a real stream read as a browser's EventSource would,
over a running tmdns (API, DNS and prober) probing a real TCP listener."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import aiohttp

from tests.support.sample import ZONE
from tests.support.tmdns import TOKEN, Tmdns, started_tmdns

PROFILES = "/zones/tm.example./profiles"


class Stream:
    """One open event stream, parsed into (id, event, data) as they come."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self.response = response
        self.seen: list[tuple[int | None, str, dict[str, Any]]] = []

    async def next(self, limit: float = 10.0) -> tuple[int | None, str, dict[str, Any]]:
        fields: dict[str, str] = {}
        async with asyncio.timeout(limit):
            while True:
                line = (await self.response.content.readline()).decode().rstrip("\n")
                if line:
                    name, _, value = line.partition(": ")
                    fields[name] = value
                    continue
                if "event" in fields:
                    ident = int(fields["id"]) if "id" in fields else None
                    got = (ident, fields["event"], json.loads(fields["data"]))
                    self.seen.append(got)
                    return got
                fields = {}  # a retry line, a keepalive comment

    async def until(self, kind: str, limit: float = 10.0) -> dict[str, Any]:
        deadline = time.monotonic() + limit
        while True:
            _, event, data = await self.next(max(0.1, deadline - time.monotonic()))
            if event == kind:
                return data


async def open_stream(tm: Tmdns, **headers: str) -> Stream:
    response = await tm.http.get(
        tm.base + "/events",
        headers={"Authorization": f"Bearer {TOKEN}", **headers},
        timeout=aiohttp.ClientTimeout(total=None, sock_read=30),
    )
    assert response.status == 200
    assert response.headers["Content-Type"] == "text/event-stream"
    return Stream(response)


async def test_changes_and_health_transitions_arrive_in_order_and_resume(
    tm: Tmdns,
) -> None:
    stream = await open_stream(tm)
    await tm.ok("POST", "/zones", ZONE)
    created = await stream.until("config")
    assert created["subject"] == "tm.example."
    assert created["data"] == {"action": "zone.create", "actor": "bootstrap"}

    # An endpoint whose listener answers, then goes away: online, then offline.
    server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    monitor = {"protocol": "tcp", "port": port, "interval": 1, "timeout": 0.5}
    body = {
        "name": "app",
        "method": "priority",
        "monitor": monitor | {"tolerated_failures": 0},
        "endpoints": [{"name": "a", "address": "127.0.0.1"}],
    }
    await tm.ok("POST", PROFILES, body)
    online = await stream.until("health")
    assert (online["subject"], online["data"]["to"]) == ("tm.example./app/a", "online")
    assert online["data"]["from"] == "checking"
    server.close()
    await server.wait_closed()
    offline = await stream.until("health")
    assert (offline["data"]["from"], offline["data"]["to"]) == ("online", "offline")
    assert "refused" in offline["data"]["reason"]
    ids = [i for i, _, _ in stream.seen if i is not None]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    stream.response.close()

    # A client back after a break names the last event it saw, and gets
    # every event after it, none twice.
    await tm.ok("PATCH", f"{PROFILES}/app", {"ttl": 30})
    again = await open_stream(tm, **{"Last-Event-ID": str(online["id"])})
    replayed = [await again.next() for _ in range(3)]
    assert [e for _, e, _ in replayed] == ["vantage_health", "health", "config"]
    assert replayed[1][0] == offline["id"]
    assert replayed[2][2]["data"]["action"] == "profile.update"
    again.response.close()


async def test_a_bad_last_event_id_is_refused_and_the_stream_needs_a_token(
    tm: Tmdns,
) -> None:
    status, body = await tm.call("GET", "/events?last_event_id=yesterday")
    assert status == 422 and "Last-Event-ID" in body["error"]["message"]
    async with tm.http.get(tm.base + "/events") as response:
        assert response.status == 401


async def test_stopping_the_server_ends_open_streams_at_once(tmp_path: Path) -> None:
    async with started_tmdns(f"sqlite:///{tmp_path}/tmdns.db") as tm:
        stream = await open_stream(tm)
        await tm.ok("POST", "/zones", ZONE)
        await stream.until("config")
        opened = time.monotonic()
    stream.response.close()
    assert time.monotonic() - opened < 3.0, "a stream held the shutdown"
